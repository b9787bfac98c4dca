/**
 * The leader side of replication (issue 12), without a real follower: a cluster-mode broker's
 * replica manager over real logs, made leader of a partition with replicas [1, 2, 3] by
 * LeaderAndIsr, and followers played by replica fetches (replica id 2 and 3) through the Fetch
 * handler, as a follower's fetcher sends them. ISR changes go to a fake writer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader, Writer, type Input } from '../../src/protocol/primitives/index.js';
import { FetchRequestCodec, FetchResponseCodec, type FetchRequest, type FetchResponse } from '../../src/protocol/messages/index.js';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';
import { encodeBatch } from '../../src/protocol/records/index.js';
import { ZkBrokerMetadata } from '../../src/metadata/zk/zk-broker-metadata.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { ReplicaManager } from '../../src/replication/replica-manager.js';
import type { IsrChange, IsrWriter, Partition } from '../../src/replication/partition.js';
import { brokerLogDefaults } from '../../src/replication/log-config.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { ControlRequests } from '../../src/server/cluster/control-requests.js';
import { fetchHandler } from '../../src/server/handlers/01-fetch.js';
import type { RequestContext } from '../../src/server/handlers/types.js';
import type { BrokerServices } from '../../src/server/broker-services.js';
import { ReplicaManagerCoordinatorLog, coordinatorAppendError } from '../../src/coordinator/runtime/partition-log.js';
import { broker, fakeZk, header, pstate, simpleAssigner } from '../metadata/zk/zk-broker-helpers.js';
import { startTestBroker } from '../helpers/broker.js';
import { testConnection } from '../helpers/connection-context.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAw';
const T = 'rep';

/** An ISR writer that records each change and answers as told (default: accepted, epoch + 1). */
class FakeIsrWriter implements IsrWriter {
  readonly changes: IsrChange[] = [];
  answer: (c: IsrChange) => number | 'BAD_VERSION' = (c) => c.partitionEpoch + 1;
  writeIsr(change: IsrChange): Promise<number | 'BAD_VERSION'> {
    this.changes.push(change);
    return Promise.resolve(this.answer(change));
  }
}

interface Leader {
  rm: ReplicaManager;
  control: ControlRequests;
  image: ZkBrokerMetadata;
  writer: FakeIsrWriter;
  services: Partial<BrokerServices>;
  partition(): Partition;
  close(): Promise<void>;
}

/** Broker 1, leader of `rep-0` (replicas [1, 2, 3], ISR `isr`) at leader epoch `epoch`. */
async function startLeader(opts: { isr?: number[]; epoch?: number; configs?: Record<string, string>; withoutUpdateMetadata?: boolean } = {}): Promise<Leader> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-leader-'));
  const entries: [string, string][] = [['broker.id', '1'], ['log.dirs', dir], ['zookeeper.connect', '127.0.0.1:1'], ...Object.entries(opts.configs ?? {})];
  const config = buildBrokerConfig(new Map(entries));
  const logger = silentLogger();
  const zk = fakeZk();
  const image = new ZkBrokerMetadata({ brokerId: 1, clusterId: 'c', zk: zk.api, assigner: simpleAssigner, logger, writeTimeoutMs: 2000 });
  const logManager = await LogManager.open({ logDirs: [dir], defaults: brokerLogDefaults(config), cleanerEnabled: false });
  const writer = new FakeIsrWriter();
  const rm = await ReplicaManager.start({ config, metadata: image, logManager, logger, controllerManaged: true, isrWriter: writer });
  const control = new ControlRequests({ brokerId: 1, image, replicaManager: rm, brokerEpoch: () => -1n, logger });
  const state = pstate(T, 0, 1, opts.epoch ?? 1, [1, 2, 3], opts.isr ?? [1, 2, 3]);
  // withoutUpdateMetadata: the controller's UpdateMetadata (sent after LeaderAndIsr) has not arrived yet.
  if (!opts.withoutUpdateMetadata) await control.updateMetadata(header(1), [broker(1), broker(2), broker(3)], [state], new Map([[T, TOPIC_ID]]));
  const res = await control.leaderAndIsr(header(1), [{ ...state, topicId: TOPIC_ID }]);
  assert.equal(res.partitions[0]!.errorCode, ErrorCode.NONE);
  return {
    rm, control, image, writer,
    services: { replicaManager: rm, metadata: image, config },
    partition: () => rm.getPartition(T, 0)!,
    async close() {
      await image.close();
      await rm.shutdown();
      await logManager.shutdown();
      await rm_(dir);
    },
  };
}
const rm_ = (dir: string) => rm(dir, { recursive: true, force: true });

