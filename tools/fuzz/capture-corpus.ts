/**
 * Regenerates the fuzzing corpus (test/fixtures/fuzz-corpus/*.bin) by hand, not in tests:
 *   npm run build && npx tsx tools/fuzz/capture-corpus.ts [outDir]
 * Starts a broker in this process behind a capturing proxy (the broker advertises the proxy, so
 * every connection of every client goes through it), drives real clients through it — kcat,
 * confluent-kafka and kafka-python (/usr/bin/python3), kafkajs, the project's client and CLI
 * tools — and keeps a few distinct request frames per client, API key and version. API versions
 * that no client sent are generated from Kafka's message specs (random values at each version,
 * plus the all-defaults message) into generated.bin. Needs the specs (../shared/kafka-protocol or
 * FJORD_PROTOCOL_SPECS) for that last step only.
 */
import net from 'node:net';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import kafkajs from 'kafkajs';
import { Broker } from '../../src/server/broker.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { ALL_HANDLERS } from '../../src/server/handlers/index.js';
import { API_SPECS } from '../../src/protocol/messages/index.js';
import { Admin, Consumer, Producer, ConfigResourceType } from '../../src/client/index.js';
import { encodeRequest } from './wire.js';
import { CORPUS_DIR, formatCorpusFile } from './mutate.js';

const REPO = resolve(import.meta.dirname, '../..');
const PYTHON = '/usr/bin/python3';
const PER_KEY_VERSION = 6; // distinct frames kept per source, key and version
const MAX_FRAME = 64 * 1024;

const outDir = resolve(process.argv[2] ?? CORPUS_DIR);
const captured = new Map<string, Buffer[]>(); // source -> frames (with size prefix)
let source = 'startup';

function record(frame: Buffer): void {
  if (frame.length > MAX_FRAME) return;
  const list = captured.get(source) ?? [];
  captured.set(source, list);
  list.push(Buffer.from(frame));
}

async function startProxy(): Promise<{ port: number; setTarget(port: number): void; close(): void }> {
  let targetPort = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const size = pending.readInt32BE(0);
        record(pending.subarray(0, 4 + size));
        pending = pending.subarray(4 + size);
      }
    });
    upstream.on('data', (c: Buffer) => client.write(c));
    const down = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('close', down);
      s.on('error', down);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    setTarget: (p) => (targetPort = p),
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

function run(cmd: string, args: string[], input = '', timeoutMs = 60_000): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      res({ code: -1, out, err: e.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, out, err });
    });
    child.stdin.end(input);
  });
}

