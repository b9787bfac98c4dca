/**
 * kafka-replica-verification.sh (bin/, after the build) on a 3-broker ZooKeeper cluster: a topic
 * with replication factor 3 is fetched from all three replicas (the followers through Fetch with
 * Kafka's debugging consumer id -2) and reported with no lag once every replica holds every
 * record; a filter matching no topic is one line and exit 1. The broker side is checked too: a
 * follower answers replica id -2 with its records, an ordinary consumer (-1) with
 * NOT_LEADER_OR_FOLLOWER.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Admin, ErrorCode, Producer } from '../../src/client/index.js';
import { Api } from '../../src/client/apis.js';
import { MAX_READ_DECOMPRESSED_BYTES, decodeBatch, iterateBatches } from '../../src/protocol/records/index.js';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { exited, LineCollector } from '../cli/helpers.js';
import { waitForTopic } from './cluster-clients.js';

const TOOL = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'kafka-replica-verification.sh');
const env = { ...process.env, FJORD_DEBUG: '' };
const DATE = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}`;

let c: Cluster | undefined;

before(async () => {
  if (!Cluster.available()) return;
  c = await Cluster.start();
  const admin = new Admin({ bootstrapServers: c.bootstrap() });
  try {
    assert.equal((await admin.createTopics([{ name: 'verified', numPartitions: 2, replicationFactor: 3 }])).get('verified'), null);
  } finally {
    await admin.close();
  }
  await waitForTopic(c, 'verified');
  const producer = new Producer({ bootstrapServers: c.bootstrap() }); // acks=all: every replica in the ISR has them
  try {
    for (let i = 0; i < 6; i++) await producer.send({ topic: 'verified', partition: i < 4 ? 0 : 1, key: null, value: `r${i}` });
  } finally {
    await producer.close();
  }
});

after(async () => {
  await c?.stop();
});

test('kafka-replica-verification.sh reads every replica of an RF 3 topic and reports no lag', { timeout: 60000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const child = spawn(
    TOOL,
    ['--broker-list', c!.bootstrap(), '--topics-include', 'verified', '--time', '-2', '--report-interval-ms', '500', '--max-wait-ms', '200'],
    { env },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = new LineCollector(child);
  try {
    // Partition 0 comes first and, every replica matching up to its 4 records, has the "max" lag 0.
    await lines.waitFor((ls) => ls.some((l) => / max lag is 0 /.test(l)), 30000, 'a max lag line with lag 0');
    assert.match(lines.lines[0]!, new RegExp(`^${DATE}: verification process is started$`));
    const lag = lines.lines.find((l) => / max lag is 0 /.test(l))!;
    assert.match(lag, new RegExp(`^${DATE}: max lag is 0 for partition verified-0 at offset 4 among 2 partitions$`));
    assert.ok(!lines.lines.some((l) => /checksum|doesn't match/.test(l)), lines.lines.join('\n'));
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited(child), 0, stderr);
});

test('kafka-replica-verification.sh with a filter that matches no topic says so in one line and exits 1', { timeout: 30000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const r = await run(TOOL, ['--broker-list', c!.bootstrap(), '--topics-include', 'no-such-topic.*'], { env, timeoutMs: 20000 });
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    'kafka-replica-verification.sh: No topics found. --topics-include if specified, is either filtering out all topics or there is no topic.\n',
  );
  const missing = await run(TOOL, [], { env, timeoutMs: 20000 });
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'kafka-replica-verification.sh: missing required argument --broker-list (see --help)\n');
});

test("a follower serves Fetch to Kafka's debugging consumer (replica id -2) up to its high watermark, and still refuses an ordinary consumer", {
  timeout: 30000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const admin = new Admin({ bootstrapServers: c!.bootstrap() });
  try {
    const [meta] = await admin.describeTopics(['verified']);
    const p0 = meta!.partitions.find((p) => p.partition === 0)!;
    const follower = p0.replicas.find((id) => id !== p0.leader)!;
    const conn = await admin.cluster.brokerConnection(follower);
    const fetch = (replicaId: number) =>
      conn.send(Api.Fetch, {
        replicaId,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          { topic: 'verified', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] },
        ],
        forgottenTopicsData: [],
        rackId: '',
      });
    const consumer = (await fetch(-1)).responses[0]!.partitions[0]!;
    assert.equal(consumer.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    await c!.waitFor("the follower's high watermark at 4", 10000, async () => (await fetch(-2)).responses[0]!.partitions[0]!.highWatermark === 4n);
    const debug = (await fetch(-2)).responses[0]!.partitions[0]!;
    assert.equal(debug.errorCode, 0);
    let records = 0;
    for (const e of iterateBatches(debug.records!)) records += decodeBatch(e.buf, e.start, { maxBytes: MAX_READ_DECOMPRESSED_BYTES }).records.length;
    assert.equal(records, 4);
  } finally {
    await admin.close();
  }
});