function batch(n: number, tag = 'v'): Buffer {
  return encodeBatch({
    records: Array.from({ length: n }, (_, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(`${tag}${i}`), headers: [] })),
    baseTimestamp: BigInt(Date.now()),
  });
}

/** One Fetch through the real handler, in `version`'s layout both ways. */
async function fetchVia(l: Leader, version: number, body: Input<FetchRequest>): Promise<FetchResponse> {
  const w = new Writer(256);
  FetchRequestCodec.write(w, { maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 1, sessionEpoch: -1, ...body }, version);
  const ctx: RequestContext = {
    header: { apiKey: 1, apiVersion: version, correlationId: 1, clientId: 'replica' },
    connection: testConnection(),
    services: l.services as BrokerServices,
  };
  const writeBody = await fetchHandler.run(new Reader(w.result()), ctx);
  const out = new Writer(256);
  writeBody!(out);
  return FetchResponseCodec.read(new Reader(out.result()), version);
}

/** A replica fetch of rep-0 by `replicaId` (v12 unless told), replica id in the v15+ place when asked. */
function replicaFetch(l: Leader, replicaId: number, fetchOffset: number, extra: { version?: number; currentLeaderEpoch?: number; lastFetchedEpoch?: number; maxWaitMs?: number } = {}): Promise<FetchResponse> {
  const version = extra.version ?? 12;
  const ids = version >= 15 ? { replicaId: -1, replicaState: { replicaId, replicaEpoch: -1n } } : { replicaId };
  return fetchVia(l, version, {
    ...ids,
    maxWaitMs: extra.maxWaitMs ?? 0,
    topics: [{ topic: T, topicId: TOPIC_ID, partitions: [{ partition: 0, fetchOffset: BigInt(fetchOffset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: extra.currentLeaderEpoch ?? -1, lastFetchedEpoch: extra.lastFetchedEpoch ?? -1, logStartOffset: -1n }] }],
  });
}

function consumerFetch(l: Leader, fetchOffset: number, maxWaitMs = 0): Promise<FetchResponse> {
  return fetchVia(l, 12, {
    replicaId: -1,
    maxWaitMs,
    topics: [{ topic: T, partitions: [{ partition: 0, fetchOffset: BigInt(fetchOffset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }] }],
  });
}

const part = (r: FetchResponse) => r.responses[0]!.partitions[0]!;

function produce(l: Leader, n: number, acks: number, timeoutMs = 10_000) {
  return l.rm.appendRecords(T, 0, batch(n), { requiredAcks: acks, origin: 'client', produceVersion: 9, timeoutMs });
}

test('leader state from LeaderAndIsr: ISR, replicas, partition epoch; the HW waits for every ISR member and consumers read only below it', async () => {
  const l = await startLeader();
  try {
    const p = l.partition();
    assert.deepEqual([p.isLeader, [...p.isr], [...p.replicas], p.partitionEpoch, p.controllerEpoch], [true, [1, 2, 3], [1, 2, 3], 0, 1]);
    const res = await produce(l, 3, 1);
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.equal(p.logEndOffset, 3);
    assert.equal(p.highWatermark, 0, 'no follower has it yet');
    // A consumer sees nothing below the HW.
    const c0 = part(await consumerFetch(l, 0));
    assert.equal(c0.records!.length, 0);
    assert.equal(c0.highWatermark, 0n);
    // A follower reads up to the log end: all 3 records.
    const f2 = part(await replicaFetch(l, 2, 0));
    assert.equal(f2.errorCode, ErrorCode.NONE);
    assert.ok(f2.records!.length > 0, 'the follower gets records above the HW');
    assert.equal(f2.highWatermark, 0n);
    // Follower 2 has all three; 3 still has none: HW stays.
    await replicaFetch(l, 2, 3);
    assert.equal(p.followerState(2)!.logEndOffset, 3);
    assert.equal(p.highWatermark, 0);
    await replicaFetch(l, 3, 2);
    assert.equal(p.highWatermark, 2, 'min over the ISR');
    const f3 = part(await replicaFetch(l, 3, 3, { version: 15 }));
    assert.equal(f3.errorCode, ErrorCode.NONE, 'v15: replica id from replica_state');
    assert.equal(p.highWatermark, 3);
    assert.equal(f3.highWatermark, 3n, 'the response carries the HW the fetch itself advanced');
    const c1 = part(await consumerFetch(l, 0));
    assert.ok(c1.records!.length > 0);
    assert.equal(c1.highWatermark, 3n);
  } finally {
    await l.close();
  }
});

test('acks=all is answered once the ISR has the data; a parked consumer fetch wakes on the HW advance; the wait times out with REQUEST_TIMED_OUT', async () => {
  const l = await startLeader();
  try {
    const p = l.partition();
    const parked = consumerFetch(l, 0, 20_000);
    let answered = false;
    const pending = produce(l, 2, -1).then((r) => ((answered = true), r));
    // The append is in the log, but not acknowledged.
    const deadline = Date.now() + 10_000;
    while (p.logEndOffset < 2 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    assert.equal(p.logEndOffset, 2);
    await replicaFetch(l, 2, 2);
    await new Promise((r) => setImmediate(r));
    assert.equal(answered, false, 'one follower of two is not enough');
    const started = Date.now();
    await replicaFetch(l, 3, 2);
    const res = await pending;
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.equal(res.baseOffset, 0);
    const c = part(await parked);
    assert.ok(c.records!.length > 0, 'the consumer fetch was woken with the records');
    assert.ok(Date.now() - started < 10_000, 'woken by the HW, not by its 20 s deadline');
    // Nobody fetches: the produce times out.
    const t0 = Date.now();
    const timedOut = await produce(l, 1, -1, 300);
    assert.equal(timedOut.errorCode, ErrorCode.REQUEST_TIMED_OUT);
    assert.ok(Date.now() - t0 >= 250, 'waited for its timeout');
    // acks=1 answers after the local append, HW or not.
    assert.equal((await produce(l, 1, 1)).errorCode, ErrorCode.NONE);
  } finally {
    await l.close();
  }
});

test('replica fetch errors: unknown replica, fenced/unknown epochs, a follower partition, diverging epoch (v12+)', async () => {
  const l = await startLeader({ epoch: 1 });
  try {
    await produce(l, 2, 1); // epoch 1: offsets 0-1
    // Not a replica: NOT_LEADER_OR_FOLLOWER, or UNKNOWN_LEADER_EPOCH when it names an epoch (as Kafka).
    assert.equal(part(await replicaFetch(l, 7, 0)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(part(await replicaFetch(l, 7, 0, { currentLeaderEpoch: 1 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal(l.partition().followerState(7), undefined);
    assert.equal(part(await replicaFetch(l, 2, 0, { currentLeaderEpoch: 0 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(part(await replicaFetch(l, 2, 0, { currentLeaderEpoch: 5 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal(l.partition().followerState(2)!.logEndOffset, -1, 'refused fetches record nothing');
    // New epoch 2 from offset 2.
    const s2 = pstate(T, 0, 1, 2, [1, 2, 3]);
    await l.control.leaderAndIsr(header(1), [{ ...s2, topicId: TOPIC_ID, zkVersion: 1 }]);
    assert.equal(l.partition().partitionEpoch, 1);
    await produce(l, 1, 1); // epoch 2: offset 2
    // A follower that holds an epoch-1 record at offset 2 (a former leader's tail): diverges at (1, 2).
    const d = await replicaFetch(l, 2, 3, { lastFetchedEpoch: 1, currentLeaderEpoch: 2 });
    assert.equal(part(d).errorCode, ErrorCode.NONE);
    assert.deepEqual([part(d).divergingEpoch.epoch, part(d).divergingEpoch.endOffset], [1, 2n]);
    assert.equal(part(d).records!.length, 0);
    assert.equal(l.partition().followerState(2)!.logEndOffset, -1, 'a diverging fetch records no position');
    // An epoch newer than the leader's latest: its end is unknown, OFFSET_OUT_OF_RANGE (Kafka's validateLastFetchedEpoch).
    const d2 = part(await replicaFetch(l, 3, 3, { lastFetchedEpoch: 4 }));
    assert.equal(d2.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    // One older than every epoch the leader holds: it ended where the first known one starts.
    const d3 = part(await replicaFetch(l, 3, 3, { lastFetchedEpoch: 0 }));
    assert.deepEqual([d3.errorCode, d3.divergingEpoch.epoch, d3.divergingEpoch.endOffset], [ErrorCode.NONE, 0, 0n]);
    // In line: records, no divergence.
    const ok = part(await replicaFetch(l, 2, 2, { lastFetchedEpoch: 1, currentLeaderEpoch: 2 }));
    assert.equal(ok.divergingEpoch.epoch, -1);
    assert.ok(ok.records!.length > 0);
    assert.equal(l.partition().followerState(2)!.logEndOffset, 2);
    // Beyond the log end: OFFSET_OUT_OF_RANGE, nothing recorded.
    assert.equal(part(await replicaFetch(l, 3, 9)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    assert.equal(l.partition().followerState(3)!.logEndOffset, -1);
    // A follower partition answers replica fetches NOT_LEADER_OR_FOLLOWER.
    await l.control.leaderAndIsr(header(1), [{ ...pstate(T, 0, 2, 3, [1, 2, 3]), topicId: TOPIC_ID, zkVersion: 2 }]);
    assert.equal(part(await replicaFetch(l, 3, 0)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  } finally {
    await l.close();
  }
});

test('a replica fetch at the log end long-polls and wakes on the next leader append', async () => {
  const l = await startLeader();
  try {
    await produce(l, 1, 1);
    await replicaFetch(l, 2, 1);
    const started = Date.now();
    const parked = replicaFetch(l, 2, 1, { maxWaitMs: 20_000 });
    await new Promise((r) => setImmediate(r));
    await produce(l, 1, 1);
    const r = part(await parked);
    assert.ok(r.records!.length > 0, 'woken with the new record');
    assert.ok(Date.now() - started < 10_000, 'woken by the append, not by its 20 s deadline');
  } finally {
    await l.close();
  }
});

test('a replica fetch by topic id (v13+) is served from LeaderAndIsr alone, before UpdateMetadata gives the image the topic; a consumer fetch is not', async () => {
  // A new topic: the follower fetches as soon as its own LeaderAndIsr is processed, usually before
  // the leader has the controller's UpdateMetadata. Answered UNKNOWN_TOPIC_ID, it would back off
  // replica.fetch.backoff.ms (1 s), stalling every acks=all produce to the topic that long.
  const l = await startLeader({ withoutUpdateMetadata: true });
  try {
    assert.equal(l.image.topicById(TOPIC_ID), undefined, 'the metadata image does not know the topic yet');
    // (Produce needs the image's topic; the leader's log takes the records directly.)
    assert.equal((await l.partition().appendAsLeader(batch(2))).errorCode, ErrorCode.NONE);
    for (const version of [13, 15, 17]) {
      const r = await replicaFetch(l, 2, 0, { version });
      assert.equal(part(r).errorCode, ErrorCode.NONE, `v${version}`);
      assert.ok(part(r).records!.length > 0, `v${version}: records`);
    }
    assert.equal(l.partition().followerState(2)!.logEndOffset, 0);
    await replicaFetch(l, 2, 2, { version: 13 });
    await replicaFetch(l, 3, 2, { version: 13 });
    assert.equal(l.partition().highWatermark, 2, 'the fetches count for the high watermark');
    // An id no hosted partition has (say, of a deleted topic of the same name) is still unknown.
    const other = await fetchVia(l, 13, {
      replicaId: 2,
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAQQ', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }] }],
    });
    assert.equal(part(other).errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
    // Consumers still resolve ids through the metadata image only, as before.
    const c = await fetchVia(l, 13, {
      replicaId: -1,
      topics: [{ topicId: TOPIC_ID, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }] }],
    });
    assert.equal(part(c).errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
  } finally {
    await l.close();
  }
});

test('taking the lead of a partition answers its followers\' parked fetches at once, and their fetches park only briefly until they fetch it', async () => {
  // A follower whose fetcher already fetches from this broker has a fetch parked here; the first
  // fetch that can name a partition this broker now leads is the next one. Left to its 20 s wait,
  // the new partition (and every acks=all produce to it) would wait that long.
  const l = await startLeader();
  const TOPIC2_ID = 'AAAAAAAAAAAAAAAAAAAABA';
  try {
    await produce(l, 1, 1);
    await replicaFetch(l, 2, 1);
    await replicaFetch(l, 3, 1);
    const started = Date.now();
    const parked = replicaFetch(l, 2, 1, { maxWaitMs: 20_000 });
    const registered = Date.now() + 10_000;
    while (l.partition().replicaWaiters.size === 0 && Date.now() < registered) await new Promise((r) => setImmediate(r));
    assert.equal(l.partition().replicaWaiters.size, 1, 'the fetch is parked');
    // LeaderAndIsr: broker 1 also leads rep2-0 now, followers 2 and 3.
    const s2 = pstate('rep2', 0, 1, 1, [1, 2, 3]);
    assert.equal((await l.control.leaderAndIsr(header(1), [{ ...s2, topicId: TOPIC2_ID }])).partitions[0]!.errorCode, ErrorCode.NONE);
    const answered = part(await parked);
    assert.equal(answered.errorCode, ErrorCode.NONE);
    assert.equal(answered.records!.length, 0, 'answered without data');
    assert.ok(Date.now() - started < 10_000, `answered by the new leadership, not its 20 s wait (${Date.now() - started} ms)`);
    // Follower 2's next fetch may still lack rep2-0 (it processes its own LeaderAndIsr later): it
    // parks briefly, not for 20 s.
    const t1 = Date.now();
    assert.equal(part(await replicaFetch(l, 2, 1, { maxWaitMs: 20_000 })).records!.length, 0);
    assert.ok(Date.now() - t1 < 10_000, `a brief park while rep2-0 awaits its first fetch (${Date.now() - t1} ms)`);
    // Once follower 2 fetched rep2-0, its fetches park for their whole wait again: woken here by an append.
    await fetchVia(l, 12, {
      replicaId: 2,
      topics: [{ topic: 'rep2', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }] }],
    });
    assert.equal(l.rm.getPartition('rep2', 0)!.followerState(2)!.logEndOffset, 0);
    const long = replicaFetch(l, 2, 1, { maxWaitMs: 20_000 });
    const early = await Promise.race([long.then(() => 'answered'), new Promise<string>((r) => setTimeout(() => r('parked'), 1000))]);
    assert.equal(early, 'parked', 'parks for its max wait again');
    await produce(l, 1, 1);
    assert.ok(part(await long).records!.length > 0, 'woken by the append with the record');
    // Follower 3 has not fetched rep2-0 either: still brief for it (within its max wait).
    const t3 = Date.now();
    await replicaFetch(l, 3, 2, { maxWaitMs: 20_000 });
    assert.ok(Date.now() - t3 < 10_000, 'follower 3 parks briefly too');
  } finally {
    await l.close();
  }
});

test('ISR shrink and expand through the writer; NOT_ENOUGH_REPLICAS below min.insync.replicas; a BAD_VERSION gives the change up', async () => {
  const l = await startLeader({ configs: { 'min.insync.replicas': '2' } });
  try {
    const p = l.partition();
    await produce(l, 2, 1);
    await replicaFetch(l, 2, 2); // 2 caught up; 3 never fetches
    const lag = 30_000;
    // Not yet lagging long enough: nothing changes.
    l.rm.maybeShrinkIsr(Date.now());
    assert.equal(l.writer.changes.length, 0);
    l.rm.maybeShrinkIsr(Date.now() + lag + 1_000);
    assert.equal(l.writer.changes.length, 1);
    assert.deepEqual(l.writer.changes[0], { topic: T, partition: 0, leader: 1, leaderEpoch: 1, isr: [1, 2], controllerEpoch: 1, partitionEpoch: 0 });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2], 1]);
    assert.equal(p.highWatermark, 2, 'the HW no longer waits for 3');
    // acks=all with ISR 2 >= min.insync 2: answered once 2 has it.
    const pending = produce(l, 1, -1);
    await new Promise((r) => setImmediate(r));
    await replicaFetch(l, 2, 3);
    assert.equal((await pending).errorCode, ErrorCode.NONE);
    // 3 catches up to the HW: it rejoins.
    await replicaFetch(l, 3, 3);
    assert.equal(l.writer.changes.length, 2);
    assert.deepEqual([l.writer.changes[1]!.isr, l.writer.changes[1]!.partitionEpoch], [[1, 2, 3], 1]);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2, 3], 2]);
    // Both followers fall behind: ISR [1] < 2, and the controller moved the state meanwhile (BAD_VERSION): given up.
    await produce(l, 1, 1);
    l.writer.answer = () => 'BAD_VERSION';
    l.rm.maybeShrinkIsr(Date.now() + lag + 1_000);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(l.writer.changes[2]!.isr, [1]);
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2, 3], 2], 'unchanged after BAD_VERSION');
    l.writer.answer = (c) => c.partitionEpoch + 1;
    // While it waits, the ISR shrinks below min.insync.replicas: NOT_ENOUGH_REPLICAS_AFTER_APPEND.
    const waiting = produce(l, 1, -1);
    await new Promise((r) => setImmediate(r));
    l.rm.maybeShrinkIsr(Date.now() + lag + 1_000);
    assert.equal((await waiting).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    assert.deepEqual([...p.isr], [1]);
    // And before the append now: NOT_ENOUGH_REPLICAS, nothing appended.
    const end = p.logEndOffset;
    assert.equal((await produce(l, 1, -1)).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal(p.logEndOffset, end);
  } finally {
    await l.close();
  }
});

test('losing leadership answers waiting acks=all produces NOT_LEADER_OR_FOLLOWER', async () => {
  const l = await startLeader();
  try {
    const pending = produce(l, 1, -1);
    await new Promise((r) => setImmediate(r));
    await l.control.leaderAndIsr(header(1), [{ ...pstate(T, 0, 2, 2, [1, 2, 3]), topicId: TOPIC_ID, zkVersion: 1 }]);
    assert.equal((await pending).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  } finally {
    await l.close();
  }
});

test('coordinator writes (acks=-1, origin coordinator) are acknowledged only once replicated, and time out after offsets.commit.timeout.ms', async () => {
  const l = await startLeader({ configs: { 'offsets.commit.timeout.ms': '300' } });
  try {
    const log = new ReplicaManagerCoordinatorLog(l.rm, T);
    let done = false;
    const pending = log.append(0, [{ key: Buffer.from('k'), value: Buffer.from('v') }], Date.now()).then(() => (done = true));
    const deadline = Date.now() + 10_000;
    while (l.partition().logEndOffset < 1 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    await replicaFetch(l, 2, 1);
    await new Promise((r) => setImmediate(r));
    assert.equal(done, false, 'not acknowledged before the whole ISR has it');
    await replicaFetch(l, 3, 1);
    await pending;
    assert.equal(l.partition().highWatermark, 1);
    // Nobody replicates the next one: the coordinator hears COORDINATOR_NOT_AVAILABLE (Kafka's mapping of the timeout's error).
    await assert.rejects(log.append(0, [{ key: Buffer.from('k'), value: Buffer.from('v2') }], Date.now()), (e: unknown) => e instanceof KafkaError && e.code === coordinatorAppendError(ErrorCode.REQUEST_TIMED_OUT));
  } finally {
    await l.close();
  }
});

test('embedded mode is unchanged: ISR = replicas = [self], no ISR writer, HW = LEO as soon as an acks=all append completes', async () => {
  const b = await startTestBroker({ 'min.insync.replicas': '1' });
  try {
    const { metadata, replicaManager } = b.broker.services;
    await metadata.createTopic({ name: 'solo', numPartitions: 1, replicationFactor: 1 });
    await replicaManager.syncTopic('solo');
    const p = replicaManager.getPartition('solo', 0)!;
    const self = b.broker.services.config.brokerId;
    assert.deepEqual([p.isLeader, [...p.isr], [...p.replicas], p.isrWriter], [true, [self], [self], undefined]);
    const res = await replicaManager.appendRecords('solo', 0, batch(5), { requiredAcks: -1, origin: 'client', produceVersion: 9, timeoutMs: 0 });
    assert.equal(res.errorCode, ErrorCode.NONE, 'answered at once even with timeout 0: the ISR is only the leader');
    assert.deepEqual([p.logEndOffset, p.highWatermark], [5, 5]);
    replicaManager.maybeShrinkIsr(Date.now() + 3_600_000);
    assert.deepEqual([...p.isr], [self]);
  } finally {
    await b.stop();
  }
});

test('while an ISR change is being written the HW waits for the larger ISR: a pending shrink does not advance it, a pending expand already counts the new member', async () => {
  const l = await startLeader({ isr: [1, 2] });
  try {
    const p = l.partition();
    let release!: (v: number) => void;
    l.writer.writeIsr = (change) => {
      l.writer.changes.push(change);
      return new Promise((resolve) => (release = resolve));
    };
    await produce(l, 2, 1);
    // Expand: 3 reaches the HW (0) and is proposed; until accepted, the HW needs it too.
    await replicaFetch(l, 3, 0);
    assert.deepEqual(l.writer.changes.map((c) => c.isr), [[1, 2, 3]]);
    assert.equal(p.isrUpdateInFlight, true);
    await replicaFetch(l, 2, 2);
    assert.equal(p.highWatermark, 0, 'the pending member 3 holds the HW back');
    release(1);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.partitionEpoch, p.isrUpdateInFlight], [[1, 2, 3], 1, false]);
    await replicaFetch(l, 3, 2);
    assert.equal(p.highWatermark, 2);
    // Shrink: 3 falls behind; until the change is accepted the HW still waits for 3.
    await produce(l, 1, 1);
    await replicaFetch(l, 2, 3);
    l.rm.maybeShrinkIsr(Date.now() + 60_000);
    assert.deepEqual(l.writer.changes.at(-1)!.isr, [1, 2]);
    assert.equal(p.highWatermark, 2, 'not advanced on a shrink that may yet fail');
    l.rm.maybeShrinkIsr(Date.now() + 60_000);
    assert.equal(l.writer.changes.length, 2, 'one change in flight at a time');
    release(2);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.highWatermark], [[1, 2], 3]);
  } finally {
    await l.close();
  }
});

test('a LeaderAndIsr of the same leader epoch with an older partition epoch (zkVersion) does not undo the leader\'s own ISR change', async () => {
  // Property test seed 1563065635: the leader shrank its ISR to [1,2] (zkVersion 5); a new
  // controller's failover LeaderAndIsr, read from ZooKeeper before that write (same leader epoch,
  // zkVersion 4, ISR [1,2,0]), arrived afterwards and put the lagging replica back, so the high
  // watermark stood past the log end of an ISR member. Kafka's Partition.makeLeader/makeFollower
  // skip a state whose partition epoch is older than the one they know.
  const l = await startLeader();
  try {
    const p = l.partition();
    await produce(l, 2, 1);
    await replicaFetch(l, 2, 2);
    l.rm.maybeShrinkIsr(Date.now() + 31_000);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2], 1]);
    const stale = pstate(T, 0, 1, 1, [1, 2, 3]); // zkVersion 0, ISR [1,2,3]
    const res = await l.control.leaderAndIsr(header(1), [{ ...stale, topicId: TOPIC_ID }]);
    assert.equal(res.partitions[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual([[...p.isr], p.partitionEpoch, p.isLeader, p.leaderEpoch], [[1, 2], 1, true, 1], 'the newer ISR stays');
    // A newer partition epoch of the same leader epoch is taken.
    const newer = { ...pstate(T, 0, 1, 1, [1, 2, 3], [1, 2, 3]), zkVersion: 2 };
    await l.control.leaderAndIsr(header(1), [{ ...newer, topicId: TOPIC_ID }]);
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2, 3], 2]);
  } finally {
    await l.close();
  }
});