async function step(name: string, f: () => Promise<unknown>): Promise<void> {
  const t0 = Date.now();
  try {
    const r = await f();
    const failed = typeof r === 'object' && r !== null && 'code' in r && (r as { code: number }).code !== 0;
    console.log(
      `  ${failed ? 'FAILED' : 'ok'} ${name} (${Date.now() - t0} ms)${failed ? `: ${(r as unknown as { err: string }).err.trim().split('\n').slice(-2).join(' | ')}` : ''}`,
    );
  } catch (e) {
    console.log(`  FAILED ${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function kcat(bootstrap: string): Promise<void> {
  const b = ['-b', bootstrap];
  const lines = Array.from({ length: 20 }, (_, i) => `k${i}:value-${i}`).join('\n') + '\n';
  await step('kcat -L', () => run('kcat', [...b, '-L']));
  for (const z of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    await step(`kcat -P -z ${z}`, () => run('kcat', [...b, '-P', '-t', 'corpus-kcat', '-K', ':', '-z', z, '-H', 'h=1'], lines));
  }
  await step('kcat -C', () => run('kcat', [...b, '-C', '-t', 'corpus-kcat', '-o', 'beginning', '-e', '-q']));
  await step('kcat -G', () =>
    run('kcat', [...b, '-G', 'corpus-kcat-group', '-o', 'beginning', '-e', '-q', '-X', 'enable.partition.eof=true', 'corpus-kcat'], '', 30_000),
  );
  await step('kcat -Q', () => run('kcat', [...b, '-Q', '-t', `corpus-kcat:0:${Date.now() - 60_000}`]));
  // old protocol versions, as librdkafka talks to a broker it takes for 0.9 / 0.10
  for (const v of ['0.9.0', '0.10.0', '0.11.0']) {
    await step(`kcat -P broker.version.fallback=${v}`, () =>
      run(
        'kcat',
        [...b, '-P', '-t', 'corpus-kcat-old', '-z', v === '0.9.0' ? 'gzip' : 'snappy', '-X', 'api.version.request=false', '-X', `broker.version.fallback=${v}`],
        lines,
      ),
    );
    await step(`kcat -C broker.version.fallback=${v}`, () =>
      run('kcat', [
        ...b,
        '-C',
        '-t',
        'corpus-kcat-old',
        '-o',
        'beginning',
        '-e',
        '-q',
        '-X',
        'api.version.request=false',
        '-X',
        `broker.version.fallback=${v}`,
      ]),
    );
  }
}

const CONFLUENT = `
import sys
from confluent_kafka import Producer, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, NewPartitions, ConfigResource
b = sys.argv[1]
def tryit(f):
    try: f()
    except Exception as e: print('error', e, file=sys.stderr)
a = AdminClient({'bootstrap.servers': b})
for f in a.create_topics([NewTopic('corpus-ck', 2, 1, config={'retention.ms': '86400000'})]).values(): tryit(f.result)
tryit(lambda: a.list_topics(timeout=10))
for codec in ['none', 'gzip', 'snappy', 'lz4', 'zstd']:
    p = Producer({'bootstrap.servers': b, 'enable.idempotence': codec != 'none', 'compression.type': codec, 'linger.ms': 5})
    for i in range(10): p.produce('corpus-ck', key=b'k%d' % i, value=b'v%d' % i, headers=[('h', b'1')])
    p.flush(10)
c = Consumer({'bootstrap.servers': b, 'group.id': 'corpus-ck-group', 'auto.offset.reset': 'earliest', 'enable.auto.commit': False, 'session.timeout.ms': 6000})
c.subscribe(['corpus-ck'])
n = 0
for _ in range(40):
    m = c.poll(0.5)
    if m is not None and not m.error(): n += 1
    if n >= 20: break
tryit(lambda: c.commit(asynchronous=False))
tryit(lambda: c.committed([TopicPartition('corpus-ck', 0)], timeout=5))
tryit(lambda: c.offsets_for_times([TopicPartition('corpus-ck', 0, 0)], timeout=5))
tryit(lambda: c.get_watermark_offsets(TopicPartition('corpus-ck', 0), timeout=5))
c.close()
for f in a.create_partitions([NewPartitions('corpus-ck', 3)]).values(): tryit(f.result)
for f in a.describe_configs([ConfigResource('topic', 'corpus-ck'), ConfigResource('broker', '0')]).values(): tryit(f.result)
for f in a.alter_configs([ConfigResource('topic', 'corpus-ck', set_config={'retention.ms': '3600000'})]).values(): tryit(f.result)
tryit(lambda: a.list_groups(timeout=5))
for name in ['list_consumer_groups']:
    if hasattr(a, name): tryit(lambda: getattr(a, name)().result())
if hasattr(a, 'describe_consumer_groups'):
    for f in a.describe_consumer_groups(['corpus-ck-group']).values(): tryit(f.result)
if hasattr(a, 'incremental_alter_configs'):
    from confluent_kafka.admin import ConfigEntry, AlterConfigOpType
    r = ConfigResource('topic', 'corpus-ck', incremental_configs=[ConfigEntry('retention.ms', '7200000', incremental_operation=AlterConfigOpType.SET)])
    for f in a.incremental_alter_configs([r]).values(): tryit(f.result)
if hasattr(a, 'delete_records'):
    tryit(lambda: [f.result() for f in a.delete_records([TopicPartition('corpus-ck', 0, 1)]).values()])
if hasattr(a, 'delete_consumer_groups'):
    for f in a.delete_consumer_groups(['corpus-ck-group']).values(): tryit(f.result)
for f in a.delete_topics(['corpus-ck']).values(): tryit(f.result)
`;

const KAFKA_PYTHON = `
import sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic, NewPartitions, ConfigResource, ConfigResourceType
b = sys.argv[1]
def tryit(f):
    try: f()
    except Exception as e: print('error', repr(e), file=sys.stderr)
a = KafkaAdminClient(bootstrap_servers=b)
tryit(lambda: a.create_topics([NewTopic('corpus-kp', 2, 1)]))
for ver in [None, (0, 9), (0, 10, 0), (0, 10, 1), (0, 11), (1, 0), (2, 0)]:
    kw = {} if ver is None else {'api_version': ver}
    def prod():
        p = KafkaProducer(bootstrap_servers=b, compression_type='gzip' if ver in [(0, 9), (1, 0), None] else None, acks='all', **kw)
        for i in range(10): p.send('corpus-kp', key=b'k%d' % i, value=b'v%d' % i, partition=0)
        p.flush(10); p.close()
    tryit(prod)
    def cons():
        c = KafkaConsumer(bootstrap_servers=b, group_id='corpus-kp-group-%s' % (ver,), auto_offset_reset='earliest', consumer_timeout_ms=1500, **kw)
        c.subscribe(['corpus-kp'])
        for m in c: pass
        tryit(lambda: c.commit())
        tryit(lambda: c.committed(TopicPartition('corpus-kp', 0)))
        tryit(lambda: c.offsets_for_times({TopicPartition('corpus-kp', 0): 0}))
        tryit(lambda: c.end_offsets([TopicPartition('corpus-kp', 0)]))
        c.close()
    tryit(cons)
tryit(lambda: a.create_partitions({'corpus-kp': NewPartitions(3)}))
tryit(lambda: a.describe_configs([ConfigResource(ConfigResourceType.Topic, 'corpus-kp'), ConfigResource(ConfigResourceType.BROKER, '0')]))
tryit(lambda: a.alter_configs([ConfigResource(ConfigResourceType.Topic, 'corpus-kp', configs={'retention.ms': '3600000'})]))
tryit(lambda: a.list_consumer_groups())
tryit(lambda: a.describe_consumer_groups(['corpus-kp-group-None']))
tryit(lambda: a.list_consumer_group_offsets('corpus-kp-group-None'))
tryit(lambda: a.describe_cluster())
tryit(lambda: a.delete_consumer_groups(['corpus-kp-group-None']))
tryit(lambda: a.delete_topics(['corpus-kp']))
a.close()
`;

async function kafkaJs(bootstrap: string): Promise<void> {
  const kafka = new kafkajs.Kafka({ brokers: [bootstrap], clientId: 'corpus-kafkajs', logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await step('kafkajs createTopics', () =>
      admin.createTopics({ topics: [{ topic: 'corpus-kjs', numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '86400000' }] }] }),
    );
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await step('kafkajs produce none', () =>
      producer.send({ topic: 'corpus-kjs', messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}`, headers: { h: '1' } })) }),
    );
    await step('kafkajs produce gzip', () =>
      producer.send({
        topic: 'corpus-kjs',
        compression: kafkajs.CompressionTypes.GZIP,
        messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
      }),
    );
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: 'corpus-kjs-group', sessionTimeout: 6000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topics: ['corpus-kjs'], fromBeginning: true });
    let n = 0;
    await step('kafkajs consume', async () => {
      await new Promise<void>((res) => {
        const timer = setTimeout(res, 15_000);
        void consumer.run({
          eachMessage: async () => {
            if (++n >= 20) {
              clearTimeout(timer);
              res();
            }
          },
        });
      });
      await new Promise((r) => setTimeout(r, 1500)); // a few heartbeats and an offset commit
    });
    await consumer.disconnect();
    await step('kafkajs fetchTopicMetadata', () => admin.fetchTopicMetadata({ topics: ['corpus-kjs'] }));
    await step('kafkajs fetchTopicOffsets', () => admin.fetchTopicOffsets('corpus-kjs'));
    await step('kafkajs fetchTopicOffsetsByTimestamp', () => admin.fetchTopicOffsetsByTimestamp('corpus-kjs', Date.now() - 60_000));
    await step('kafkajs fetchOffsets', () => admin.fetchOffsets({ groupId: 'corpus-kjs-group', topics: ['corpus-kjs'] }));
    await step('kafkajs describeGroups', () => admin.describeGroups(['corpus-kjs-group']));
    await step('kafkajs listGroups', () => admin.listGroups());
    await step('kafkajs setOffsets', () => admin.setOffsets({ groupId: 'corpus-kjs-group', topic: 'corpus-kjs', partitions: [{ partition: 0, offset: '1' }] }));
    await step('kafkajs describeConfigs', () =>
      admin.describeConfigs({ includeSynonyms: true, resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: 'corpus-kjs' }] }),
    );
    await step('kafkajs alterConfigs', () =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: 'corpus-kjs', configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
      }),
    );
    await step('kafkajs createPartitions', () => admin.createPartitions({ topicPartitions: [{ topic: 'corpus-kjs', count: 3 }] }));
    await step('kafkajs deleteTopicRecords', () => admin.deleteTopicRecords({ topic: 'corpus-kjs', partitions: [{ partition: 0, offset: '1' }] }));
    await step('kafkajs describeCluster', () => admin.describeCluster());
    await step('kafkajs deleteGroups', () => admin.deleteGroups(['corpus-kjs-group']));
    await step('kafkajs deleteTopics', () => admin.deleteTopics({ topics: ['corpus-kjs'] }));
  } finally {
    await admin.disconnect();
  }
}

