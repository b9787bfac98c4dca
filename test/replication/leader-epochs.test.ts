/**
 * Leader epochs on a leader after a leader change (issue 12), as Kafka: makeLeader records the
 * new epoch's start offset in the leader-epoch cache at once (maybeAssignEpochStartOffset), so
 * OffsetForLeaderEpoch answers right after the change with no new data; ListOffsets answers
 * OFFSET_NOT_AVAILABLE while the high watermark is below the epoch's start
 * (Partition.fetchOffsetForTimestamp); current_leader_epoch fences Fetch, ListOffsets and
 * OffsetForLeaderEpoch; DeleteRecords is answered once every live replica's log start offset
 * (reported in its fetches) has followed (the low watermark, DelayedDeleteRecords), else
 * REQUEST_TIMED_OUT. One cluster-mode replica manager over real logs (broker 1), followers played
 * by replica fetches through the real handlers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader, Writer, type Input, type MessageCodec } from '../../src/protocol/primitives/index.js';
import {
  DeleteRecordsRequestCodec,
  DeleteRecordsResponseCodec,
  FetchRequestCodec,
  FetchResponseCodec,
  ListOffsetsRequestCodec,
  ListOffsetsResponseCodec,
  OffsetForLeaderEpochRequestCodec,
  OffsetForLeaderEpochResponseCodec,
} from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeBatch } from '../../src/protocol/records/index.js';
import { ZkBrokerMetadata } from '../../src/metadata/zk/zk-broker-metadata.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { ReplicaManager } from '../../src/replication/replica-manager.js';
import type { IsrWriter, Partition } from '../../src/replication/partition/partition.js';
import { brokerLogDefaults } from '../../src/replication/log-config.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { ControlRequests } from '../../src/server/cluster/control-requests.js';
import { fetchHandler } from '../../src/server/handlers/01-fetch.js';
import { listOffsetsHandler } from '../../src/server/handlers/02-list-offsets.js';
import { deleteRecordsHandler } from '../../src/server/handlers/21-delete-records.js';
import { offsetForLeaderEpochHandler } from '../../src/server/handlers/23-offset-for-leader-epoch.js';
import { LogAdmin } from '../../src/server/admin/log-admin.js';
import type { ApiHandler, RequestContext } from '../../src/server/handlers/types.js';
import { serveRequest } from '../../src/server/request-router.js';
import type { BrokerServices } from '../../src/server/broker-services.js';
import { broker, fakeZk, header, pstate, simpleAssigner } from '../metadata/zk/zk-broker-helpers.js';
import { testConnection } from '../helpers/connection-context.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAABA';
const T = 'lep';

const acceptAll: IsrWriter = { writeIsr: (c) => Promise.resolve(c.partitionEpoch + 1) };

interface Leader {
  rm: ReplicaManager;
  control: ControlRequests;
  dir: string;
  services: Partial<BrokerServices>;
  partition(): Partition;
  leaderAndIsr(leader: number, epoch: number, zkVersion: number): Promise<void>;
  close(): Promise<void>;
}

async function startLeader(): Promise<Leader> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-lep-'));
  const config = buildBrokerConfig(
    new Map([
      ['broker.id', '1'],
      ['log.dirs', dir],
      ['zookeeper.connect', '127.0.0.1:1'],
    ]),
  );
  const logger = silentLogger();
  const zk = fakeZk();
  const image = new ZkBrokerMetadata({ brokerId: 1, clusterId: 'c', zk: zk.api, assigner: simpleAssigner, logger, writeTimeoutMs: 2000 });
  const logManager = await LogManager.open({ logDirs: [dir], defaults: brokerLogDefaults(config), cleanerEnabled: false });
  const rm = await ReplicaManager.start({ config, metadata: image, logManager, logger, controllerManaged: true, isrWriter: acceptAll });
  const control = new ControlRequests({ brokerId: 1, image, roles: rm, brokerEpoch: () => -1n, logger });
  const state = pstate(T, 0, 1, 1, [1, 2, 3]);
  await control.updateMetadata(header(1), [broker(1), broker(2), broker(3)], [state], new Map([[T, TOPIC_ID]]));
  const logs = new LogAdmin(image, () => ({
    localPartition: (t, p) => rm.getPartition(t, p),
    logDirsState: () => logManager.logDirsState(),
    syncTopic: (t) => rm.syncTopic(t),
  }));
  const l: Leader = {
    rm,
    control,
    dir,
    services: { replicaManager: rm, metadata: image, config, admin: { logs } as unknown as BrokerServices['admin'] },
    partition: () => rm.getPartition(T, 0)!,
    async leaderAndIsr(leader, epoch, zkVersion) {
      const res = await control.leaderAndIsr(header(1), [{ ...pstate(T, 0, leader, epoch, [1, 2, 3]), topicId: TOPIC_ID, zkVersion }]);
      assert.equal(res.partitions[0]!.errorCode, ErrorCode.NONE);
    },
    async close() {
      await image.close();
      await rm.shutdown();
      await logManager.shutdown();
      await rm_(dir);
    },
  };
  await l.leaderAndIsr(1, 1, 0);
  return l;
}
const rm_ = (dir: string) => rm(dir, { recursive: true, force: true });

/** One request through a real handler, in `version`'s layout both ways. */
async function call<Req, Res>(
  l: Leader,
  handler: ApiHandler,
  apiKey: number,
  reqCodec: MessageCodec<Req>,
  resCodec: MessageCodec<Res>,
  version: number,
  body: Input<Req>,
): Promise<Res> {
  const w = new Writer(256);
  reqCodec.write(w, body, version);
  const ctx: RequestContext = {
    header: { apiKey, apiVersion: version, correlationId: 1, clientId: 'test' },
    connection: testConnection(),
    services: l.services as BrokerServices,
  };
  const writeBody = await serveRequest(handler, new Reader(w.result()), ctx);
  const out = new Writer(256);
  writeBody!(out);
  return resCodec.read(new Reader(out.result()), version);
}

