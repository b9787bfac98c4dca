/**
 * The offset history as the group coordinator records it (issue 25): every change of a committed
 * offset, with its cause and who made it, handed to the history sink only once the
 * `__consumer_offsets` write is durable, in order; commits that move nothing are not repeated,
 * but a group gets one `alive` entry per alive interval.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { GroupCoordinator, OFFSETS_TOPIC } from '../../src/coordinator/group/group-coordinator.js';
import type { CommitRequest } from '../../src/coordinator/group/offsets.js';
import type { HistorySink } from '../../src/coordinator/group/history/history-tracker.js';
import type { HistoryValue } from '../../src/protocol/offset-history/history-record.js';
import { defaultBrokerConfig } from '../../src/server/config/build-broker-config.js';
import type { MetadataStore } from '../../src/metadata/metadata-store.js';
import type { ReplicaManager } from '../../src/replication/replica-manager.js';
import { MemoryLog } from './memory-log.js';
import { joinReq } from './group/harness.js';

type Entry = HistoryValue & { group: string; timestamp: number };

/** A GroupCoordinator of broker 0 over one offsets partition in a MemoryLog, its history in `entries`. */
async function setup(aliveIntervalMs = 60_000, groupConfig = {}) {
  groupConfig = { initialRebalanceDelayMs: 0, ...groupConfig };
  const config = defaultBrokerConfig({ 'broker.id': '0', 'offsets.topic.num.partitions': '1' });
  const partitions = [{ partition: 0, leader: 0, leaderEpoch: 0, replicas: [0], isr: [0] }];
  const topicT = {
    name: 't',
    topicId: 'y',
    internal: false,
    partitions: [0, 1].map((p) => ({ partition: p, leader: 0, leaderEpoch: 0, replicas: [0], isr: [0] })),
    configs: {},
  };
  const metadata = {
    topic: (name: string) => (name === OFFSETS_TOPIC ? { name, topicId: 'x', internal: true, partitions, configs: {} } : name === 't' ? topicT : undefined),
    onChange: () => undefined,
    brokers: () => [],
  } as unknown as MetadataStore;
  const replicaManager = { syncTopic: async () => undefined, getPartition: () => undefined, txnMarkerListeners: new Set() } as unknown as ReplicaManager;
  const log = new MemoryLog();
  const entries: Entry[] = [];
  const sink: HistorySink = { submit: (group, values, timestamp) => entries.push(...values.map((v) => ({ ...v, group, timestamp }))) };
  const gc = new GroupCoordinator({
    config,
    metadata,
    replicaManager,
    logger: pino({ level: 'silent' }),
    log,
    groupConfig,
    history: { sink, aliveIntervalMs },
  });
  await gc.loaded();
  return { gc, log, entries };
}

/** A classic group member of group `g` (joined and synced), for commits made by a member. */
async function member(gc: GroupCoordinator): Promise<{ memberId: string; generationId: number }> {
  const first = await gc.joinGroup(joinReq());
  const joined = await gc.joinGroup(joinReq({ memberId: first.memberId }));
  assert.equal(joined.errorCode, 0);
  const synced = await gc.syncGroup({
    groupId: 'g',
    generationId: joined.generationId,
    memberId: joined.memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [{ memberId: joined.memberId, assignment: Buffer.alloc(0) }],
  });
  assert.equal(synced.errorCode, 0);
  return { memberId: joined.memberId, generationId: joined.generationId };
}

const commitReq = (offsets: Record<number, bigint>, over: Partial<CommitRequest> = {}): CommitRequest => ({
  groupId: 'g',
  generationId: -1,
  memberId: '',
  groupInstanceId: null,
  retentionTimeMs: -1n,
  apiVersion: 8,
  topics: [
    {
      name: 't',
      partitions: Object.entries(offsets).map(([p, o]) => ({
        partitionIndex: Number(p),
        committedOffset: o,
        committedLeaderEpoch: 3,
        commitTimestamp: -1n,
        committedMetadata: '',
      })),
    },
  ],
  ...over,
});

const brief = (e: Entry) => `${e.group} t-${e.partition} ${e.previousOffset}->${e.newOffset} ${e.cause}`;

test('commits that move an offset are recorded with who made them; unmoved ones are not repeated', async () => {
  const { gc, entries } = await setup();
  const who = { clientId: 'console-consumer', clientHost: '/127.0.0.1' };
  const m = await member(gc);
  const before = Date.now();
  await gc.commitOffsets(commitReq({ 0: 5n, 1: 7n }, m), who);
  assert.deepEqual(entries.map(brief), ['g t-0 -1->5 commit', 'g t-1 -1->7 commit']);
  const e = entries[0]!;
  assert.deepEqual(
    { memberId: e.memberId, generation: e.generation, clientId: e.clientId, clientHost: e.clientHost, leaderEpoch: e.leaderEpoch },
    { memberId: m.memberId, generation: m.generationId, clientId: 'console-consumer', clientHost: '/127.0.0.1', leaderEpoch: 3 },
  );
  assert.ok(e.timestamp >= before && e.timestamp <= Date.now(), 'the entry carries the time of the change');
  // The seed's console consumer: the same offsets every 5 s. Within the alive interval: nothing.
  await gc.commitOffsets(commitReq({ 0: 5n, 1: 7n }, m), who);
  await gc.commitOffsets(commitReq({ 0: 6n, 1: 7n }, m), who);
  assert.deepEqual(entries.map(brief).slice(2), ['g t-0 5->6 commit'], 'only the partition that moved');
});