async function fjordClient(bootstrap: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap, clientId: 'corpus-fjord' });
  try {
    await step('fjord createTopics', () => admin.createTopics([{ name: 'corpus-fjord', numPartitions: 2, replicationFactor: 1 }]));
    for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
      await step(`fjord produce ${compression}`, async () => {
        const p = new Producer({ bootstrapServers: bootstrap, clientId: 'corpus-fjord', compression });
        for (let i = 0; i < 10; i++) p.produce({ topic: 'corpus-fjord', key: `k${i}`, value: `v${i}`, headers: { h: '1' } }, () => undefined);
        await p.flush();
        await p.close();
      });
    }
    await step('fjord consume (group)', async () => {
      const c = new Consumer({ bootstrapServers: bootstrap, groupId: 'corpus-fjord-group', autoOffsetReset: 'earliest', sessionTimeoutMs: 6000 });
      c.subscribe(['corpus-fjord']);
      let n = 0;
      const deadline = Date.now() + 15_000;
      while (n < 20 && Date.now() < deadline) n += (await c.poll(500)).length;
      await c.commitSync();
      await c.committed([{ topic: 'corpus-fjord', partition: 0 }]);
      await c.close();
    });
    await step('fjord describeTopics', () => admin.describeTopics(['corpus-fjord']));
    await step('fjord describeCluster', () => admin.describeCluster());
    await step('fjord describeConfigs', () => admin.describeConfigs(ConfigResourceType.Topic, 'corpus-fjord'));
    await step('fjord alterConfigs', () =>
      admin.alterConfigs(ConfigResourceType.Topic, 'corpus-fjord', [{ name: 'retention.ms', value: '3600000', op: 'set' }]),
    );
    await step('fjord describeLogDirs', () => admin.describeLogDirs());
    await step('fjord listGroups', () => admin.listGroups());
    await step('fjord describeGroups', () => admin.describeGroups(['corpus-fjord-group']));
    await step('fjord listGroupOffsets', () => admin.listGroupOffsets('corpus-fjord-group'));
    await step('fjord deleteGroupOffsets', () => admin.deleteGroupOffsets('corpus-fjord-group', [{ topic: 'corpus-fjord', partition: 1 }]));
    await step('fjord deleteRecords', () => admin.deleteRecords([{ topic: 'corpus-fjord', partition: 0, offset: 1n }]));
    await step('fjord createPartitions', () => admin.createPartitions([{ name: 'corpus-fjord', count: 3 }]));
  } finally {
    await admin.close();
  }
  const bin = (tool: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> => run(join(REPO, 'bin', `${tool}.sh`), args);
  const bs = ['--bootstrap-server', bootstrap];
  await step('kafka-topics --create', () =>
    bin('kafka-topics', ...bs, '--create', '--topic', 'corpus-cli', '--partitions', '2', '--config', 'cleanup.policy=compact'),
  );
  await step('kafka-topics --describe', () => bin('kafka-topics', ...bs, '--describe', '--topic', 'corpus-cli'));
  await step('kafka-topics --alter', () => bin('kafka-topics', ...bs, '--alter', '--topic', 'corpus-cli', '--partitions', '3'));
  await step('kafka-console-producer', () =>
    run(join(REPO, 'bin/kafka-console-producer.sh'), [...bs, '--topic', 'corpus-cli', '--property', 'parse.key=true'], 'a\t1\nb\t2\n'),
  );
  await step('kafka-console-consumer', () =>
    run(join(REPO, 'bin/kafka-console-consumer.sh'), [
      ...bs,
      '--topic',
      'corpus-cli',
      '--from-beginning',
      '--max-messages',
      '2',
      '--group',
      'corpus-cli-group',
    ]),
  );
  await step('kafka-consumer-groups --describe', () => bin('kafka-consumer-groups', ...bs, '--describe', '--group', 'corpus-cli-group'));
  await step('kafka-consumer-groups --list', () => bin('kafka-consumer-groups', ...bs, '--list'));
  await step('kafka-get-offsets', () => bin('kafka-get-offsets', ...bs, '--topic', 'corpus-cli', '--time', '-3'));
  await step('kafka-configs --describe', () => bin('kafka-configs', ...bs, '--describe', '--entity-type', 'topics', '--entity-name', 'corpus-cli'));
  await step('kafka-configs --alter', () =>
    bin('kafka-configs', ...bs, '--alter', '--entity-type', 'topics', '--entity-name', 'corpus-cli', '--add-config', 'retention.ms=1000000'),
  );
  await step('kafka-topics --delete', () => bin('kafka-topics', ...bs, '--delete', '--topic', 'corpus-cli'));
}

