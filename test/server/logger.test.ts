import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseLogFormat, createRootLogger, formatPrettyLine } from '../../src/server/logger.js';
import { run } from '../helpers/run.js';
import { nodeEntry } from '../helpers/built.js';

test('log format: FJORD_LOG_FORMAT wins; otherwise pretty on a terminal, JSON lines elsewhere', () => {
  assert.equal(chooseLogFormat({}, true), 'pretty');
  assert.equal(chooseLogFormat({}, false), 'json');
  assert.equal(chooseLogFormat({ FJORD_LOG_FORMAT: 'json' }, true), 'json');
  assert.equal(chooseLogFormat({ FJORD_LOG_FORMAT: 'PRETTY' }, false), 'pretty');
  assert.equal(chooseLogFormat({ FJORD_LOG_FORMAT: 'fancy' }, false), 'json', 'an unknown format falls back to the default');
});

test('a pretty line has time, level, origin, message and the other fields as key=value', () => {
  const line = JSON.stringify({
    level: 30,
    time: '2026-01-02T03:04:05.678Z',
    pid: 7,
    name: 'fjord',
    component: 'admin',
    topic: 'orders',
    partitions: 3,
    configs: { 'retention.ms': '1000' },
    note: 'two words',
    msg: 'created topic orders',
  });
  assert.equal(
    formatPrettyLine(line),
    '2026-01-02T03:04:05.678Z INFO  [fjord/admin] created topic orders topic=orders partitions=3 configs={"retention.ms":"1000"} note="two words"\n',
  );
  const withErr = formatPrettyLine(
    JSON.stringify({ level: 50, time: '2026-01-02T03:04:05.678Z', msg: 'boom', err: { type: 'Error', message: 'bad', stack: 'Error: bad\n    at x' } }),
  );
  assert.equal(withErr, '2026-01-02T03:04:05.678Z ERROR boom\n    Error: bad\n        at x\n');
  assert.equal(formatPrettyLine('not json'), 'not json\n');
});

test('the root logger writes pretty lines or JSON lines as chosen', () => {
  const pretty: string[] = [];
  createRootLogger('pretty', 'info', (t) => pretty.push(t))
    .child({ name: 'fjord' })
    .child({ component: 'group-coordinator' })
    .info({ group: 'g', generation: 2 }, 'rebalance of group g completed');
  assert.equal(pretty.length, 1);
  assert.match(pretty[0]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO  \[fjord\/group-coordinator\] rebalance of group g completed group=g generation=2\n$/);
  const json: string[] = [];
  createRootLogger('json', 'info', (t) => json.push(t)).info({ group: 'g' }, 'hello');
  const parsed = JSON.parse(json[0]!) as { level: number; msg: string; group: string };
  assert.deepEqual([parsed.level, parsed.msg, parsed.group], [30, 'hello', 'g']);
});

test('kafka-server-start (main): JSON lines when stdout is not a terminal, readable lines with FJORD_LOG_FORMAT=pretty', async () => {
  const missing = '/nonexistent/fjord-logger-test.properties';
  const env: NodeJS.ProcessEnv = { ...process.env, FJORD_LOG_LEVEL: 'info' };
  delete env.FJORD_LOG_FORMAT;
  const json = await run(process.execPath, [...nodeEntry('server/main'), missing], { env, timeoutMs: 60_000 });
  assert.notEqual(json.code, 0);
  const first = JSON.parse(json.stdout.split('\n')[0]!) as { msg: string; name: string };
  assert.deepEqual([first.name, first.msg], ['fjord', `loading configuration from ${missing}`]);

  const pretty = await run(process.execPath, [...nodeEntry('server/main'), missing], { env: { ...env, FJORD_LOG_FORMAT: 'pretty' }, timeoutMs: 60_000 });
  assert.notEqual(pretty.code, 0);
  assert.match(pretty.stdout.split('\n')[0]!, new RegExp(`^\\S+Z INFO  \\[fjord\\] loading configuration from ${missing}$`));
});
