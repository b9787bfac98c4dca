/**
 * kafka-e2e-latency.sh and kafka-mirror-maker.sh as a user runs them (bin/, after the build),
 * against two in-process brokers: one the mirror's source (and the latency tool's broker), the
 * other its target. The mirror is stopped and restarted between batches of records, gracefully
 * and with kill -9, and the target must hold every record with its key, headers, timestamp and
 * partition (duplicates only after the kill, as MirrorMaker's at-least-once allows).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Admin, Consumer, Producer, type ConsumerRecord } from '../../src/client/index.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { waitFor } from '../helpers/cluster.js';
import { run } from '../helpers/run.js';
import { freePort } from '../interop/groups/crash-helpers.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin');
const env = { ...process.env, FJORD_DEBUG: '' };

let source: TestBroker;
let target: TestBroker;
let dir: string;

before(async () => {
  // The source lets the mirror's consumers use short sessions: after kill -9 their partitions come back in ~1.5 s.
  [source, target] = await Promise.all([startTestBroker({ 'group.min.session.timeout.ms': '1000' }), startTestBroker()]);
  dir = await mkdtemp(join(tmpdir(), 'fjord-client-tools-'));
});

after(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

function tool(name: string, args: string[], timeoutMs = 30000) {
  return run(join(BIN, name), args, { env, timeoutMs });
}

/** The one line a failing tool prints, checked to be one line with no stack trace. */
function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, stderr);
  assert.doesNotMatch(stderr, /\n\s+at /);
  return lines[0]!;
}

test('kafka-e2e-latency.sh creates a missing topic, round-trips every message and prints the average and percentiles', { timeout: 60000 }, async () => {
  const r = await tool('kafka-e2e-latency.sh', [source.bootstrap, 'e2e-latency', '25', 'all', '100']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], 'Topic "e2e-latency" does not exist. Will create topic with 1 partition(s) and replication factor = 1');
  assert.match(lines[1]!, /^0\t\d+(\.\d+)?$/); // progress: every 1000th message, the first included
  assert.match(lines[2]!, /^Avg latency: \d+\.\d{4} ms$/);
  assert.match(lines[3]!, /^Percentiles: 50th = \d+, 99th = \d+, 99\.9th = \d+$/);
  assert.equal(lines.length, 4, r.stdout);
  // The topic now exists: a second run (acks=1, a properties file) does not create it again.
  const props = join(dir, 'e2e.properties');
  await writeFile(props, 'client.id=e2e-test\n');
  const again = await tool('kafka-e2e-latency.sh', [source.bootstrap, 'e2e-latency', '3', '1', '10', props]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^0\t[\d.]+\nAvg latency: [\d.]+ ms\nPercentiles: /);
  const admin = new Admin({ bootstrapServers: source.bootstrap });
  try {
    const [end] = await admin.listOffsets([{ topic: 'e2e-latency', partition: 0, timestamp: -1n }]);
    assert.equal(end!.offset, 28n);
  } finally {
    await admin.close();
  }
});

test("kafka-e2e-latency.sh refuses what Kafka's refuses in one line and a non-zero exit", { timeout: 60000 }, async () => {
  const acks = await tool('kafka-e2e-latency.sh', [source.bootstrap, 'e2e-latency', '5', '-1', '10']);
  assert.equal(acks.code, 1);
  assert.equal(oneLine(acks.stderr), 'kafka-e2e-latency.sh: Latency testing requires synchronous acknowledgement. Please use 1 or all');
  const usage = await tool('kafka-e2e-latency.sh', [source.bootstrap, 'e2e-latency', '5']);
  assert.equal(usage.code, 1);
  assert.match(
    oneLine(usage.stderr),
    /USAGE: kafka-e2e-latency\.sh broker_list topic num_messages producer_acks message_size_bytes \[optional\] properties_file$/,
  );
  const invalid = await tool('kafka-e2e-latency.sh', [source.bootstrap, 'no good!', '5', '1', '10']);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stdout, /Creation of topic no good! failed/);
  assert.match(oneLine(invalid.stderr), /^kafka-e2e-latency\.sh: .*illegal/i);
  const props = join(dir, 'fast-fail.properties');
  await writeFile(props, 'socket.connection.setup.timeout.ms=1000\nrequest.timeout.ms=1000\n');
  const unreachable = await tool('kafka-e2e-latency.sh', [`127.0.0.1:${await freePort()}`, 'e2e-latency', '5', '1', '10', props]);
  assert.notEqual(unreachable.code, 0);
  assert.match(oneLine(unreachable.stderr), /^kafka-e2e-latency\.sh: .*(reachable|connect|refused)/i);
});

