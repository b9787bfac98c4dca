/**
 * Leader epochs across a leader change on three broker processes (real ZooKeeper), as clients
 * see them: right after kill -9 of a partition's leader, the new leader answers
 * OffsetForLeaderEpoch for its new epoch with no new data (the epoch is in its cache from
 * makeLeader on), fences stale and future current_leader_epoch in Fetch, ListOffsets and
 * OffsetForLeaderEpoch, and never answers a latest offset behind its epoch start; a consumer
 * validating its position (KIP-320) learns the old epoch ended at the last acknowledged offset;
 * librdkafka (confluent-kafka) consuming through the change goes on with no error and nothing
 * skipped (Debian's librdkafka 2.0.2 predates its KIP-320 validation: the test reports how many
 * OffsetForLeaderEpoch requests it sent); kafka-delete-records.sh answers once every replica's log start
 * followed (the low watermark), which a later leader shows as its earliest offset.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster, SESSION_TIMEOUT_MS } from '../helpers/cluster.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { zkTopic, waitForTopic } from './cluster-clients.js';
import { runCli } from '../cli/helpers.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeBatch } from '../../src/protocol/records/index.js';

const FETCHERS = fileURLToPath(new URL('../../src/replication/fetcher/manager.ts', import.meta.url));
let c: Cluster | undefined;
before(async () => {
  if (Cluster.available() && existsSync(FETCHERS)) c = await Cluster.start();
});
after(() => c?.stop());

const connect = (port: number) => Connection.connect('127.0.0.1', port, { clientId: 'epoch-test', connectTimeoutMs: 10_000, requestTimeoutMs: 60_000 });

async function createTopic(name: string): Promise<void> {
  const r = await runCli(
    'kafka-topics',
    ['--create', '--topic', name, '--bootstrap-server', c!.bootstrap(), '--replica-assignment', '0:1:2', '--config', 'min.insync.replicas=2'],
    { timeoutMs: 60_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  await waitForTopic(c!, name);
  await c!.waitFor(`the whole ISR of ${name}-0`, 60_000, async () => (await zkTopic(c!, name))?.partitions[0]?.isr.length === 3);
}

/** acks=all produce of `n` records to partition 0 through whichever broker leads it; retries across a leader change. */
async function produce(topic: string, n: number, tag: string): Promise<void> {
  const records = encodeBatch({
    records: Array.from({ length: n }, (_, i) => ({
      attributes: 0,
      timestampDelta: 0,
      offsetDelta: i,
      key: null,
      value: Buffer.from(`${tag}-${i}`),
      headers: [],
    })),
    baseTimestamp: BigInt(Date.now()),
  });
  await c!.waitFor(`an acks=all produce to ${topic}`, 60_000, async () => {
    const leader = (await zkTopic(c!, topic))?.partitions[0]?.leader ?? -1;
    if (leader < 0 || !c!.broker(leader).running) return undefined;
    const conn = await connect(c!.broker(leader).port).catch(() => undefined);
    if (!conn) return undefined;
    try {
      const res = await conn.send(Api.Produce, { acks: -1, timeoutMs: 15_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
      return res.responses[0]!.partitionResponses[0]!.errorCode === ErrorCode.NONE ? true : undefined;
    } catch {
      return undefined;
    } finally {
      conn.close();
    }
  });
}

/** Kills the leader of `topic`-0 (kill -9, its session ended at once) and waits for another to lead; returns both and the new epoch. */
async function killLeader(topic: string): Promise<{ old: number; leader: number; epoch: number; oldEpoch: number }> {
  const before = (await zkTopic(c!, topic))!;
  const old = before.partitions[0]!.leader;
  const oldEpoch = before.epochs.get(0)!.leaderEpoch;
  await c!.killAndExpire(old); // its session closed at once, not after the timeout
  const after = await c!.waitFor('a new leader', SESSION_TIMEOUT_MS * 5, async () => {
    const x = await zkTopic(c!, topic);
    return x && x.partitions[0]!.leader >= 0 && x.partitions[0]!.leader !== old ? x : undefined;
  });
  return { old, oldEpoch, leader: after.partitions[0]!.leader, epoch: after.epochs.get(0)!.leaderEpoch };
}

async function restart(id: number, topic: string): Promise<void> {
  await c!.broker(id).start();
  await c!.waitFor(`broker ${id} back in the ISR of ${topic}-0`, 90_000, async () => (await zkTopic(c!, topic))?.partitions[0]?.isr.length === 3);
}

test('after kill -9 of the leader: OffsetForLeaderEpoch knows the new epoch at once, epochs fence Fetch/ListOffsets/OffsetForLeaderEpoch, latest is never behind', {
  timeout: 600_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  if (!c) return t.diagnostic('replica fetching is not in this build: skipped');
  const T = 'epochs';
  await c.waitForRegistered([0, 1, 2]);
  await createTopic(T);
  await produce(T, 10, 'a');
  const moved = await killLeader(T);
  t.diagnostic(`leader ${moved.old} (epoch ${moved.oldEpoch}) -> ${moved.leader} (epoch ${moved.epoch})`);
  const conn = await connect(c.broker(moved.leader).port);
  try {
    // The new leader has the epoch as soon as it answers as leader for it.
    const ofe = await c.waitFor('the new leader to answer for its epoch', 60_000, async () => {
      const r = await conn.send(
        Api.OffsetForLeaderEpoch,
        { replicaId: -1, topics: [{ topic: T, partitions: [{ partition: 0, currentLeaderEpoch: moved.epoch, leaderEpoch: moved.epoch }] }] },
        { version: 3 },
      );
      const p = r.topics[0]!.partitions[0]!;
      return p.errorCode === ErrorCode.NONE ? p : undefined;
    });
    const latestNow = await conn.send(
      Api.ListOffsets,
      {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: T, partitions: [{ partitionIndex: 0, currentLeaderEpoch: moved.epoch, timestamp: -1n, maxNumOffsets: 1 }] }],
      },
      { version: 7 },
    );
    const lp = latestNow.topics[0]!.partitions[0]!;
    t.diagnostic(
      `OffsetForLeaderEpoch(${moved.epoch}) = (${ofe.leaderEpoch}, ${ofe.endOffset}); ListOffsets latest = ${lp.errorCode === ErrorCode.NONE ? lp.offset : `error ${lp.errorCode}`}`,
    );
    assert.deepEqual([ofe.leaderEpoch, ofe.endOffset], [moved.epoch, 10n], 'the new epoch, ending at the log end (10 acknowledged records)');
    assert.ok(
      lp.errorCode === ErrorCode.OFFSET_NOT_AVAILABLE || (lp.errorCode === ErrorCode.NONE && lp.offset === 10n),
      `latest is 10 or not available yet: ${lp.errorCode} ${lp.offset}`,
    );
    // A consumer that read the old epoch validates its position: that epoch ends at 10, nothing was truncated.
    const validated = await conn.send(
      Api.OffsetForLeaderEpoch,
      { replicaId: -1, topics: [{ topic: T, partitions: [{ partition: 0, currentLeaderEpoch: moved.epoch, leaderEpoch: moved.oldEpoch }] }] },
      { version: 3 },
    );
    const vp = validated.topics[0]!.partitions[0]!;
    assert.deepEqual([vp.errorCode, vp.leaderEpoch, vp.endOffset], [ErrorCode.NONE, moved.oldEpoch, 10n]);
    // Fencing by current_leader_epoch, both ways, on the three APIs.
    for (const [epoch, code] of [
      [moved.oldEpoch, ErrorCode.FENCED_LEADER_EPOCH],
      [moved.epoch + 1, ErrorCode.UNKNOWN_LEADER_EPOCH],
    ] as const) {
      const f = await conn.send(
        Api.Fetch,
        {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          isolationLevel: 0,
          topics: [{ topic: T, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: epoch }] }],
        },
        { version: 11 },
      );
      assert.equal(f.responses[0]!.partitions[0]!.errorCode, code, `Fetch with epoch ${epoch}`);
      const l = await conn.send(
        Api.ListOffsets,
        {
          replicaId: -1,
          isolationLevel: 0,
          topics: [{ name: T, partitions: [{ partitionIndex: 0, currentLeaderEpoch: epoch, timestamp: -2n, maxNumOffsets: 1 }] }],
        },
        { version: 7 },
      );
      assert.equal(l.topics[0]!.partitions[0]!.errorCode, code, `ListOffsets with epoch ${epoch}`);
      const o = await conn.send(
        Api.OffsetForLeaderEpoch,
        { replicaId: -1, topics: [{ topic: T, partitions: [{ partition: 0, currentLeaderEpoch: epoch, leaderEpoch: moved.oldEpoch }] }] },
        { version: 3 },
      );
      assert.equal(o.topics[0]!.partitions[0]!.errorCode, code, `OffsetForLeaderEpoch with epoch ${epoch}`);
    }
    // Once the follower has fetched, latest is the epoch start: 10, at the new epoch.
    const latest = await c.waitFor('ListOffsets latest', 60_000, async () => {
      const r = await conn.send(
        Api.ListOffsets,
        {
          replicaId: -1,
          isolationLevel: 0,
          topics: [{ name: T, partitions: [{ partitionIndex: 0, currentLeaderEpoch: moved.epoch, timestamp: -1n, maxNumOffsets: 1 }] }],
        },
        { version: 7 },
      );
      const p = r.topics[0]!.partitions[0]!;
      if (p.errorCode === ErrorCode.OFFSET_NOT_AVAILABLE) return undefined;
      return p;
    });
    assert.deepEqual([latest.errorCode, latest.offset, latest.leaderEpoch], [ErrorCode.NONE, 10n, moved.epoch]);
  } finally {
    conn.close();
    // Later tests need all three brokers, whatever happened here.
    await restart(moved.old, T);
  }
});

