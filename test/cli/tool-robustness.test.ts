/**
 * The tools as a user runs them from a shell (bin/ scripts over dist/, in child processes):
 * - into a closed pipe (`| head -1`) they end quietly, with exit status 0 as Kafka's do (Java's
 *   System.out drops the write error); the console consumer stops, says so as Kafka's does,
 *   and leaves its group;
 * - the verifiable consumer reports an invalid topic and exits; the verifiable producer prints
 *   its send errors before shutdown_complete and tool_data, with Kafka's exception class;
 * - every tool that takes --bootstrap-server, and every --zookeeper form, given a port that
 *   refuses connections, fails in a few seconds with one line saying so, and a non-zero status.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type RunResult } from '../helpers/run.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { Admin, Producer } from '../../src/client/index.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const ROOT = REPO_ROOT;
const BIN = join(ROOT, 'bin');
const STACK_TRACE = /\n\s+at |Error: write EPIPE|node:internal/;

let b: TestBroker;
let dir: string;

/** A port nothing listens on: bound once to find it free, then closed. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Runs a shell line from the repository root; the tools' own status is printed by the line itself. */
function shell(line: string, timeoutMs = 30_000): Promise<RunResult> {
  return run('bash', ['-c', `cd ${JSON.stringify(ROOT)} && set +o pipefail && ${line}`], { timeoutMs });
}

/** The first tool's exit status in a pipeline, as the line echoed it to stderr. */
function toolStatus(r: RunResult): number {
  const m = /tool-status=(\d+)/.exec(r.stderr);
  assert.ok(m, `no status in: ${r.stderr}`);
  return Number(m[1]);
}