/** Frames for served versions no client sent: all defaults, and random values from the specs. */
async function generated(seen: Set<string>): Promise<Buffer[]> {
  const { loadMessage } = await import('../codegen/spec.js');
  const { specsDir } = await import('../codegen/generate.js');
  const { structArb, structsOf } = await import('../../test/protocol/spec-arbitraries.js');
  const files = new Map<string, string>();
  for (const f of readdirSync(join(specsDir, 'messages')))
    if (f.endsWith('Request.json')) files.set(f.slice(0, -'.json'.length), join(specsDir, 'messages', f));
  const out: Buffer[] = [];
  let id = 1;
  for (const h of ALL_HANDLERS) {
    const spec = API_SPECS[h.apiKey]!;
    const file = files.get(spec.request.name);
    if (!file) throw new Error(`no spec file for ${spec.request.name}`);
    const m = loadMessage(file);
    for (let v = h.minVersion; v <= h.maxVersion; v++) {
      if (seen.has(`${h.apiKey}-${v}`)) continue;
      out.push(encodeRequest(h.apiKey, spec.request, v, {}, id++, 'corpus-generated'));
      const values = fc.sample(structArb(m.root, structsOf(m), m, v), { seed: h.apiKey * 100 + v, numRuns: 2 });
      for (const value of values) {
        const frame = encodeRequest(h.apiKey, spec.request, v, value as never, id++, 'corpus-generated');
        if (frame.length <= MAX_FRAME) out.push(frame);
      }
    }
  }
  return out;
}