const CONSUMER = `
import json, sys, time
from confluent_kafka import Consumer, TopicPartition, KafkaError
bootstrap, topic, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'epoch-test', 'enable.auto.commit': False,
              'auto.offset.reset': 'error', 'topic.metadata.refresh.interval.ms': 1000, 'socket.timeout.ms': 10000,
              'debug': 'protocol'})
c.assign([TopicPartition(topic, 0, 0)])
offsets, errors, said = [], [], False
deadline = time.time() + 240
while len(offsets) < total and time.time() < deadline:
    m = c.poll(0.5)
    if m is None:
        continue
    if m.error():
        errors.append([m.error().code(), m.error().str()])
        continue
    offsets.append(m.offset())
    if len(offsets) >= total // 2 and not said:
        said = True
        print('HALF', flush=True)
c.close()
print(json.dumps({'offsets': offsets, 'errors': errors}), flush=True)
`;

test('librdkafka (confluent-kafka) consumes through kill -9 of the leader: no error, nothing skipped', { timeout: 600_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'python3-confluent-kafka')) return;
  if (!c) return t.diagnostic('replica fetching is not in this build: skipped');
  const T = 'epochs-rdkafka';
  await c.waitForRegistered([0, 1, 2]);
  await createTopic(T);
  for (let i = 0; i < 10; i++) await produce(T, 10, `a${i}`);
  const child = spawn(PYTHON, ['-c', CONSUMER, c.bootstrap(), T, '200'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  try {
    await c.waitFor('the consumer halfway', 120_000, () => out.includes('HALF'));
    const moved = await killLeader(T);
    t.diagnostic(`leader ${moved.old} (epoch ${moved.oldEpoch}) -> ${moved.leader} (epoch ${moved.epoch}) while consuming`);
    for (let i = 0; i < 10; i++) await produce(T, 10, `b${i}`);
    const code = await exited;
    assert.equal(code, 0, err);
    const result = JSON.parse(out.trim().split('\n').pop()!) as { offsets: number[]; errors: [number, string][] };
    // A killed broker's connection errors are librdkafka's informational transport events; nothing else is allowed.
    const transport = new Set([-195, -187]); // _TRANSPORT, _ALL_BROKERS_DOWN
    const bad = result.errors.filter(([e]) => !transport.has(e));
    t.diagnostic(`consumed ${result.offsets.length}, errors ${JSON.stringify(result.errors)}`);
    // Whether this librdkafka validates its position (KIP-320: OffsetForLeaderEpoch after a leader change).
    const validations = err.split('\n').filter((l) => /Sent OffsetForLeaderEpochRequest/.test(l)).length;
    const fetchVersions = [...new Set([...err.matchAll(/Sent FetchRequest \(v(\d+)/g)].map((m) => m[1]))];
    t.diagnostic(`librdkafka sent ${validations} OffsetForLeaderEpoch requests; Fetch versions ${fetchVersions.join(',')}`);
    assert.deepEqual(bad, [], 'no error but transport events');
    assert.deepEqual(
      result.offsets,
      Array.from({ length: 200 }, (_, i) => i),
      'every offset once, in order',
    );
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    for (const b of c.brokers) if (!b.running) await restart(b.id, T);
  }
});

test('kafka-delete-records.sh on RF 3: answered with the low watermark once every replica followed; a later leader starts there', {
  timeout: 600_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  if (!c) return t.diagnostic('replica fetching is not in this build: skipped');
  const T = 'epochs-delete';
  await c.waitForRegistered([0, 1, 2]);
  await createTopic(T);
  for (let i = 0; i < 5; i++) await produce(T, 10, `d${i}`);
  const dir = await mkdtemp(join(tmpdir(), 'fjord-delrec-'));
  try {
    const file = join(dir, 'offsets.json');
    await writeFile(file, JSON.stringify({ version: 1, partitions: [{ topic: T, partition: 0, offset: 30 }] }));
    const started = Date.now();
    const r = await runCli('kafka-delete-records', ['--bootstrap-server', c.bootstrap(), '--offset-json-file', file], { timeoutMs: 90_000 });
    t.diagnostic(`kafka-delete-records.sh in ${Date.now() - started} ms: ${r.stdout.trim().split('\n').pop()}`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`partition: ${T}-0\\tlow_watermark: 30`));
    // Each follower moved its log start: kill -9 of the leader at once makes one of them lead,
    // from offset 30; then the other follower leads (its peers down), from 30 too.
    const leaders: number[] = [];
    const earliest = async (down: number[]): Promise<string> => {
      const got = await runCli(
        'kafka-get-offsets',
        ['--bootstrap-server', c!.bootstrap([0, 1, 2].filter((id) => !down.includes(id))), '--topic', T, '--time', '-2'],
        { timeoutMs: 60_000 },
      );
      assert.equal(got.code, 0, got.stderr);
      return got.stdout.trim();
    };
    const first = await killLeader(T);
    leaders.push(first.old, first.leader);
    const e1 = await earliest([first.old]);
    t.diagnostic(`leader ${first.old} -> ${first.leader}: earliest ${e1}`);
    assert.equal(e1, `${T}:0:30`);
    const third = [0, 1, 2].find((id) => !leaders.includes(id))!;
    const second = await killLeader(T);
    assert.equal(second.leader, third, 'the last replica leads');
    const e2 = await earliest([first.old, second.old]);
    t.diagnostic(`leader ${second.old} -> ${second.leader}: earliest ${e2}`);
    assert.equal(e2, `${T}:0:30`);
    await c.broker(first.old).start();
    await restart(second.old, T);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
