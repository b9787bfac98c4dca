import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/index.js';
import { startTestBroker } from '../helpers/broker.js';
import { exited, LineCollector, runCli, spawnCli } from './helpers.js';

interface Event {
  timestamp: number;
  name: string;
  [k: string]: unknown;
}

function events(stdout: string): Event[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);
}

test('kafka-broker-api-versions.sh prints every API as Kafka does', { timeout: 60000 }, async () => {
  const b = await startTestBroker();
  try {
    const r = await runCli('kafka-broker-api-versions', ['--bootstrap-server', b.bootstrap]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], `127.0.0.1:${b.port} (id: 0 rack: null) -> (`);
    assert.equal(lines.at(-2), ')');
    const apis = lines.slice(1, -2);
    // Every line but the last ends with a comma, as Kafka joins them with ",\n\t".
    for (const [i, l] of apis.entries()) assert.match(l, i === apis.length - 1 ? /^\t\w+\(\d+\): .*[^,]$/ : /^\t\w+\(\d+\): .*,$/, l);
    assert.ok(apis.includes('\tProduce(0): 0 to 11 [usable: 11],'), apis.slice(0, 3).join('\n'));
    assert.ok(apis.some((l) => /^\tApiVersions\(18\): 0 to 4 \[usable: 4\],$/.test(l)));
    // A client API the broker does not serve is listed as UNSUPPORTED; keys come in order.
    assert.ok(apis.some((l) => /^\tShareFetch\(78\): UNSUPPORTED,?$/.test(l)));
    const keys = apis.map((l) => Number(/\((\d+)\)/.exec(l)![1]));
    assert.deepEqual(
      keys,
      [...keys].sort((x, y) => x - y),
    );
    const bad = await runCli('kafka-broker-api-versions', []);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
  } finally {
    await b.stop();
  }
});

