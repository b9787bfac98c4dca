/**
 * A follower fetching over the wire from a real broker acting as leader. The leader is an
 * embedded broker told that the follower is one of its replicas (before the leader side of issue
 * 12 it serves a replica Fetch as a consumer fetch, up to its HW = its log end: enough to copy it). The follower is a cluster-mode broker's replica side (image,
 * replica manager, control requests, as Broker wires them) told by LeaderAndIsr to follow it.
 * Checks: batches byte-identical (offsets, epochs, timestamps), 100k records caught up, a restart
 * resumes from the checkpointed log end and HW, and truncation when the leader's log was cut and
 * rewritten (by OffsetForLeaderEpoch against a leader capped below Fetch v12, and by
 * OFFSET_OUT_OF_RANGE + ListOffsets).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompressionType, encodeBatch, type KafkaRecord } from '../../src/protocol/records/index.js';
import { ZkBrokerMetadata, type LiveBroker } from '../../src/metadata/zk/zk-broker-metadata.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { ReplicaManager } from '../../src/replication/replica-manager.js';
import { brokerLogDefaults } from '../../src/replication/log-config.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { ControlRequests } from '../../src/server/cluster/control-requests.js';
import type { Partition } from '../../src/replication/partition/partition.js';
import { ReplicaFetcher } from '../../src/replication/fetcher/replica-fetcher.js';
import { RemoteLeaderEndpoint } from '../../src/replication/fetcher/remote-leader.js';
import { followerReplicaOf } from '../../src/replication/fetcher/manager.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { fakeZk, header, pstate, simpleAssigner } from '../metadata/zk/zk-broker-helpers.js';
import { TEST_FETCHER_CONFIG, logBytes, openPartition, tempDir, waitFor } from './fetcher-helpers.js';

const FOLLOWER_ID = 2;
/**
 * The leader stays single-threaded (num.io.threads=1, whatever FJORD_TEST_IO_THREADS says): the
 * test makes the embedded broker's own Partition believe a follower is among its replicas
 * (makeLeader with ISR and replicas) and compares its log byte for byte, which needs the
 * Partition on this thread. With shard workers a user topic's Partition lives on a worker and the
 * shards serve embedded mode only (ISR [self]: docs/threads.md step 1), so there is no leader
 * with followers to test there yet.
 */
const LEADER_PROPS = { 'num.io.threads': '1' };

function records(n: number, tag: string): KafkaRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    attributes: 0,
    timestampDelta: i,
    offsetDelta: i,
    key: Buffer.from(`k${i % 17}`),
    value: Buffer.from(`${tag}-${i}-${'x'.repeat(i % 40)}`),
    headers: [],
  }));
}

async function produce(
  leader: TestBroker,
  topic: string,
  batches: number,
  perBatch: number,
  tag: string,
  opts: { producerId?: bigint; firstSeq?: number } = {},
): Promise<void> {
  const rmL = leader.broker.services.replicaManager;
  const codecs = [CompressionType.None, CompressionType.Gzip, CompressionType.Lz4, CompressionType.Zstd, CompressionType.Snappy];
  for (let b = 0; b < batches; b++) {
    const buf = encodeBatch({
      records: records(perBatch, `${tag}${b}`),
      compression: codecs[b % codecs.length],
      baseTimestamp: BigInt(Date.now()),
      ...(opts.producerId !== undefined ? { producerId: opts.producerId, producerEpoch: 0, baseSequence: (opts.firstSeq ?? 0) + b * perBatch } : {}),
    });
    const res = await rmL.appendRecords(topic, 0, buf, { requiredAcks: 1, origin: 'client', produceVersion: 9 });
    assert.equal(res.errorCode, 0, res.errorMessage ?? '');
  }
}

interface FollowerNode {
  image: ZkBrokerMetadata;
  logManager: LogManager;
  replicaManager: ReplicaManager;
  control: ControlRequests;
  partition(topic: string): Partition | undefined;
  close(): Promise<void>;
}