interface Mirror {
  child: ChildProcessWithoutNullStreams;
  stderr: () => string;
}

async function mirrorConfigs(): Promise<{ consumer: string; producer: string }> {
  const consumer = join(dir, 'mm-consumer.properties');
  const producer = join(dir, 'mm-producer.properties');
  await writeFile(
    consumer,
    `bootstrap.servers=${source.bootstrap}\ngroup.id=mirror\nauto.offset.reset=earliest\nsession.timeout.ms=1500\nheartbeat.interval.ms=300\n`,
  );
  await writeFile(producer, `bootstrap.servers=${target.bootstrap}\n`);
  return { consumer, producer };
}

function startMirror(configs: { consumer: string; producer: string }, extra: string[] = ['--include', 'mm-.*']): Mirror {
  const child = spawn(
    join(BIN, 'kafka-mirror-maker.sh'),
    ['--consumer.config', configs.consumer, '--producer.config', configs.producer, '--num.streams', '2', ...extra],
    { env },
  );
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout.resume();
  return { child, stderr: () => err };
}

async function stopMirror(m: Mirror, signal: NodeJS.Signals): Promise<number | null> {
  const exit = once(m.child, 'exit') as Promise<[number | null, string | null]>;
  m.child.kill(signal);
  const [code] = await exit;
  return code;
}

async function produceBatch(from: number, count: number): Promise<void> {
  const producer = new Producer({ bootstrapServers: source.bootstrap });
  try {
    for (let i = from; i < from + count; i++) {
      producer.produce({ topic: 'mm-orders', key: `k${i}`, value: `v${i}`, headers: { seq: String(i) }, timestamp: 1_600_000_000_000 + i }, (err) =>
        assert.ifError(err),
      );
    }
    await producer.flush();
  } finally {
    await producer.close();
  }
}

/** Reads mm-orders on the target (both partitions) from the start until `done` says enough. */
async function readTarget(what: string, done: (records: ConsumerRecord[]) => boolean): Promise<ConsumerRecord[]> {
  const consumer = new Consumer({ bootstrapServers: target.bootstrap });
  const tps = [0, 1].map((partition) => ({ topic: 'mm-orders', partition }));
  consumer.assign(tps);
  await consumer.seekToBeginning(tps);
  const out: ConsumerRecord[] = [];
  try {
    await waitFor(what, 30000, async () => {
      out.push(...(await consumer.poll(200)));
      return done(out);
    });
  } finally {
    await consumer.close();
  }
  return out;
}

const valuesOf = (records: ConsumerRecord[]): Set<string> => new Set(records.map((r) => r.value!.toString()));
const hasAll = (records: ConsumerRecord[], n: number): boolean => {
  const values = valuesOf(records);
  for (let i = 0; i < n; i++) if (!values.has(`v${i}`)) return false;
  return true;
};

async function targetEnd(): Promise<number> {
  const admin = new Admin({ bootstrapServers: target.bootstrap });
  try {
    const ends = await admin.listOffsets([0, 1].map((partition) => ({ topic: 'mm-orders', partition, timestamp: -1n })));
    return ends.reduce((n, e) => n + Number(e.offset), 0);
  } finally {
    await admin.close();
  }
}