/** A few distinct frames per key and version (different sizes first: different shapes). */
function select(frames: Buffer[]): Buffer[] {
  const byKv = new Map<string, Map<string, Buffer>>();
  for (const f of frames) {
    const kv = `${f.readInt16BE(4)}-${f.readInt16BE(6)}`;
    const body = Buffer.from(f);
    body.writeInt32BE(0, 8); // correlation ids differ between otherwise equal frames
    const hash = createHash('sha1').update(body).digest('hex');
    const m = byKv.get(kv) ?? new Map<string, Buffer>();
    byKv.set(kv, m);
    if (!m.has(hash)) m.set(hash, f);
  }
  const out: Buffer[] = [];
  for (const kv of [...byKv.keys()].sort((a, b) => Number(a.split('-')[0]) - Number(b.split('-')[0]) || Number(a.split('-')[1]) - Number(b.split('-')[1]))) {
    const distinct = [...byKv.get(kv)!.values()];
    const bySize = new Map<number, Buffer>();
    for (const f of distinct) if (!bySize.has(f.length)) bySize.set(f.length, f);
    const pick = [...bySize.values()].slice(0, PER_KEY_VERSION);
    for (const f of distinct) if (pick.length < PER_KEY_VERSION && !pick.includes(f)) pick.push(f);
    out.push(...pick);
  }
  return out;
}