async function startFollower(dir: string): Promise<FollowerNode> {
  const config = buildBrokerConfig(
    new Map([
      ['broker.id', String(FOLLOWER_ID)],
      ['log.dirs', dir],
      ['zookeeper.connect', '127.0.0.1:1'],
      ['replica.fetch.backoff.ms', '100'],
      ['replica.fetch.wait.max.ms', '100'],
    ]),
  );
  const logger = silentLogger();
  const image = new ZkBrokerMetadata({
    brokerId: FOLLOWER_ID,
    clusterId: 'test-cluster',
    zk: fakeZk().api,
    assigner: simpleAssigner,
    logger,
    writeTimeoutMs: 2000,
  });
  const logManager = await LogManager.open({ logDirs: [dir], defaults: brokerLogDefaults(config), cleanerEnabled: false });
  const replicaManager = await ReplicaManager.start({
    config,
    metadata: image,
    logManager,
    logger,
    controllerManaged: true,
    brokerEndpoint: (id) => image.endpoint(id, 'PLAINTEXT'),
  });
  const control = new ControlRequests({ brokerId: FOLLOWER_ID, image, roles: replicaManager, brokerEpoch: () => -1n, logger });
  return {
    image,
    logManager,
    replicaManager,
    control,
    partition: (topic) => replicaManager.getPartition(topic, 0),
    async close() {
      await image.close();
      await replicaManager.shutdown();
      await logManager.shutdown();
    },
  };
}

function liveBroker(id: number, port: number): LiveBroker {
  return { id, rack: null, endpoints: new Map([['PLAINTEXT', { host: '127.0.0.1', port }]]) };
}

async function follow(node: FollowerNode, leader: TestBroker | null, topic: string, leaderEpoch: number, topicId: string): Promise<void> {
  const brokers = [liveBroker(FOLLOWER_ID, 1)];
  if (leader) brokers.push(liveBroker(0, leader.port));
  const state = pstate(topic, 0, 0, leaderEpoch, [0, FOLLOWER_ID]);
  assert.equal(await node.control.updateMetadata(header(1), brokers, [state], new Map([[topic, topicId]])), 0);
  const res = await node.control.leaderAndIsr(header(1), [{ ...state, topicId }]);
  assert.deepEqual(
    res.partitions.map((p) => p.errorCode),
    [0],
  );
}

/**
 * Makes the embedded broker lead `p` at `epoch` with this test's follower among its replicas.
 * Before the leader side of issue 12 makeLeader takes (selfId, epoch) and a replica fetch is
 * served as a consumer fetch; with it, makeLeader also takes the ISR and replicas, and a fetch from
 * a broker that is not a replica is refused, as Kafka does.
 */
function leadWithFollower(p: Partition, epoch: number): void {
  const makeLeader = p.makeLeader as (selfId: number, leaderEpoch: number, isr?: readonly number[], replicas?: readonly number[]) => void;
  makeLeader.call(p, 0, epoch, [0], [0, FOLLOWER_ID]);
}

async function createTopic(leader: TestBroker, name: string): Promise<{ p: Partition; topicId: string }> {
  const info = await leader.broker.services.metadata.createTopic({ name, numPartitions: 1, replicationFactor: 1 });
  await leader.broker.services.replicaManager.syncTopic(name);
  const p = leader.broker.services.replicaManager.getPartition(name, 0)!;
  leadWithFollower(p, p.leaderEpoch);
  return { p, topicId: info.topicId };
}

async function sameLog(follower: Partition, leader: Partition): Promise<void> {
  assert.equal(follower.logEndOffset, leader.logEndOffset);
  const [f, l] = [await logBytes(follower.log), await logBytes(leader.log)];
  assert.equal(f.length, l.length);
  assert.ok(f.equals(l), "the follower holds the leader's batches byte for byte");
  assert.deepEqual(follower.log.epochs.all(), leader.log.epochs.all());
}