test('kafka-mirror-maker.sh mirrors keys, values, headers, timestamps and partitions, and loses nothing across a stop, a restart and kill -9', {
  timeout: 90000,
}, async () => {
  const sourceAdmin = new Admin({ bootstrapServers: source.bootstrap });
  const targetAdmin = new Admin({ bootstrapServers: target.bootstrap });
  try {
    assert.equal((await sourceAdmin.createTopics([{ name: 'mm-orders', numPartitions: 2, replicationFactor: 1 }])).get('mm-orders'), null);
    assert.equal((await targetAdmin.createTopics([{ name: 'mm-orders', numPartitions: 2, replicationFactor: 1 }])).get('mm-orders'), null);
  } finally {
    await Promise.all([sourceAdmin.close(), targetAdmin.close()]);
  }
  const configs = await mirrorConfigs();
  await produceBatch(0, 10);

  // 1: mirror, then a graceful stop: flush, commit, exit 0.
  let mirror = startMirror(configs);
  await readTarget('v0..v9 on the target', (rs) => hasAll(rs, 10));
  assert.equal(await stopMirror(mirror, 'SIGTERM'), 0, mirror.stderr());
  assert.match(mirror.stderr(), /Kafka mirror maker shutdown successfully/);

  // 2: records produced while it was down are mirrored on restart, and nothing twice.
  await produceBatch(10, 10);
  mirror = startMirror(configs, ['--whitelist', "'mm-orders, mm-other'"]); // Kafka's deprecated flag; quotes, spaces and commas as Kafka reads them
  let got = await readTarget('v0..v19 on the target', (rs) => hasAll(rs, 20));
  assert.equal(await stopMirror(mirror, 'SIGINT'), 0, mirror.stderr());
  assert.equal(await targetEnd(), 20, 'no record mirrored twice after a graceful stop');
  const sourceRecords = new Map<string, number>();
  const probe = new Consumer({ bootstrapServers: source.bootstrap });
  try {
    const tps = [0, 1].map((partition) => ({ topic: 'mm-orders', partition }));
    probe.assign(tps);
    await probe.seekToBeginning(tps);
    await waitFor('the source records', 20000, async () => {
      for (const r of await probe.poll(500)) sourceRecords.set(r.value!.toString(), r.partition);
      return sourceRecords.size >= 20;
    });
  } finally {
    await probe.close();
  }
  for (const r of got) {
    const i = Number(r.value!.toString().slice(1));
    assert.equal(r.key?.toString(), `k${i}`);
    assert.deepEqual(
      r.headers.map((h) => [h.key, h.value?.toString()]),
      [['seq', String(i)]],
    );
    assert.equal(r.timestamp, BigInt(1_600_000_000_000 + i));
    // The producer's partitioner, like the source's, puts a key on the same partition of an equal-sized topic.
    assert.equal(r.partition, sourceRecords.get(`v${i}`), `partition of v${i}`);
  }

  // 3: kill -9 before any commit: the restart mirrors from the last commit; nothing is lost.
  await produceBatch(20, 10);
  mirror = startMirror(configs, ['--include', 'mm-.*', '--offset.commit.interval.ms', '600000']);
  await readTarget('v0..v29 on the target', (rs) => hasAll(rs, 30));
  await stopMirror(mirror, 'SIGKILL');
  await produceBatch(30, 5);
  mirror = startMirror(configs);
  // The killed members' partitions come back once their sessions expire (session.timeout.ms).
  got = await readTarget('v0..v34 on the target', (rs) => hasAll(rs, 35));
  assert.equal(await stopMirror(mirror, 'SIGTERM'), 0, mirror.stderr());
  assert.ok(got.length >= 35);
});