async function main(): Promise<void> {
  const proxy = await startProxy();
  const logDir = mkdtempSync(join(tmpdir(), 'fjord-corpus-'));
  const config = buildBrokerConfig(
    new Map(
      Object.entries({
        listeners: 'PLAINTEXT://127.0.0.1:0',
        'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port}`,
        'log.dirs': logDir,
        'group.initial.rebalance.delay.ms': '0',
        'offsets.topic.num.partitions': '3',
      }),
    ),
  );
  const broker = new Broker(config, silentLogger());
  await broker.start();
  proxy.setTarget(broker.boundPorts().get('PLAINTEXT')!);
  const bootstrap = `127.0.0.1:${proxy.port}`;
  try {
    source = 'kcat';
    console.log('kcat (librdkafka)');
    await kcat(bootstrap);
    source = 'confluent-kafka';
    console.log('confluent-kafka');
    await step('confluent-kafka script', () => run(PYTHON, ['-c', CONFLUENT, bootstrap], '', 120_000));
    source = 'kafka-python';
    console.log('kafka-python');
    await step('kafka-python script', () => run(PYTHON, ['-c', KAFKA_PYTHON, bootstrap], '', 180_000));
    source = 'kafkajs';
    console.log('kafkajs');
    await kafkaJs(bootstrap);
    source = 'fjord';
    console.log('fjord client and CLI tools');
    await fjordClient(bootstrap);
    source = 'after';
  } finally {
    proxy.close();
    await broker.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
  mkdirSync(outDir, { recursive: true });
  for (const f of readdirSync(outDir)) if (f.endsWith('.bin')) rmSync(join(outDir, f));
  const seen = new Set<string>();
  for (const [src, frames] of captured) {
    if (src === 'startup' || src === 'after') continue;
    const chosen = select(frames);
    for (const f of chosen) seen.add(`${f.readInt16BE(4)}-${f.readInt16BE(6)}`);
    writeFileSync(join(outDir, `${src}.bin`), formatCorpusFile(chosen));
    console.log(`${src}: ${frames.length} frames captured, ${chosen.length} kept`);
  }
  const gen = await generated(seen);
  writeFileSync(join(outDir, 'generated.bin'), formatCorpusFile(gen));
  console.log(`generated: ${gen.length} frames for versions no client sent`);
}

await main();