test('a follower copies a real leader: 100k records byte-identical, HW, producer state; a restart resumes from the checkpointed LEO', async (t) => {
  const leader = await startTestBroker(LEADER_PROPS);
  const dir = await mkdtemp(join(tmpdir(), 'fjord-follower-'));
  let node = await startFollower(dir);
  try {
    assert.equal(leader.broker.services.replicaManager.replicaFetchers, undefined, 'embedded mode has no replica fetchers');
    const { p: leaderP, topicId } = await createTopic(leader, 'rep');
    await produce(leader, 'rep', 98, 1000, 'a');
    await produce(leader, 'rep', 2, 1000, 'idem', { producerId: 4242n });
    assert.equal(leaderP.logEndOffset, 100_000);
    const t0 = Date.now();
    await follow(node, leader, 'rep', leaderP.leaderEpoch, topicId);
    const fp = node.partition('rep')!;
    assert.equal(fp.isLeader, false, 'clients still get NOT_LEADER_OR_FOLLOWER from the follower');
    await waitFor('100k records copied', () => fp.logEndOffset === 100_000 && fp.highWatermark === 100_000, 120_000);
    t.diagnostic(`caught up 100,000 records (${leaderP.log.size} bytes) in ${Date.now() - t0} ms`);
    await sameLog(fp, leaderP);
    // The idempotent producer's last batch is known to the follower: a retry would be a duplicate.
    const dup = fp.producers.check(4242n, 0, 1000, 1999);
    assert.equal(dup.kind, 'duplicate');
    // Live appends keep flowing.
    await produce(leader, 'rep', 3, 10, 'live');
    await waitFor('live appends copied', () => fp.logEndOffset === leaderP.logEndOffset && fp.highWatermark === leaderP.highWatermark);

    // Restart: the follower comes back with its log and checkpointed HW, and fetches from its log end.
    const oldEnd = fp.logEndOffset;
    const oldHw = fp.highWatermark;
    await node.close();
    await produce(leader, 'rep', 5, 100, 'after');
    node = await startFollower(dir);
    // First without the leader's endpoint known: nothing can be fetched, the starting point shows.
    await follow(node, null, 'rep', leaderP.leaderEpoch, topicId);
    const again = node.partition('rep')!;
    assert.equal(again.logEndOffset, oldEnd);
    assert.equal(again.highWatermark, oldHw, 'the HW comes back from replication-offset-checkpoint');
    const fetcher = node.replicaManager.replicaFetchers!.fetcherOf('rep', 0)!;
    assert.equal(fetcher.stateOf('rep-0')!.fetchOffset, oldEnd, 'fetching resumes from the log end (epochs known)');
    await follow(node, leader, 'rep', leaderP.leaderEpoch, topicId);
    await waitFor('caught up after restart', () => again.logEndOffset === leaderP.logEndOffset && again.highWatermark === leaderP.highWatermark, 60_000);
    await sameLog(again, leaderP);
  } finally {
    await node.close();
    await leader.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test("the leader's log cut and rewritten: the follower truncates (OffsetForLeaderEpoch; out of range + ListOffsets) and matches it", async () => {
  const leader = await startTestBroker(LEADER_PROPS);
  const f = await tempDir('fjord-follower-');
  const follower = await openPartition(f.dir, 'cut');
  const endpoint = (maxFetchVersion?: number) =>
    new RemoteLeaderEndpoint({
      brokerId: FOLLOWER_ID,
      leaderId: 0,
      endpointOf: () => ({ host: '127.0.0.1', port: leader.port }),
      socketTimeoutMs: 5000,
      clientId: 'test-follower',
      ...(maxFetchVersion !== undefined ? { maxFetchVersion } : {}),
    });
  let fetcher = new ReplicaFetcher(endpoint(11), 0, TEST_FETCHER_CONFIG, silentLogger());
  fetcher.start();
  try {
    const { p: leaderP, topicId } = await createTopic(leader, 'cut');
    await produce(leader, 'cut', 10, 10, 'old');
    const e0 = leaderP.leaderEpoch;
    fetcher.addPartitions([{ replica: followerReplicaOf(follower), topicId, leaderId: 0, leaderEpoch: e0, fetchOffset: 0 }]);
    await waitFor('copied', () => follower.logEndOffset === 100);
    await sameLog(follower, leaderP);
    await fetcher.removePartitions(['cut-0']);

    // A new leader epoch whose log diverges at 50: the follower must drop 50..99.
    await leaderP.truncateTo(50);
    leadWithFollower(leaderP, e0 + 1);
    await produce(leader, 'cut', 3, 20, 'rewritten');
    assert.equal(leaderP.logEndOffset, 110);
    fetcher.addPartitions([{ replica: followerReplicaOf(follower), topicId, leaderId: 0, leaderEpoch: e0 + 1, fetchOffset: follower.logEndOffset }]);
    await waitFor('rewritten tail copied', () => follower.logEndOffset === 110 && follower.highWatermark === 110);
    await sameLog(follower, leaderP);
    await fetcher.shutdown();

    // The leader's log cut below ours (Fetch v12+ leader without diverging answers): out of range,
    // ListOffsets latest says where to cut.
    fetcher = new ReplicaFetcher(endpoint(), 0, TEST_FETCHER_CONFIG, silentLogger());
    fetcher.start();
    await leaderP.truncateTo(70);
    leadWithFollower(leaderP, e0 + 2);
    fetcher.addPartitions([{ replica: followerReplicaOf(follower), topicId, leaderId: 0, leaderEpoch: e0 + 2, fetchOffset: follower.logEndOffset }]);
    await waitFor("cut to the leader's end", () => follower.logEndOffset === 70);
    await produce(leader, 'cut', 2, 5, 'newer');
    await waitFor('caught up again', () => follower.logEndOffset === 80);
    await sameLog(follower, leaderP);
  } finally {
    await fetcher.shutdown();
    await follower.log.close();
    await f.remove();
    await leader.stop();
  }
});

test('LeaderAndIsr and StopReplica drive the fetchers: re-send keeps the state, makeLeader and delete stop fetching', async () => {
  const leader = await startTestBroker(LEADER_PROPS);
  const dir = await mkdtemp(join(tmpdir(), 'fjord-follower-'));
  const node = await startFollower(dir);
  try {
    const { p: leaderP, topicId } = await createTopic(leader, 'roles');
    await produce(leader, 'roles', 10, 10, 'r');
    const e = leaderP.leaderEpoch;
    await follow(node, leader, 'roles', e, topicId);
    const fp = node.partition('roles')!;
    await waitFor('copied', () => fp.logEndOffset === 100);
    const fetchers = node.replicaManager.replicaFetchers!;
    const state = fetchers.fetcherOf('roles', 0)!.stateOf('roles-0');
    assert.ok(state);
    // The same LeaderAndIsr again: the fetch state is kept (no restart, no truncation).
    await follow(node, leader, 'roles', e, topicId);
    assert.equal(fetchers.fetcherOf('roles', 0)!.stateOf('roles-0'), state);

    // This broker becomes the leader: the fetcher lets go first, and stops once idle.
    const lead = pstate('roles', 0, FOLLOWER_ID, e + 1, [0, FOLLOWER_ID]);
    const res = await node.control.leaderAndIsr(header(1), [{ ...lead, topicId }]);
    assert.deepEqual(
      res.partitions.map((p) => p.errorCode),
      [0],
    );
    assert.equal(fp.isLeader, true);
    assert.equal(fp.leaderEpoch, e + 1);
    assert.equal(fetchers.isFetching('roles', 0), false);
    assert.equal(fetchers.allFetchers().size, 0);
    assert.equal(fp.logEndOffset, 100, 'the log is kept as it was copied');

    // Follower again (a later epoch), then deleted by StopReplica.
    const back = pstate('roles', 0, 0, e + 2, [0, FOLLOWER_ID]);
    await node.control.leaderAndIsr(header(1), [{ ...back, topicId }]);
    assert.equal(fp.isLeader, false);
    assert.equal(fetchers.isFetching('roles', 0), true);
    const stopped = await node.control.stopReplica(header(1), [{ topic: 'roles', partition: 0, leaderEpoch: e + 2, deletePartition: true }]);
    assert.deepEqual(
      stopped.partitions.map((p) => p.errorCode),
      [0],
    );
    assert.equal(fetchers.isFetching('roles', 0), false);
    assert.equal(fetchers.allFetchers().size, 0);
    assert.equal(node.partition('roles'), undefined);
  } finally {
    await node.close();
    await leader.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