function fetch(l: Leader, replicaId: number, fetchOffset: number, o: { currentLeaderEpoch?: number; logStartOffset?: number } = {}) {
  return call(l, fetchHandler, 1, FetchRequestCodec, FetchResponseCodec, 12, {
    replicaId,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionEpoch: -1,
    topics: [
      {
        topic: T,
        partitions: [
          {
            partition: 0,
            fetchOffset: BigInt(fetchOffset),
            partitionMaxBytes: 1 << 20,
            currentLeaderEpoch: o.currentLeaderEpoch ?? -1,
            lastFetchedEpoch: -1,
            logStartOffset: BigInt(o.logStartOffset ?? -1),
          },
        ],
      },
    ],
  }).then((r) => r.responses[0]!.partitions[0]!);
}

function listOffsets(l: Leader, timestamp: bigint, o: { currentLeaderEpoch?: number; replicaId?: number } = {}) {
  return call(l, listOffsetsHandler, 2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 7, {
    replicaId: o.replicaId ?? -1,
    isolationLevel: 0,
    topics: [{ name: T, partitions: [{ partitionIndex: 0, currentLeaderEpoch: o.currentLeaderEpoch ?? -1, timestamp, maxNumOffsets: 1 }] }],
  }).then((r) => r.topics[0]!.partitions[0]!);
}

function offsetForEpoch(l: Leader, leaderEpoch: number, o: { currentLeaderEpoch?: number; replicaId?: number } = {}) {
  return call(l, offsetForLeaderEpochHandler, 23, OffsetForLeaderEpochRequestCodec, OffsetForLeaderEpochResponseCodec, 3, {
    replicaId: o.replicaId ?? -1,
    topics: [{ topic: T, partitions: [{ partition: 0, currentLeaderEpoch: o.currentLeaderEpoch ?? -1, leaderEpoch }] }],
  }).then((r) => r.topics[0]!.partitions[0]!);
}

function deleteRecords(l: Leader, offset: number, timeoutMs: number) {
  return call(l, deleteRecordsHandler, 21, DeleteRecordsRequestCodec, DeleteRecordsResponseCodec, 1, {
    topics: [{ name: T, partitions: [{ partitionIndex: 0, offset: BigInt(offset) }] }],
    timeoutMs,
  }).then((r) => r.topics[0]!.partitions[0]!);
}

function produce(l: Leader, n: number, baseTimestamp = Date.now()) {
  const records = encodeBatch({
    records: Array.from({ length: n }, (_, i) => ({ attributes: 0, timestampDelta: i, offsetDelta: i, key: null, value: Buffer.from(`v${i}`), headers: [] })),
    baseTimestamp: BigInt(baseTimestamp),
  });
  return l.rm.appendRecords(T, 0, records, { requiredAcks: 1, origin: 'client', produceVersion: 9 });
}

