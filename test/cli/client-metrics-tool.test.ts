/**
 * bin/kafka-client-metrics.sh and kafka-configs.sh --entity-type client-metrics as a user runs
 * them (child processes of the built tools, exit codes and output as Kafka 4.0's
 * ClientMetricsCommand and ConfigCommand), against one in-process broker: argument errors, a
 * subscription created, listed, described, altered through either tool, deleted; a value the
 * broker refuses. Needs `npx tsc -p tsconfig.json` first.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Admin } from '../../src/client/index.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { run } from '../helpers/run.js';

const TOOL = fileURLToPath(new URL('../../bin/kafka-client-metrics.sh', import.meta.url));
const CONFIGS = fileURLToPath(new URL('../../bin/kafka-configs.sh', import.meta.url));
const clientMetrics = (...args: string[]) => run(TOOL, args, { timeoutMs: 30_000 });
const configs = (...args: string[]) => run(CONFIGS, args, { timeoutMs: 30_000 });

let b: TestBroker;

/** The subscriptions the broker has, asked in-process (cheaper than another tool run). */
async function listed(): Promise<string[]> {
  const admin = new Admin({ bootstrapServers: b.bootstrap, enableMetricsPush: false });
  try {
    return await admin.listClientMetricsResources();
  } finally {
    await admin.close();
  }
}
before(async () => {
  b = await startTestBroker();
});
after(async () => {
  await b.stop();
});

test('--help exits 0; argument errors are one line on stderr with exit 1, as Kafka words them', async () => {
  const help = await clientMetrics('--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: kafka-client-metrics\.sh \[options\]/);
  assert.match(help.stdout, /--generate-name\s+Generate a UUID to use as the name\./);
  const bs = ['--bootstrap-server', b.bootstrap];
  const cases: [string[], RegExp][] = [
    [[...bs], /Command must include exactly one action: --alter, --delete, --describe or --list\./],
    [['--list'], /--bootstrap-server must be specified\./],
    [[...bs, '--alter', '--name', 'n', '--generate-name'], /One of --name or --generate-name must be specified with --alter\./],
    [[...bs, '--delete'], /A client metrics resource name must be specified with --delete\./],
    [[...bs, '--list', '--name', 'n'], /Option "--list" can't be used with option "--name"/],
    [[...bs, '--alter', '--name', 'n', '--interval', 'often'], /Cannot parse argument 'often' of option interval/],
  ];
  const results = await Promise.all(cases.map(([args]) => clientMetrics(...args)));
  cases.forEach(([args, message], i) => {
    const r = results[i]!;
    assert.equal(r.code, 1, args.join(' '));
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });
});

test('a subscription created, listed, described, altered through kafka-configs, deleted', async () => {
  const bs = ['--bootstrap-server', b.bootstrap];
  let r = await clientMetrics(
    ...bs,
    '--alter',
    '--name',
    'producers',
    '--metrics',
    'org.apache.kafka.producer.,org.apache.kafka.consumer.',
    '--interval',
    '1000',
    '--match',
    'client_id=app-.*',
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, 'Altered client metrics config for producers.\n');

  r = await clientMetrics(...bs, '--alter', '--generate-name', '--metrics', '*');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const generated = /^Altered client metrics config for ([0-9a-f-]{36})\.\n$/.exec(r.stdout)?.[1];
  assert.ok(generated, r.stdout);

  r = await clientMetrics(...bs, '--list');
  assert.equal(r.code, 0);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), [generated, 'producers'].sort());

  r = await clientMetrics(...bs, '--describe', '--name', 'producers');
  assert.equal(r.code, 0);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], 'Client metrics configs for producers are:');
  assert.deepEqual(lines.slice(1).sort(), [
    '  interval.ms=1000',
    '  match=client_id=app-.*',
    '  metrics=org.apache.kafka.producer.,org.apache.kafka.consumer.',
  ]);

  r = await clientMetrics(...bs, '--describe');
  assert.equal(r.code, 0);
  assert.match(r.stdout, new RegExp(`^Client metrics configs for ${generated} are:\n(  .*\n)*?  metrics=\\*\n`, 'm'));
  assert.match(r.stdout, /^Client metrics configs for producers are:$/m);

  // kafka-configs.sh sees and changes the same resource.
  const entity = ['--entity-type', 'client-metrics', '--entity-name', 'producers'];
  r = await configs(...bs, ...entity, '--alter', '--add-config', 'interval.ms=2000,metrics=[org.apache.kafka.producer.]');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, 'Completed updating config for client-metric producers.\n');
  r = await configs(...bs, ...entity, '--describe');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Dynamic configs for client-metric producers are:\n/);
  assert.match(r.stdout, /^ {2}interval\.ms=2000 sensitive=false synonyms=\{.*\}$/m);
  assert.match(r.stdout, /^ {2}metrics=org\.apache\.kafka\.producer\. sensitive=false/m);
  r = await configs(...bs, ...entity, '--alter', '--delete-config', 'match,nope');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Invalid config\(s\): nope/);
  r = await configs(...bs, ...entity, '--alter', '--delete-config', 'match');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Completed updating config for client-metric producers.\n');
  r = await configs(...bs, '--entity-type', 'client-metrics', '--describe');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Dynamic configs for client-metric producers are:$/m);
  assert.match(r.stdout, new RegExp(`^Dynamic configs for client-metric ${generated} are:$`, 'm'));
  assert.doesNotMatch(r.stdout, /match=/);

  r = await clientMetrics(...bs, '--delete', '--name', 'producers');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, 'Deleted client metrics config for producers.\n');
  assert.deepEqual(await listed(), [generated]);
});

test('a value the broker refuses: Kafka\'s "Error while executing client metrics command" line, exit 1', async () => {
  const r = await clientMetrics('--bootstrap-server', b.bootstrap, '--alter', '--name', 'bad', '--metrics', '*', '--match', 'no_such_selector=x');
  assert.equal(r.code, 1);
  assert.match(r.stdout, /^Error while executing client metrics command : .+\n$/);
  assert.ok(!(await listed()).includes('bad'));
});
