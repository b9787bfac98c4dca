/**
 * Consumer groups on the coordinator runtime over an in-memory log: a coordinator that loads
 * the partition again resumes every member where it was (same epochs, no new assignment); a
 * failed append leaves the group as it was; ConsumerGroupDescribe, member-epoch checks of
 * OffsetCommit/OffsetFetch, ListGroups and DeleteGroups (tombstones) answer for the group.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoordinatorRuntime } from '../../../../src/coordinator/runtime/runtime.js';
import { GroupShard } from '../../../../src/coordinator/group/group-shard.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from '../../../../src/coordinator/group/records.js';
import { consumerGroupHeartbeat, type ConsumerHeartbeatRequest } from '../../../../src/coordinator/group/consumer/heartbeat.js';
import { describeConsumerGroup, listConsumerGroups } from '../../../../src/coordinator/group/consumer/describe.js';
import { commitOffsets, fetchOffsets, txnCommitOffsets, type CommitRequest } from '../../../../src/coordinator/group/offsets.js';
import { deleteGroups } from '../../../../src/coordinator/group/admin.js';
import { expireOffsets } from '../../../../src/coordinator/group/expiry.js';
import type { ConsumerGroupEnv } from '../../../../src/coordinator/group/consumer/settings.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { MemoryLog } from '../../memory-log.js';
import { compileSubscriptionRegex } from '../../../../src/coordinator/group/subscription-regex.js';
import { TEST_CONFIG, joinReq } from '../harness.js';
import { joinGroup } from '../../../../src/coordinator/group/join-sync.js';
import { classicJoinOverConsumerGroup } from '../../../../src/coordinator/group/consumer/classic-join.js';
import { BASE_REQUEST, FakeTopics, join, roundRobin } from './harness.js';

async function coordinator(log: MemoryLog, topics: FakeTopics) {
  const env: ConsumerGroupEnv = {
    settings: { sessionTimeoutMs: 60_000, heartbeatIntervalMs: 3_000, maxSize: 10, assignors: [roundRobin] },
    topics,
    compileRegex: compileSubscriptionRegex,
  };
  const runtime = new CoordinatorRuntime<GroupShard, CoordinatorRecord>({
    log,
    serde: { encode: encodeRecord, decode: decodeRecord },
    newShard: (ctx) => new GroupShard(ctx, TEST_CONFIG, undefined, env),
  });
  await runtime.load(0);
  const hb = (req: Partial<ConsumerHeartbeatRequest>) => runtime.write(0, (s, now) => consumerGroupHeartbeat(s, { ...BASE_REQUEST, ...req }, now));
  return { runtime, hb };
}

const commitReq = (memberId: string, epoch: number, apiVersion = 9): CommitRequest => ({
  groupId: 'g',
  generationId: epoch,
  memberId,
  groupInstanceId: null,
  retentionTimeMs: -1n,
  apiVersion,
  topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] }],
});

test('a coordinator loading the partition again resumes the members where they were; a failed append changes nothing', async () => {
  const log = new MemoryLog();
  const topics = new FakeTopics();
  const t = topics.add('t', 4);
  const one = await coordinator(log, topics);
  await one.hb(join('a', ['t']));
  const b1 = await one.hb(join('b', ['t']));
  const own = (r: typeof b1) => (r.assignment?.topicPartitions ?? []).map((x) => ({ topicId: x.topicId, partitions: x.partitions }));
  let a = await one.hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [{ topicId: t.topicId, partitions: [0, 1, 2, 3] }] });
  a = await one.hb({ memberId: 'a', memberEpoch: 1, topicPartitions: own(a) });
  const b = await one.hb({ memberId: 'b', memberEpoch: b1.memberEpoch, topicPartitions: [] });
  assert.equal(b.memberEpoch, 2);
  const before = one.runtime.activeShards()[0]!.consumerGroups.get('g')!;
  assert.equal(before.state, 'Stable');

  log.failNext = 1;
  await assert.rejects(one.hb(join('c', ['t'])), KafkaError);
  assert.equal(before.members.has('c'), false);
  assert.equal(before.groupEpoch, 2);
  one.runtime.close();

  // Failed over: the new coordinator knows both members at epoch 2 with their partitions.
  const two = await coordinator(log, topics);
  const g = two.runtime.activeShards()[0]!.consumerGroups.get('g')!;
  assert.equal(g.groupEpoch, 2);
  assert.equal(g.state, 'Stable');
  const again = await two.hb({ memberId: 'b', memberEpoch: 2, topicPartitions: own(b) });
  assert.equal(again.errorCode, ErrorCode.NONE);
  assert.equal(again.memberEpoch, 2);
  assert.equal(again.assignment, null, 'nothing changed: no assignment sent');
  assert.equal(g.groupEpoch, 2);
  two.runtime.close();
});

test('ConsumerGroupDescribe, member-epoch checks of commits and fetches, ListGroups, DeleteGroups', async () => {
  const log = new MemoryLog();
  const topics = new FakeTopics();
  const t = topics.add('t', 2);
  const { runtime, hb } = await coordinator(log, topics);
  const a = await hb(join('a', ['t'], { instanceId: 'inst', rackId: 'r1', clientId: 'cid' }));
  const d = await runtime.read(0, (s) => describeConsumerGroup(s, 'g'));
  assert.equal(d.errorCode, ErrorCode.NONE);
  assert.equal(d.groupState, 'Stable');
  assert.equal(d.groupEpoch, 1);
  assert.equal(d.assignmentEpoch, 1);
  assert.equal(d.assignorName, 'rr');
  assert.equal(d.members.length, 1);
  const m = d.members[0]!;
  assert.deepEqual([m.memberId, m.instanceId, m.rackId, m.memberEpoch, m.clientId, m.subscribedTopicNames], ['a', 'inst', 'r1', 1, 'cid', ['t']]);
  assert.deepEqual(m.assignment.topicPartitions, [{ topicId: t.topicId, topicName: 't', partitions: [0, 1] }]);
  assert.deepEqual(m.targetAssignment, m.assignment);
  const missing = await runtime.read(0, (s) => describeConsumerGroup(s, 'nope'));
  assert.equal(missing.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);

  const commit = (r: CommitRequest) => runtime.write(0, (s, now) => commitOffsets(s, r, now)).then((x) => x[0]!.partitions[0]!.errorCode);
  assert.equal(await commit(commitReq('a', a.memberEpoch)), ErrorCode.NONE);
  assert.equal(await commit(commitReq('a', a.memberEpoch + 1)), ErrorCode.STALE_MEMBER_EPOCH);
  assert.equal(await commit(commitReq('zz', a.memberEpoch)), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await commit(commitReq('', -1)), ErrorCode.UNKNOWN_MEMBER_ID, 'no admin commits while the group has members');
  assert.equal(await commit(commitReq('a', a.memberEpoch, 8)), ErrorCode.UNSUPPORTED_VERSION);
  const fetch = (memberId: string | null, memberEpoch: number) => runtime.read(0, (s) => fetchOffsets(s, 'g', null, false, { memberId, memberEpoch }));
  assert.equal((await fetch('a', 1))[0]!.partitions[0]!.committedOffset, 5n);
  assert.equal((await fetch(null, -1))[0]!.partitions[0]!.committedOffset, 5n);
  await assert.rejects(fetch('a', 7), (e: KafkaError) => e.code === ErrorCode.STALE_MEMBER_EPOCH);
  await assert.rejects(fetch('zz', 1), (e: KafkaError) => e.code === ErrorCode.UNKNOWN_MEMBER_ID);

  const txn = (memberId: string, generationId: number) =>
    runtime
      .write(0, (s, now) =>
        txnCommitOffsets(
          s,
          {
            groupId: 'g',
            producerId: 7n,
            producerEpoch: 0,
            generationId,
            memberId,
            groupInstanceId: null,
            topics: [{ name: 't', partitions: [{ partitionIndex: 1, committedOffset: 9n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
          },
          now,
        ),
      )
      .then((x) => x[0]!.partitions[0]!.errorCode);
  assert.equal(await txn('a', a.memberEpoch + 3), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(await txn('zz', a.memberEpoch), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await txn('a', a.memberEpoch), ErrorCode.NONE);
  assert.equal(await txn('', -1), ErrorCode.NONE);
  assert.equal(runtime.activeShards()[0]!.groups.has('g'), false, 'no classic group beside the consumer group');
  const listed = runtime.activeShards().flatMap((s) => listConsumerGroups(s, [], []));
  assert.deepEqual(listed, [{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'Consumer' }]);
  assert.deepEqual(
    runtime.activeShards().flatMap((s) => listConsumerGroups(s, ['empty'], [])),
    [],
  );
  assert.deepEqual(
    runtime.activeShards().flatMap((s) => listConsumerGroups(s, [], ['classic'])),
    [],
  );

  assert.deepEqual(await runtime.write(0, (s) => deleteGroups(s, ['g'])), [{ groupId: 'g', errorCode: ErrorCode.NON_EMPTY_GROUP }]);
  await hb({ memberId: 'a', memberEpoch: -1 });
  assert.equal(await commit(commitReq('', -1)), ErrorCode.NONE, 'an empty group takes admin commits');
  assert.deepEqual(await runtime.write(0, (s) => deleteGroups(s, ['g'])), [{ groupId: 'g', errorCode: ErrorCode.NONE }]);
  runtime.close();
  const reloaded = await coordinator(log, topics);
  const shard = reloaded.runtime.activeShards()[0]!;
  assert.equal(shard.consumerGroups.has('g'), false);
  assert.equal(shard.groups.has('g'), false);
  assert.deepEqual(shard.offsets.list('g'), []);
  reloaded.runtime.close();
});

test('offset expiry: a consumer group keeps the offsets of subscribed topics; once empty they expire and the group goes', async () => {
  const log = new MemoryLog();
  const topics = new FakeTopics();
  topics.add('t', 2);
  const { runtime, hb } = await coordinator(log, topics);
  const a = await hb(join('a', ['t']));
  const commit = (r: CommitRequest) => runtime.write(0, (s, now) => commitOffsets(s, r, now));
  await commit(commitReq('a', a.memberEpoch));
  await commit({ ...commitReq('a', a.memberEpoch), topics: [{ name: 'gone', partitions: commitReq('a', 1).topics[0]!.partitions }] });
  const later = Date.now() + TEST_CONFIG.offsetsRetentionMs + 1;
  assert.equal(await runtime.write(0, (s) => expireOffsets(s, later)), 1, 'only the topic no member subscribes to');
  const shard = runtime.activeShards()[0]!;
  assert.deepEqual(
    shard.offsets.list('g').map((o) => o.topic),
    ['t'],
  );
  assert.equal(await runtime.write(0, (s) => expireOffsets(s, later)), 0);
  await hb({ memberId: 'a', memberEpoch: -1 });
  assert.equal(await runtime.write(0, (s) => expireOffsets(s, later)), 1);
  assert.equal(shard.consumerGroups.has('g'), false);
  runtime.close();
  const reloaded = await coordinator(log, topics);
  assert.equal(reloaded.runtime.activeShards()[0]!.consumerGroups.has('g'), false);
  reloaded.runtime.close();
});

test('a classic JoinGroup takes over an empty consumer group (its offsets kept) and is served by it while it has members', async () => {
  const log = new MemoryLog();
  const topics = new FakeTopics();
  topics.add('t', 1);
  const { runtime, hb } = await coordinator(log, topics);
  const a = await hb(join('a', ['t']));
  await runtime.write(0, (s, now) => commitOffsets(s, commitReq('a', a.memberEpoch), now));
  const classicJoin = () =>
    runtime.write(0, (s, now) => classicJoinOverConsumerGroup(s, joinReq({ groupId: 'g' }), now, () => joinGroup(s, joinReq({ groupId: 'g' }), now)));
  // With members, the consumer group itself answers (KIP-848 migration: it takes classic members).
  assert.equal((await await classicJoin()).errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.ok(runtime.activeShards()[0]!.consumerGroups.has('g'));
  await hb({ memberId: 'a', memberEpoch: -1 });
  const joined = await await classicJoin();
  assert.equal(joined.errorCode, ErrorCode.MEMBER_ID_REQUIRED, 'the classic group answered (KIP-394: first join asks for a member id)');
  const shard = runtime.activeShards()[0]!;
  assert.equal(shard.consumerGroups.has('g'), false);
  assert.ok(shard.groups.has('g'));
  assert.deepEqual(
    shard.offsets.list('g').map((o) => o.value.offset),
    [5n],
  );
  runtime.close();
});