test('kafka-mirror-maker.sh refuses a message handler class and a missing include list in one line', { timeout: 30000 }, async () => {
  const configs = await mirrorConfigs();
  const base = ['--consumer.config', configs.consumer, '--producer.config', configs.producer];
  const handler = await tool('kafka-mirror-maker.sh', [...base, '--include', 'mm-.*', '--message.handler', 'com.example.MyHandler']);
  assert.equal(handler.code, 1);
  assert.match(oneLine(handler.stderr), /--message\.handler com\.example\.MyHandler: Fjord cannot load Java classes/);
  const noInclude = await tool('kafka-mirror-maker.sh', base);
  assert.equal(noInclude.code, 1);
  assert.match(oneLine(noInclude.stderr), /include list must be specified/);
  const help = await tool('kafka-mirror-maker.sh', ['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--offset\.commit\.interval\.ms/);
});

test('kafka-mirror-maker.sh stops on a failed send without committing, or drops the record with --abort.on.send.failure false', {
  timeout: 60000,
}, async () => {
  const sourceAdmin = new Admin({ bootstrapServers: source.bootstrap });
  const targetAdmin = new Admin({ bootstrapServers: target.bootstrap });
  try {
    assert.equal((await sourceAdmin.createTopics([{ name: 'big-one', numPartitions: 1, replicationFactor: 1 }])).get('big-one'), null);
    // The target refuses batches over 300 bytes: the mirrored 2000-byte record cannot be written there.
    const created = await targetAdmin.createTopics([{ name: 'big-one', numPartitions: 1, replicationFactor: 1, configs: { 'max.message.bytes': '300' } }]);
    assert.equal(created.get('big-one'), null);
    const producer = new Producer({ bootstrapServers: source.bootstrap });
    await producer.send({ topic: 'big-one', value: Buffer.alloc(2000, 'x') });

    const consumer = join(dir, 'abort-consumer.properties');
    await writeFile(consumer, `bootstrap.servers=${source.bootstrap}\ngroup.id=mirror-abort\nauto.offset.reset=earliest\n`);
    const producerConfig = (await mirrorConfigs()).producer;
    const args = ['--consumer.config', consumer, '--producer.config', producerConfig, '--include', 'big-one'];
    const aborted = await tool('kafka-mirror-maker.sh', args);
    assert.equal(aborted.code, 255, aborted.stderr);
    assert.match(
      aborted.stderr.trim().split('\n').at(-1)!,
      /^kafka-mirror-maker\.sh: Mirror maker thread exited abnormally, stopping the whole mirror maker: /,
    );
    assert.doesNotMatch(aborted.stderr, /\n\s+at /);
    const committed = await sourceAdmin.cluster.refreshMetadata([]).then(async () => {
      const c = new Consumer({ bootstrapServers: source.bootstrap, groupId: 'mirror-abort' });
      try {
        return await c.committed([{ topic: 'big-one', partition: 0 }]);
      } finally {
        await c.close();
      }
    });
    assert.equal(committed.get('big-one-0'), null, 'nothing committed after the failed send');

    // Without abort: the record that cannot be written is dropped, the next one is mirrored.
    const mirror = spawn(join(BIN, 'kafka-mirror-maker.sh'), [...args, '--abort.on.send.failure', 'false', '--offset.commit.interval.ms', '0'], { env });
    let stderr = '';
    mirror.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await waitFor('the failed send reported', 20000, () => stderr.includes('WARN Error when sending message to topic big-one'));
      await producer.send({ topic: 'big-one', value: 'small' }); // after the big one's batch failed: a batch of its own
    } finally {
      await producer.close();
    }
    await waitFor('the small record on the target', 20000, async () => {
      const [end] = await targetAdmin.listOffsets([{ topic: 'big-one', partition: 0, timestamp: -1n }]);
      return end!.offset === 1n;
    });
    const exit = once(mirror, 'exit') as Promise<[number | null]>;
    mirror.kill('SIGTERM');
    assert.equal((await exit)[0], 0, stderr);
    assert.match(stderr, /Kafka mirror maker shutdown successfully \(1 messages dropped on send failures\)/);
  } finally {
    await Promise.all([sourceAdmin.close(), targetAdmin.close()]);
  }
});