test('a group committing without moving gets one alive entry per alive interval', async () => {
  const { gc, entries } = await setup(0);
  const m = await member(gc);
  await gc.commitOffsets(commitReq({ 0: 5n }, m));
  await gc.commitOffsets(commitReq({ 0: 5n }, m));
  assert.deepEqual(entries.map(brief), ['g t-0 -1->5 commit', 'g t-0 5->5 alive']);
  const { gc: gc2, entries: entries2 } = await setup(3_600_000);
  await gc2.commitOffsets(commitReq({ 0: 5n }));
  for (let i = 0; i < 3; i++) await gc2.commitOffsets(commitReq({ 0: 5n }));
  assert.deepEqual(entries2.map(brief), ['g t-0 -1->5 reset'], 'no alive entry within the interval');
});

test('an admin commit (no member, generation -1) is a reset; OffsetDelete, DeleteGroups and expiry are recorded', async () => {
  const { gc, entries } = await setup(60_000, { offsetsRetentionMs: 0 });
  await gc.commitOffsets(commitReq({ 0: 5n, 1: 9n }, { groupId: 'a' }));
  await gc.commitOffsets(commitReq({ 0: 5n }, { groupId: 'b' }));
  await gc.commitOffsets(commitReq({ 0: 5n }, { groupId: 'c' }));
  const del = await gc.deleteOffsets('a', [{ name: 't', partitions: [1] }]);
  assert.equal(del.errorCode, 0);
  assert.deepEqual(await gc.deleteGroups(['b']), [{ groupId: 'b', errorCode: 0 }]);
  assert.equal(await gc.expireNow(), 2, 'a t-0 and c t-0 expire (retention 0)');
  assert.deepEqual(entries.map(brief), [
    'a t-0 -1->5 reset',
    'a t-1 -1->9 reset',
    'b t-0 -1->5 reset',
    'c t-0 -1->5 reset',
    'a t-1 9->-1 delete',
    'b t-0 5->-1 delete',
    'a t-0 5->-1 expire',
    'c t-0 5->-1 expire',
  ]);
  assert.equal(entries[4]!.memberId, '');
});

test('a transactional commit is recorded when its COMMIT marker makes it visible, never on ABORT', async () => {
  const { gc, log, entries } = await setup();
  const txn = (producerId: bigint, offset: bigint) =>
    gc.commitTransactionalOffsets({
      groupId: 'g',
      producerId,
      producerEpoch: 0,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
  await txn(7n, 10n);
  assert.deepEqual(entries, [], 'pending: nothing yet');
  log.appendMarker(0, 7n, true);
  assert.equal(await gc.onTransactionCompleted(0, 7n, true), true);
  await txn(8n, 20n);
  log.appendMarker(0, 8n, false);
  assert.equal(await gc.onTransactionCompleted(0, 8n, false), true);
  assert.deepEqual(entries.map(brief), ['g t-0 -1->10 txn-commit']);
});

test('entries follow the durable write, in order; a failed write records nothing', async () => {
  const { gc, log, entries } = await setup();
  log.failNext = 1;
  const failed = await gc.commitOffsets(commitReq({ 0: 1n }));
  assert.notEqual(failed[0]!.partitions[0]!.errorCode, 0);
  assert.deepEqual(entries, [], 'the commit failed: no history');
  log.hold = true;
  const a = gc.commitOffsets(commitReq({ 0: 2n }));
  const b = gc.commitOffsets(commitReq({ 0: 3n }));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(entries, [], 'nothing before the commit is durable');
  log.release();
  await Promise.all([a, b]);
  assert.deepEqual(entries.map(brief), ['g t-0 -1->2 reset', 'g t-0 2->3 reset'], 'in the order of the commits');
});

test('without history options the coordinator records nothing and behaves as before', async () => {
  const config = defaultBrokerConfig({ 'broker.id': '0', 'offsets.topic.num.partitions': '1' });
  const gc = new GroupCoordinator({
    config,
    metadata: { topic: () => undefined, onChange: () => undefined, brokers: () => [] } as unknown as MetadataStore,
    replicaManager: { syncTopic: async () => undefined, txnMarkerListeners: new Set() } as unknown as ReplicaManager,
    logger: pino({ level: 'silent' }),
    log: new MemoryLog(),
  });
  assert.equal(gc.history.enabled, false);
});