before(async () => {
  // scripts/test.sh builds dist/ first; when this file runs alone, build it here.
  if (!existsSync(join(ROOT, 'dist', 'cli', 'kafka-topics.js'))) spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'ignore' });
  b = await startTestBroker({ 'auto.create.topics.enable': 'true' });
  dir = await mkdtemp(join(tmpdir(), 'fjord-tool-robustness-'));
  const admin = new Admin({ bootstrapServers: [b.bootstrap] });
  try {
    await admin.createTopics([{ name: 'many', numPartitions: 2, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  // 200 KB of records: more than a pipe holds, so a reader that stops after one line closes
  // the pipe while the consumer is still writing.
  const producer = new Producer({ bootstrapServers: [b.bootstrap] });
  try {
    const value = 'v'.repeat(100);
    await Promise.all(Array.from({ length: 2000 }, (_, i) => producer.send({ topic: 'many', value: `${i} ${value}` })));
  } finally {
    await producer.close();
  }
});

after(async () => {
  await b?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("closed pipe: the console consumer stops as Kafka's does, exits 0 and leaves its group", async () => {
  const r = await shell(
    `bin/kafka-console-consumer.sh --bootstrap-server ${b.bootstrap} --topic many --from-beginning --group piped | head -1; echo "tool-status=\${PIPESTATUS[0]}" >&2`,
  );
  assert.equal(r.stdout.split('\n').length, 2, r.stdout.slice(0, 300));
  assert.doesNotMatch(r.stderr, STACK_TRACE);
  assert.match(r.stderr, /^Unable to write to standard out, closing consumer\.\nProcessed a total of (\d+) messages\n/);
  const processed = Number(/Processed a total of (\d+)/.exec(r.stderr)![1]);
  assert.ok(processed >= 1 && processed < 2000, `processed ${processed}`);
  assert.equal(toolStatus(r), 0);
  const admin = new Admin({ bootstrapServers: [b.bootstrap] });
  try {
    // It left (LeaveGroup): with the 45 s session timeout a member that did not would still be listed.
    const [group] = await admin.describeGroups(['piped']);
    assert.equal(group?.state, 'Empty');
    assert.deepEqual(group?.members, []);
    // Committed from the first record not printed: what it printed, nothing it dropped.
    const committed = await admin.listGroupOffsets('piped');
    let total = 0n;
    for (const parts of committed.values()) for (const o of parts.values()) total += o.offset;
    assert.equal(total, BigInt(processed));
  } finally {
    await admin.close();
  }
});

test('closed pipe: kafka-topics, kafka-consumer-groups and kafka-get-offsets end quietly with their own status', async () => {
  const lines = [
    `bin/kafka-topics.sh --bootstrap-server ${b.bootstrap} --describe`,
    `bin/kafka-consumer-groups.sh --bootstrap-server ${b.bootstrap} --list`,
    `bin/kafka-get-offsets.sh --bootstrap-server ${b.bootstrap}`,
  ];
  const results = await Promise.all(
    lines.flatMap((cmd) => [
      // A reader already gone before the first write, and the everyday `| head -1`.
      shell(`${cmd} | true; echo "tool-status=\${PIPESTATUS[0]}" >&2`).then((r) => ({ cmd: `${cmd} | true`, r })),
      shell(`${cmd} | head -1; echo "tool-status=\${PIPESTATUS[0]}" >&2`).then((r) => ({ cmd: `${cmd} | head -1`, r })),
    ]),
  );
  for (const { cmd, r } of results) {
    assert.doesNotMatch(r.stderr, STACK_TRACE, cmd);
    assert.equal(r.stderr.trim(), `tool-status=0`, cmd);
  }
});

test('kafka-verifiable-consumer: an invalid topic is reported and the tool exits 1', async () => {
  const started = Date.now();
  const r = await run(join(BIN, 'kafka-verifiable-consumer.sh'), ['--bootstrap-server', b.bootstrap, '--topic', 'bad topic!', '--group-id', 'vg'], {
    timeoutMs: 20_000,
  });
  assert.ok(Date.now() - started < 8000, `took ${Date.now() - started} ms`);
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(
    r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { name: string }).name),
    ['startup_complete', 'shutdown_complete'],
  );
  assert.equal(
    r.stderr,
    'kafka-verifiable-consumer.sh: Error during processing, terminating consumer process: org.apache.kafka.common.errors.InvalidTopicException: Invalid topics: [bad topic!]\n',
  );
});

test("kafka-verifiable-producer: send errors as they happen, then shutdown_complete and tool_data, with Kafka's class", async () => {
  const r = await run(join(BIN, 'kafka-verifiable-producer.sh'), ['--bootstrap-server', b.bootstrap, '--topic', 'bad topic!', '--max-messages', '3'], {
    timeoutMs: 20_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const events = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { name: string; value?: string; exception?: string; sent?: number; acked?: number });
  assert.deepEqual(
    events.map((e) => e.name),
    ['startup_complete', 'producer_send_error', 'producer_send_error', 'producer_send_error', 'shutdown_complete', 'tool_data'],
  );
  assert.deepEqual(
    events.filter((e) => e.name === 'producer_send_error').map((e) => [e.value, e.exception]),
    ['0', '1', '2'].map((v) => [v, 'class org.apache.kafka.common.errors.InvalidTopicException']),
  );
  assert.deepEqual([events[5]?.sent, events[5]?.acked], [3, 0]);
});

/** Every tool that takes --bootstrap-server, with the arguments that get it to its first request. */
function bootstrapCases(bs: string, files: { offsets: string; reassign: string; empty: string }): [string, string[], string?][] {
  return [
    ['kafka-topics', ['--bootstrap-server', bs, '--list']],
    ['kafka-configs', ['--bootstrap-server', bs, '--describe', '--entity-type', 'topics', '--entity-name', 't']],
    ['kafka-consumer-groups', ['--bootstrap-server', bs, '--list']],
    ['kafka-console-consumer', ['--bootstrap-server', bs, '--topic', 't']],
    ['kafka-console-producer', ['--bootstrap-server', bs, '--topic', 't'], 'a\nb\n'],
    ['kafka-get-offsets', ['--bootstrap-server', bs, '--topic', 't']],
    ['kafka-delete-records', ['--bootstrap-server', bs, '--offset-json-file', files.offsets]],
    ['kafka-transactions', ['--bootstrap-server', bs, 'list']],
    ['kafka-producer-perf-test', ['--bootstrap-server', bs, '--topic', 't', '--num-records', '5', '--record-size', '10', '--throughput', '-1']],
    ['kafka-consumer-perf-test', ['--bootstrap-server', bs, '--topic', 't', '--messages', '5']],
    ['kafka-broker-api-versions', ['--bootstrap-server', bs]],
    ['kafka-log-dirs', ['--bootstrap-server', bs, '--describe']],
    ['kafka-verifiable-producer', ['--bootstrap-server', bs, '--topic', 't', '--max-messages', '5']],
    ['kafka-verifiable-consumer', ['--bootstrap-server', bs, '--topic', 't', '--group-id', 'g']],
    ['kafka-reassign-partitions', ['--bootstrap-server', bs, '--list']],
    ['kafka-leader-election', ['--bootstrap-server', bs, '--election-type', 'PREFERRED', '--all-topic-partitions']],
    ['kafka-acls', ['--bootstrap-server', bs, '--list']],
    ['kafka-delegation-tokens', ['--bootstrap-server', bs, '--describe', '--command-config', files.empty]],
    ['kafka-features', ['--bootstrap-server', bs, 'describe']],
    ['kafka-preferred-replica-election', ['--bootstrap-server', bs]],
    ['kafka-replica-verification', ['--broker-list', bs, '--topics-include', 't']],
    ['kafka-e2e-latency', [bs, 't', '5', '1', '10']],
    ['kafka-groups', ['--bootstrap-server', bs, '--list']],
    ['kafka-client-metrics', ['--bootstrap-server', bs, '--list']],
    ['fjord-console', ['--bootstrap-server', bs, '--listen', '127.0.0.1:0']],
  ];
}

/** Every --zookeeper form (and the other ways a tool names ZooKeeper). */
function zookeeperCases(zk: string, files: { offsets: string; reassign: string; empty: string }): [string, string[]][] {
  return [
    ['kafka-topics', ['--zookeeper', zk, '--list']],
    ['kafka-configs', ['--zookeeper', zk, '--describe', '--entity-type', 'topics']],
    ['kafka-consumer-groups', ['--zookeeper', zk, '--list']],
    ['kafka-console-consumer', ['--zookeeper', zk, '--topic', 't']],
    ['kafka-reassign-partitions', ['--zookeeper', zk, '--verify', '--reassignment-json-file', files.reassign]],
    ['kafka-acls', ['--authorizer-properties', `zookeeper.connect=${zk}`, '--list']],
    ['kafka-preferred-replica-election', ['--zookeeper', zk]],
    ['kafka-run-class', ['kafka.tools.ExportZkOffsets', '--zkconnect', zk, '--output-file', join(dir, 'exported')]],
  ];
}

test('nothing answers: every tool fails in seconds with one line, saying so, exit 1', async () => {
  const port = await refusedPort();
  const address = `127.0.0.1:${port}`;
  const files = { offsets: join(dir, 'offsets.json'), reassign: join(dir, 'reassign.json'), empty: join(dir, 'empty.properties') };
  await writeFile(files.empty, '');
  await writeFile(files.offsets, JSON.stringify({ partitions: [{ topic: 't', partition: 0, offset: 1 }], version: 1 }));
  await writeFile(files.reassign, JSON.stringify({ version: 1, partitions: [{ topic: 't', partition: 0, replicas: [0] }] }));
  // First, as it takes longest: the wait asked for with default.api.timeout.ms is the one had.
  const longer = join(dir, 'longer.properties');
  await writeFile(longer, 'default.api.timeout.ms=5000\n');
  const cases: { tool: string; args: string[]; input?: string; server: string; seconds?: number }[] = [
    { tool: 'kafka-topics', args: ['--bootstrap-server', address, '--list', '--command-config', longer], server: 'broker', seconds: 5 },
    ...bootstrapCases(address, files).map(([tool, args, input]) => ({ tool, args, input, server: 'broker' })),
    ...zookeeperCases(address, files).map(([tool, args]) => ({ tool, args, server: 'ZooKeeper' })),
  ];

  // A tool added with --bootstrap-server must be added above (the check is on its source).
  const cliDir = join(ROOT, 'src', 'cli');
  const withBootstrap: string[] = [];
  for (const f of (await readdir(cliDir)).filter((n) => /^kafka-.*\.ts$/.test(n))) {
    if ((await readFile(join(cliDir, f), 'utf8')).includes("'--bootstrap-server")) withBootstrap.push(f.replace(/\.ts$/, ''));
  }
  const covered = new Set(bootstrapCases(address, files).map(([tool]) => tool));
  assert.deepEqual(
    withBootstrap.filter((t) => !covered.has(t)),
    [],
    'tools taking --bootstrap-server missing from this table',
  );

  // Ten at a time (each mostly waits out the same few seconds; more would only compete for
  // the CPU while starting).
  const results: ((typeof cases)[number] & { r: RunResult; elapsedMs: number })[] = [];
  const queue = [...cases];
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
        const started = Date.now();
        const r = await run(join(BIN, `${c.tool}.sh`), c.args, { input: c.input ?? '', timeoutMs: 40_000 });
        results.push({ ...c, r, elapsedMs: Date.now() - started });
      }
    }),
  );
  const failures: string[] = [];
  for (const { tool, args, server, seconds, r, elapsedMs } of results) {
    const what = `${tool} ${args.join(' ')}`;
    // kafka-consumer-groups --zookeeper's "Note: ..." (on stderr, as Kafka's) is not an error line.
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('Note: '));
    // A tool may say what it was doing first ("Failed to list transactions: ...").
    const expected = new RegExp(
      `^${tool}\\.sh: (.*: )?no ${server === 'broker' ? 'broker' : 'ZooKeeper'} answered at 127\\.0\\.0\\.1:${port} \\(connection refused; tried for ${seconds ?? '[3-5]'} s\\)`,
    );
    if (r.code !== 1) failures.push(`${what}: exit ${r.code}`);
    if (lines.length !== 1 || !expected.test(lines[0]!)) failures.push(`${what}: stderr ${JSON.stringify(r.stderr)}`);
    if (STACK_TRACE.test(r.stderr)) failures.push(`${what}: stack trace`);
    // 3 s of trying, plus starting node on a busy machine; before, 10-14 s (broker) and 30 s (ZooKeeper).
    if (elapsedMs > 9000 + ((seconds ?? 3) - 3) * 1000) failures.push(`${what}: took ${elapsedMs} ms`);
  }
  assert.deepEqual(failures, []);
  // The way to wait longer is named with the tool's own flag.
  const byTool = (tool: string, server: string) => results.find((x) => x.tool === tool && x.server === server && x.seconds === undefined)!.r.stderr;
  assert.match(byTool('kafka-topics', 'broker'), /; to wait longer, put default\.api\.timeout\.ms=<ms> in the --command-config file\n$/);
  assert.match(byTool('kafka-console-consumer', 'broker'), /; to wait longer, pass --consumer-property default\.api\.timeout\.ms=<ms>\n$/);
  assert.match(byTool('kafka-console-producer', 'broker'), /; to wait longer, pass --producer-property max\.block\.ms=<ms>\n$/);
  assert.match(byTool('kafka-topics', 'ZooKeeper'), /; to wait longer, put zookeeper\.connection\.timeout\.ms=<ms> in the --command-config file\n$/);
  assert.match(byTool('kafka-acls', 'ZooKeeper'), /; to wait longer, pass --authorizer-properties zookeeper\.connection\.timeout\.ms=<ms>\n$/);
});