async function waitUntil(what: string, ms: number, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('makeLeader records the new epoch at the log end at once: OffsetForLeaderEpoch answers it with no new data, and the checkpoint has it', async () => {
  const l = await startLeader();
  try {
    assert.equal((await produce(l, 3)).errorCode, ErrorCode.NONE); // epoch 1: offsets 0-2
    await l.leaderAndIsr(2, 2, 1); // broker 2 leads epoch 2 (broker 1 learns nothing of it)
    await l.leaderAndIsr(1, 3, 2); // back to broker 1 at epoch 3, no data since
    const p = l.partition();
    assert.deepEqual(
      p.log.epochs.all().map((e) => [e.epoch, e.startOffset]),
      [
        [1, 0],
        [3, 3],
      ],
    );
    const cp = await readFile(join(p.log.dir, 'leader-epoch-checkpoint'), 'utf8');
    assert.match(cp, /^3 3$/m, `the checkpoint holds epoch 3 at 3:\n${cp}`);
    // A follower asking for epoch 3 (or the epoch 2 it never saw here) learns where they end.
    const e3 = await offsetForEpoch(l, 3, { replicaId: 2, currentLeaderEpoch: 3 });
    assert.deepEqual([e3.errorCode, e3.leaderEpoch, e3.endOffset], [ErrorCode.NONE, 3, 3n]);
    const e2 = await offsetForEpoch(l, 2, { replicaId: 2, currentLeaderEpoch: 3 });
    assert.deepEqual([e2.errorCode, e2.leaderEpoch, e2.endOffset], [ErrorCode.NONE, 1, 3n]);
    // Appends at epoch 3 keep the one entry.
    await produce(l, 1);
    assert.deepEqual(
      p.log.epochs.all().map((e) => [e.epoch, e.startOffset]),
      [
        [1, 0],
        [3, 3],
      ],
    );
  } finally {
    await l.close();
  }
});

test('a follower truncating to its log end drops an epoch that starts there with no data (Kafka truncateTo keeps the cache in line)', async () => {
  const l = await startLeader();
  try {
    await produce(l, 2);
    await l.leaderAndIsr(1, 2, 1); // epoch 2 at offset 2, nothing written in it
    await l.leaderAndIsr(3, 3, 2); // broker 1 follows now
    const p = l.partition();
    assert.deepEqual(
      p.log.epochs.all().map((e) => [e.epoch, e.startOffset]),
      [
        [1, 0],
        [2, 2],
      ],
    );
    await p.truncateTo(2);
    assert.deepEqual(
      p.log.epochs.all().map((e) => [e.epoch, e.startOffset]),
      [[1, 0]],
    );
  } finally {
    await l.close();
  }
});

test('ListOffsets on a new leader whose HW is below its epoch start: OFFSET_NOT_AVAILABLE for latest and timestamps, not earliest nor replicas; epoch fencing on Fetch, ListOffsets, OffsetForLeaderEpoch', async () => {
  const l = await startLeader();
  try {
    const ts = Date.now() - 60_000;
    await produce(l, 3, ts); // epoch 1: offsets 0-2, no follower has them: HW 0
    await l.leaderAndIsr(2, 2, 1);
    await l.leaderAndIsr(1, 3, 2);
    const p = l.partition();
    assert.deepEqual([p.highWatermark, p.leaderEpochStartOffset], [0, 3]);
    assert.equal((await listOffsets(l, -1n)).errorCode, ErrorCode.OFFSET_NOT_AVAILABLE, 'latest');
    assert.equal((await listOffsets(l, -1n, { currentLeaderEpoch: 3 })).errorCode, ErrorCode.OFFSET_NOT_AVAILABLE, 'latest, current epoch');
    assert.equal((await listOffsets(l, BigInt(ts))).errorCode, ErrorCode.OFFSET_NOT_AVAILABLE, 'by timestamp, nothing below the HW');
    assert.equal((await listOffsets(l, -3n)).errorCode, ErrorCode.OFFSET_NOT_AVAILABLE, 'max timestamp, nothing below the HW');
    const earliest = await listOffsets(l, -2n);
    assert.deepEqual([earliest.errorCode, earliest.offset], [ErrorCode.NONE, 0n], 'earliest');
    const fromReplica = await listOffsets(l, -1n, { replicaId: 2 });
    assert.deepEqual([fromReplica.errorCode, fromReplica.offset], [ErrorCode.NONE, 3n], 'a replica gets the log end');
    // Fencing by current_leader_epoch.
    assert.equal((await listOffsets(l, -2n, { currentLeaderEpoch: 2 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal((await listOffsets(l, -2n, { currentLeaderEpoch: 4 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal((await fetch(l, -1, 0, { currentLeaderEpoch: 2 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal((await fetch(l, -1, 0, { currentLeaderEpoch: 4 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal((await offsetForEpoch(l, 1, { currentLeaderEpoch: 2 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal((await offsetForEpoch(l, 1, { currentLeaderEpoch: 4 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    // The followers catch up: the HW reaches the epoch start and the answers come.
    await fetch(l, 2, 3, { currentLeaderEpoch: 3 });
    await fetch(l, 3, 3, { currentLeaderEpoch: 3 });
    assert.equal(p.highWatermark, 3);
    const latest = await listOffsets(l, -1n, { currentLeaderEpoch: 3 });
    assert.deepEqual([latest.errorCode, latest.offset, latest.leaderEpoch], [ErrorCode.NONE, 3n, 3]);
    const byTs = await listOffsets(l, BigInt(ts));
    assert.deepEqual([byTs.errorCode, byTs.offset, byTs.leaderEpoch], [ErrorCode.NONE, 0n, 1]);
    const c = await offsetForEpoch(l, 1, { currentLeaderEpoch: 3 });
    assert.deepEqual([c.errorCode, c.leaderEpoch, c.endOffset], [ErrorCode.NONE, 1, 3n], 'a consumer validating epoch 1 learns it ended at 3');
    assert.equal((await fetch(l, -1, 0, { currentLeaderEpoch: 3 })).errorCode, ErrorCode.NONE);
  } finally {
    await l.close();
  }
});

test('DeleteRecords with followers: answered once every replica reports the new log start in its fetch (the low watermark), REQUEST_TIMED_OUT otherwise', async () => {
  const l = await startLeader();
  try {
    await produce(l, 10);
    await fetch(l, 2, 10, { logStartOffset: 0 });
    await fetch(l, 3, 10, { logStartOffset: 0 });
    const p = l.partition();
    assert.equal(p.highWatermark, 10);
    // Nobody follows: the leader moved its log start, the answer is REQUEST_TIMED_OUT after the timeout.
    const t0 = Date.now();
    const timedOut = await deleteRecords(l, 4, 300);
    assert.equal(timedOut.errorCode, ErrorCode.REQUEST_TIMED_OUT);
    assert.ok(Date.now() - t0 >= 250, 'it waited for its timeout');
    assert.equal(p.logStartOffset, 4, 'the leader moved its log start anyway');
    // The followers report their log starts: the request completes with the low watermark.
    let answered = false;
    const pending = deleteRecords(l, 6, 20_000).then((r) => ((answered = true), r));
    await waitUntil('the leader to move its log start', 10_000, () => p.logStartOffset === 6);
    const f2 = await fetch(l, 2, 10, { logStartOffset: 6 });
    assert.equal(f2.logStartOffset, 6n, 'the fetch response carries the leader log start');
    await new Promise((r) => setImmediate(r));
    assert.equal(answered, false, 'one follower of two has followed');
    await fetch(l, 3, 10, { logStartOffset: 5 });
    await new Promise((r) => setImmediate(r));
    assert.equal(answered, false, 'follower 3 is still behind');
    await fetch(l, 3, 10, { logStartOffset: 6 });
    const done = await pending;
    assert.deepEqual([done.errorCode, done.lowWatermark], [ErrorCode.NONE, 6n]);
    // Already followed: answered at once.
    const again = await deleteRecords(l, 6, 20_000);
    assert.deepEqual([again.errorCode, again.lowWatermark], [ErrorCode.NONE, 6n]);
  } finally {
    await l.close();
  }
});

test('DeleteRecords: a follower on a dead broker does not hold the low watermark back (Kafka counts live brokers only)', async () => {
  const l = await startLeader();
  try {
    await produce(l, 10);
    await fetch(l, 2, 10, { logStartOffset: 0 });
    await fetch(l, 3, 10, { logStartOffset: 0 });
    // Broker 3 leaves the live set.
    await l.control.updateMetadata(header(1), [broker(1), broker(2)], [pstate(T, 0, 1, 1, [1, 2, 3])], new Map([[T, TOPIC_ID]]));
    const pending = deleteRecords(l, 5, 20_000);
    await waitUntil('the leader to move its log start', 10_000, () => l.partition().logStartOffset === 5);
    await fetch(l, 2, 10, { logStartOffset: 5 });
    const done = await pending;
    assert.deepEqual([done.errorCode, done.lowWatermark], [ErrorCode.NONE, 5n]);
  } finally {
    await l.close();
  }
});