test("kafka-log-dirs.sh --describe prints Kafka's JSON, filtered by --topic-list", { timeout: 60000 }, async () => {
  const b = await startTestBroker();
  const bs = ['--bootstrap-server', b.bootstrap];
  try {
    assert.equal((await runCli('kafka-topics', ['--create', '--topic', 'dirs-a', '--partitions', '2', ...bs])).code, 0);
    assert.equal((await runCli('kafka-topics', ['--create', '--topic', 'dirs-b', '--partitions', '1', ...bs])).code, 0);
    const prod = await runCli('kafka-console-producer', [...bs, '--topic', 'dirs-b'], { input: 'one\ntwo\n' });
    assert.equal(prod.code, 0, prod.stderr);
    const r = await runCli('kafka-log-dirs', [...bs, '--describe', '--topic-list', 'dirs-a,dirs-b']);
    assert.equal(r.code, 0, r.stderr);
    const [first, second, json, rest] = r.stdout.split('\n');
    assert.equal(first, 'Querying brokers for log directories information');
    assert.equal(second, 'Received log directory information from brokers 0');
    assert.equal(rest, '');
    assert.match(json!, /^\{"brokers":\[\{"broker":0,"logDirs":\[\{"partitions":\[\{"partition":"dirs-a-0","size":0,"offsetLag":0,"isFuture":false\}/);
    const parsed = JSON.parse(json!) as {
      version: number;
      brokers: { broker: number; logDirs: { logDir: string; error: string | null; partitions: { partition: string; size: number }[] }[] }[];
    };
    assert.equal(parsed.version, 1);
    const dir = parsed.brokers[0]!.logDirs[0]!;
    assert.equal(dir.logDir, b.dir);
    assert.equal(dir.error, null);
    assert.deepEqual(
      dir.partitions.map((p) => p.partition),
      ['dirs-a-0', 'dirs-a-1', 'dirs-b-0'],
    );
    assert.ok(dir.partitions[2]!.size > 0, 'dirs-b-0 holds the two records');
    const none = await runCli('kafka-log-dirs', [...bs, '--describe', '--broker-list', '7']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /The given brokers do not exist from --broker-list: 7\. Current existent brokers: 0/);
  } finally {
    await b.stop();
  }
});

test("verifiable producer and consumer print Kafka's JSON events; every acked value is consumed once", { timeout: 120000 }, async () => {
  const b = await startTestBroker();
  const bs = ['--bootstrap-server', b.bootstrap];
  try {
    assert.equal((await runCli('kafka-topics', ['--create', '--topic', 'verify', '--partitions', '3', ...bs])).code, 0);
    const p = await runCli('kafka-verifiable-producer', [...bs, '--topic', 'verify', '--max-messages', '300', '--repeating-keys', '7', '--value-prefix', '5']);
    assert.equal(p.code, 0, p.stderr);
    const pe = events(p.stdout);
    assert.equal(pe[0]!.name, 'startup_complete');
    assert.deepEqual(Object.keys(pe[1]!), ['timestamp', 'name', 'key', 'value', 'topic', 'partition', 'offset']);
    const acked = pe.filter((e) => e.name === 'producer_send_success');
    assert.equal(acked.length, 300);
    assert.deepEqual(new Set(acked.map((e) => e.value)), new Set(Array.from({ length: 300 }, (_, i) => `5.${i}`)));
    assert.equal(pe.at(-2)!.name, 'shutdown_complete');
    const tool = pe.at(-1)!;
    assert.deepEqual(Object.keys(tool), ['timestamp', 'name', 'sent', 'acked', 'target_throughput', 'avg_throughput']);
    assert.equal(tool.sent, 300);
    assert.equal(tool.acked, 300);

    const c = spawnCli('kafka-verifiable-consumer', [...bs, '--topic', 'verify', '--group-id', 'vg', '--max-messages', '300', '--verbose']);
    const out = new LineCollector(c);
    const code = await exited(c);
    assert.equal(code, 0);
    const ce = out.lines.filter((l) => l !== '').map((l) => JSON.parse(l) as Event);
    assert.equal(ce[0]!.name, 'startup_complete');
    const assigned = ce.find((e) => e.name === 'partitions_assigned')!;
    assert.equal((assigned.partitions as unknown[]).length, 3);
    const records = ce.filter((e) => e.name === 'record_data');
    assert.equal(records.length, 300);
    assert.deepEqual(new Set(records.map((e) => e.value)), new Set(acked.map((e) => e.value)));
    // Where each record was consumed is where the producer was told it landed.
    const where = new Map(acked.map((e) => [e.value, `${String(e.partition)}:${String(e.offset)}`]));
    for (const r of records) assert.equal(`${String(r.partition)}:${String(r.offset)}`, where.get(r.value));
    const consumedCount = ce
      .filter((e) => e.name === 'records_consumed')
      .reduce((n, e) => n + (e.partitions as { count: number }[]).reduce((m, s) => m + s.count, 0), 0);
    assert.equal(consumedCount, 300);
    const commits = ce.filter((e) => e.name === 'offsets_committed');
    assert.ok(commits.length > 0 && commits.every((e) => e.success === true));
    assert.equal(ce.at(-1)!.name, 'shutdown_complete');

    const offsets = await runCli('kafka-consumer-groups', [...bs, '--describe', '--group', 'vg']);
    const total = acked.length;
    const committed = [...offsets.stdout.matchAll(/verify\s+\d+\s+(\d+)\s+(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    assert.equal(committed, total, offsets.stdout);
  } finally {
    await b.stop();
  }
});

test("the console consumer joins its group with Kafka's client id", { timeout: 60000 }, async () => {
  const b = await startTestBroker();
  const bs = ['--bootstrap-server', b.bootstrap];
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  // The topic first: the console consumer exits at once on a topic that does not exist.
  assert.equal((await runCli('kafka-topics', ['--create', '--topic', 'cid', ...bs])).code, 0);
  const c = spawnCli('kafka-console-consumer', [...bs, '--topic', 'cid', '--group', 'cid-group', '--timeout-ms', '20000']);
  try {
    const deadline = Date.now() + 30000;
    let clientIds: string[] = [];
    while (Date.now() < deadline) {
      const [g] = await admin.describeGroups(['cid-group']);
      clientIds = g?.members.map((m) => m.clientId) ?? [];
      if (clientIds.length > 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(clientIds, ['console-consumer']);
  } finally {
    c.kill('SIGTERM');
    await exited(c);
    await admin.close();
    await b.stop();
  }
});
