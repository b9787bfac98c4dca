/**
 * Logs an operator can follow (issue 23): no repeated key in a JSON line (nested components
 * join), the state-change log's own logger name and level, the request log's "Completed
 * request" line at debug with Kafka's fields, and an embedded broker's "become leader" lines at
 * topic creation. The cluster side (leader moves of a kill) is in test/cluster/failover.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRootLogger } from '../../../src/server/logger.js';
import { StateChangeLog, STATE_CHANGE_LOGGER } from '../../../src/common/state-change-log.js';
import { Broker } from '../../../src/server/broker.js';
import { buildBrokerConfig } from '../../../src/server/config/index.js';
import { Connection } from '../../../src/client/connection.js';
import { Api } from '../../../src/client/apis.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { parseStrictJson, type LogLine } from '../../helpers/log-lines.js';

function jsonSink(level: string): { lines: string[]; logger: ReturnType<typeof createRootLogger> } {
  const lines: string[] = [];
  return { lines, logger: createRootLogger('json', level, (t) => lines.push(t)) };
}
const parsed = (lines: readonly string[]): LogLine[] => lines.map((l) => parseStrictJson(l) as LogLine);

test('the strict parser refuses a repeated key at any depth and reads what JSON.parse reads', () => {
  assert.throws(() => parseStrictJson('{"component":"a","component":"b"}'), /repeated key "component"/);
  assert.throws(() => parseStrictJson('{"x":[{"k":1,"k":2}]}'), /repeated key "k"/);
  const ok = '{"a":"x\\"y","b":[1,-2.5e3,true,null,{}],"c":{"d":"\\u00e9"}}';
  assert.deepEqual(parseStrictJson(ok), JSON.parse(ok));
  assert.throws(() => parseStrictJson('{"a":1} x'), /trailing/);
});

test('a child binding a key its parent binds: component joins ("a/b"), other keys take the child value, never twice in a line', () => {
  const { lines, logger } = jsonSink('info');
  const rm = logger.child({ name: 'fjord' }).child({ component: 'replica-manager' });
  const fetcher = rm.child({ component: 'replica-fetcher' }).child({ fetcher: 1 }).child({ fetcher: 2 });
  fetcher.info('fetching');
  rm.info('still replica-manager');
  const [a, b] = parsed(lines);
  assert.equal(a!.component, 'replica-manager/replica-fetcher');
  assert.equal(a!.fetcher, 2);
  assert.equal(a!.name, 'fjord');
  assert.equal(b!.component, 'replica-manager', 'the parent keeps its own binding');
  // The state-change and request loggers add a key the components do not bind.
  new StateChangeLog(fetcher, {}).isrChange('t', 0, 1, 3, [1, 2], [1], 5);
  const sc = parsed(lines)[2]!;
  assert.equal(sc.logger, STATE_CHANGE_LOGGER);
  assert.equal(sc.component, 'replica-manager/replica-fetcher');
});

test('the state-change log: its own level (FJORD_LOG_LEVEL_STATE_CHANGE), one line per change naming old and new leader, ISR, epoch and cause', () => {
  const { lines, logger } = jsonSink('warn');
  const quiet = new StateChangeLog(logger, {});
  quiet.leaderAndIsr('t', 0, { leader: 1, leaderEpoch: 4, isr: [1, 2] }, { leader: 2, leaderEpoch: 5, isr: [2] }, 'broker failure');
  assert.equal(lines.length, 0, 'at the parent level (warn) by default');
  assert.equal(quiet.counts.leaderChanges, 1, 'counted even when not written');
  const sc = new StateChangeLog(logger, { FJORD_LOG_LEVEL_STATE_CHANGE: 'info' });
  sc.leaderAndIsr('t', 0, { leader: 1, leaderEpoch: 4, isr: [1, 2] }, { leader: 2, leaderEpoch: 5, isr: [2] }, 'broker failure');
  sc.leaderAndIsr('t', 1, { leader: 2, leaderEpoch: 7, isr: [2, 1] }, { leader: 2, leaderEpoch: 8, isr: [2] }, 'broker failure');
  sc.leaderAndIsr('lonely', 0, { leader: 1, leaderEpoch: 0, isr: [1] }, { leader: -1, leaderEpoch: 1, isr: [1] }, 'broker failure');
  sc.partitionState('lonely', 0, 'OnlinePartition', 'OfflinePartition', 'broker failure');
  sc.partitionState('t', 0, 'OnlinePartition', 'OnlinePartition', 'broker failure');
  const got = parsed(lines);
  assert.deepEqual(
    got.map((l) => [l.msg, l.topic, l.partition, l.oldLeader, l.newLeader, l.oldIsr, l.newIsr, l.leaderEpoch, l.cause]),
    [
      ['leader election', 't', 0, 1, 2, [1, 2], [2], 5, 'broker failure'],
      ['ISR shrink', 't', 1, 2, 2, [2, 1], [2], 8, 'broker failure'],
      ['leader lost', 'lonely', 0, 1, -1, [1], [1], 1, 'broker failure'],
      ['partition offline', 'lonely', 0, undefined, undefined, undefined, undefined, -1, 'broker failure'],
    ],
  );
  assert.ok(got.every((l) => l.logger === STATE_CHANGE_LOGGER && l.level === 30));
  assert.deepEqual(sc.counts, { leaderChanges: 1, offline: 1, online: 0, isrChanges: 2 });
  const silent = jsonSink('silent');
  new StateChangeLog(silent.logger, { FJORD_LOG_LEVEL_STATE_CHANGE: 'info' }).partitionState('t', 0, 'OnlinePartition', 'OfflinePartition', 'broker failure');
  assert.equal(silent.lines.length, 0, 'a silent parent (tools, tests) stays silent');
});

test('an embedded broker: "become leader" state-change lines at topic creation; at debug a "Completed request" line with Kafka fields; every line strict JSON', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-logging-'));
  const { lines, logger } = jsonSink('debug');
  const broker = new Broker(
    buildBrokerConfig(new Map(Object.entries({ listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': dir, 'group.initial.rebalance.delay.ms': '0' }))),
    logger,
  );
  await broker.start();
  const port = broker.boundPorts().get('PLAINTEXT')!;
  const conn = await Connection.connect('127.0.0.1', port, { clientId: 'logging-test', connectTimeoutMs: 5000, requestTimeoutMs: 10_000 });
  try {
    const created = await conn.send(Api.CreateTopics, {
      timeoutMs: 10_000,
      topics: [{ name: 'logged', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
    });
    assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE);
    const all = parsed(lines);
    const leaders = all.filter((l) => l.logger === STATE_CHANGE_LOGGER && l.msg === 'become leader' && l.topic === 'logged');
    assert.deepEqual(leaders.map((l) => [l.partition, l.leader, l.isr]).sort(), [
      [0, 0, [0]],
      [1, 0, [0]],
    ]);
    const completed = all.filter((l) => l.logger === 'kafka.request.logger' && l.msg === 'Completed request' && l.api === 'CreateTopics');
    assert.equal(completed.length, 1, 'one line for the one CreateTopics');
    const c = completed[0]!;
    assert.equal(c.level, 20, 'at debug');
    assert.equal(c.clientId, 'logging-test');
    assert.equal(c.principal, 'User:ANONYMOUS');
    assert.equal(c.listener, 'PLAINTEXT');
    assert.equal(c.securityProtocol, 'PLAINTEXT');
    assert.match(String(c.clientAddress), /^127\.0\.0\.1:\d+$/);
    assert.equal(typeof c.apiVersion, 'number');
    assert.equal(typeof c.correlationId, 'number');
    assert.ok(typeof c.totalTimeMs === 'number' && c.totalTimeMs >= 0);
  } finally {
    conn.close();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
  // Every line, start to stop, parses strictly (parsed() throws on a repeated key).
  assert.ok(parsed(lines).length > 10);
});

test('the request log off (info): no "Completed request" line', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-logging-'));
  const { lines, logger } = jsonSink('info');
  const broker = new Broker(buildBrokerConfig(new Map(Object.entries({ listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': dir }))), logger);
  await broker.start();
  const conn = await Connection.connect('127.0.0.1', broker.boundPorts().get('PLAINTEXT')!, {
    clientId: 'x',
    connectTimeoutMs: 5000,
    requestTimeoutMs: 10_000,
  });
  try {
    await conn.send(Api.Metadata, { topics: [], allowAutoTopicCreation: false });
  } finally {
    conn.close();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
  assert.equal(parsed(lines).filter((l) => l.msg === 'Completed request').length, 0);
});

test("a log call's field that the logger binds: dropped when equal, kept as <key>_call when not", () => {
  const { lines, logger } = jsonSink('info');
  const f = logger.child({ component: 'replica-fetcher' }).child({ fetcher: 'ReplicaFetcher-0-1' });
  const fields = { fetcher: 'ReplicaFetcher-0-1', partition: 't-0' };
  f.info(fields, 'same value');
  f.warn({ fetcher: 'other', component: 'x' }, 'other values');
  f.info('no object');
  const [a, b, c] = parsed(lines);
  assert.deepEqual([a!.fetcher, a!.partition, a!.fetcher_call], ['ReplicaFetcher-0-1', 't-0', undefined]);
  assert.deepEqual([b!.fetcher, b!.fetcher_call, b!.component, b!.component_call], ['ReplicaFetcher-0-1', 'other', 'replica-fetcher', 'x']);
  assert.equal(c!.msg, 'no object');
  assert.deepEqual(fields, { fetcher: 'ReplicaFetcher-0-1', partition: 't-0' }, "the caller's object is not changed");
});
