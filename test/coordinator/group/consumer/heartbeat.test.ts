/**
 * The consumer group state machine (KIP-848) driven with a fake clock: joining, incremental
 * reconciliation, fencing, leaving, static membership, the group's limits and the subscribed
 * topics' changes; after each scenario a shard reloaded from the written records must hold
 * the same state.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { ClassicGroup } from '../../../../src/coordinator/group/classic-group.js';
import { MemberState } from '../../../../src/coordinator/group/consumer/member.js';
import type { ConsumerHeartbeatResponse } from '../../../../src/coordinator/group/consumer/heartbeat.js';
import { assertReplayable, consumerHarness, join, owned, type ConsumerHarness } from './harness.js';

const ok = (r: ConsumerHeartbeatResponse): ConsumerHeartbeatResponse => {
  assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
  return r;
};

/** A member's heartbeat reporting what it owns (the partitions of its last assignment). */
function beat(h: ConsumerHarness, memberId: string, epoch: number, ownedParts: Map<string, number[]>) {
  return h.heartbeat({ memberId, memberEpoch: epoch, topicPartitions: [...ownedParts].map(([topicId, partitions]) => ({ topicId, partitions })) });
}
const parts = (r: ConsumerHeartbeatResponse) => new Map((r.assignment?.topicPartitions ?? []).map((t) => [t.topicId, t.partitions]));

test('a first member joins: epoch 1 and every partition; v0 gets a member id from the coordinator, v1 must bring one', () => {
  const h = consumerHarness();
  h.topics.add('t', 3);
  const r = ok(h.heartbeat({ ...join('', ['t']), apiVersion: 0 }));
  assert.ok(r.memberId && r.memberId.length > 0);
  assert.equal(r.memberEpoch, 1);
  assert.equal(r.heartbeatIntervalMs, 5_000);
  assert.deepEqual(owned(h.topics, r), ['t-0', 't-1', 't-2']);
  assert.equal(h.group().state, 'Stable');
  const v1 = h.heartbeat({ ...join('', ['t']), apiVersion: 1 });
  assert.equal(v1.errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(v1.errorMessage, "MemberId can't be empty.");
  assertReplayable(h);
});

test('bad first heartbeats are refused with INVALID_REQUEST and leave the group alone', () => {
  const h = consumerHarness();
  h.topics.add('t', 1);
  assert.equal(h.heartbeat({ ...join('a', ['t']), rebalanceTimeoutMs: -1 }).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(h.heartbeat({ ...join('a', ['t']), topicPartitions: null }).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(h.heartbeat({ ...join('a', ['t']), subscribedTopicNames: null }).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(h.heartbeat({ ...join('a', ['t']), groupId: '' }).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(h.heartbeat({ ...join('a', ['t']), memberEpoch: -3 }).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(h.heartbeat({ ...join('a', ['t']), subscribedTopicRegex: '(', subscribedTopicNames: null }).errorCode, 128);
  const u = h.heartbeat({ ...join('a', ['t']), serverAssignor: 'sticky' });
  assert.equal(u.errorCode, ErrorCode.UNSUPPORTED_ASSIGNOR);
  assert.match(u.errorMessage!, /sticky is not supported/);
  assert.equal(h.shard.consumerGroups.size, 0);
  assert.equal(h.log.length, 0);
});

test('a second member: the first revokes before the second gets a partition, never owned by two', () => {
  const h = consumerHarness();
  const t = h.topics.add('t', 4);
  const a1 = ok(h.heartbeat(join('a', ['t'])));
  assert.deepEqual(owned(h.topics, a1), ['t-0', 't-1', 't-2', 't-3']);
  const b1 = ok(h.heartbeat(join('b', ['t'])));
  // b's target is half the partitions, still held by a: b is at epoch 2 but gets nothing yet.
  assert.equal(b1.memberEpoch, 2);
  assert.deepEqual(owned(h.topics, b1), []);
  assert.equal(h.group().members.get('b')!.state, MemberState.UNRELEASED_PARTITIONS);
  assert.equal(h.group().state, 'Reconciling');
  // a is told to keep only its target; it stays at epoch 1 until it says it revoked.
  const a2 = ok(beat(h, 'a', 1, parts(a1)));
  assert.equal(a2.memberEpoch, 1);
  assert.deepEqual(owned(h.topics, a2), ['t-0', 't-2']);
  assert.equal(h.group().members.get('a')!.state, MemberState.UNREVOKED_PARTITIONS);
  // b still gets nothing while a has not confirmed.
  assert.deepEqual(owned(h.topics, ok(beat(h, 'b', 2, new Map()))), []);
  const a3 = ok(beat(h, 'a', 1, parts(a2)));
  assert.equal(a3.memberEpoch, 2);
  const b2 = ok(beat(h, 'b', 2, new Map()));
  assert.deepEqual(owned(h.topics, b2), ['t-1', 't-3']);
  assert.equal(h.group().state, 'Stable');
  assert.equal(h.group().partitionEpoch(t.topicId, 1), 2);
  assertReplayable(h);
});

test('epochs: a greater or unexplained smaller one is fenced, the previous one with what it was assigned passes, an unknown member is refused', () => {
  const h = consumerHarness();
  h.topics.add('t', 2);
  const a1 = ok(h.heartbeat(join('a', ['t'])));
  ok(h.heartbeat(join('b', ['t'])));
  const a2 = ok(beat(h, 'a', 1, parts(a1)));
  ok(beat(h, 'a', 1, parts(a2))); // a is at epoch 2 now, previous 1
  assert.equal(beat(h, 'a', 3, parts(a2)).errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  // The response moving a to epoch 2 was lost: epoch 1 with a subset of its partitions is fine.
  assert.equal(beat(h, 'a', 1, parts(a2)).errorCode, ErrorCode.NONE);
  assert.equal(beat(h, 'a', 1, parts(a1)).errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  assert.equal(h.heartbeat({ memberId: 'a', memberEpoch: 1 }).errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  assert.equal(beat(h, 'zz', 2, new Map()).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(h.heartbeat({ groupId: 'other', memberId: 'a', memberEpoch: 1 }).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  // Nothing else in the group was disturbed.
  assert.deepEqual([...h.group().members.keys()].sort(), ['a', 'b']);
  assertReplayable(h);
});

test('leaving (-1) bumps the group epoch and the partitions go to the others', () => {
  const h = consumerHarness();
  h.topics.add('t', 2);
  ok(h.heartbeat(join('a', ['t'])));
  const b1 = ok(h.heartbeat(join('b', ['t'])));
  const left = ok(h.heartbeat({ memberId: 'a', memberEpoch: -1 }));
  assert.equal(left.memberEpoch, -1);
  assert.equal(h.group().groupEpoch, 3);
  const b2 = ok(beat(h, 'b', b1.memberEpoch, parts(b1)));
  assert.equal(b2.memberEpoch, 3);
  assert.deepEqual(owned(h.topics, b2), ['t-0', 't-1']);
  assert.equal(h.heartbeat({ memberId: 'a', memberEpoch: -1 }).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  assertReplayable(h);
});

test('session timeout: a member without heartbeats is removed; heartbeats keep it', () => {
  const h = consumerHarness({ sessionTimeoutMs: 10_000 });
  h.topics.add('t', 2);
  let a = ok(h.heartbeat(join('a', ['t'])));
  ok(h.heartbeat(join('b', ['t'])));
  for (let i = 0; i < 5; i++) {
    h.advance(6_000);
    a = ok(beat(h, 'a', a.memberEpoch, a.assignment ? parts(a) : new Map()));
  }
  assert.deepEqual([...h.group().members.keys()], ['a']);
  assertReplayable(h);
});

test('a member that does not revoke within its rebalance timeout is fenced, and its partitions move on', () => {
  const h = consumerHarness();
  h.topics.add('t', 2);
  const a1 = ok(h.heartbeat(join('a', ['t'], { rebalanceTimeoutMs: 5_000 })));
  ok(h.heartbeat(join('b', ['t'])));
  ok(beat(h, 'a', 1, parts(a1))); // told to revoke one
  h.advance(4_000);
  ok(beat(h, 'a', 1, parts(a1))); // still owns it: the deadline is not restarted
  h.advance(1_500);
  assert.equal(h.group().members.has('a'), false);
  const b = ok(beat(h, 'b', 2, new Map()));
  assert.deepEqual(owned(h.topics, b), ['t-0', 't-1']);
  assertReplayable(h);
});

test('static membership: -2 keeps the partitions for the session timeout; the instance comes back under a new id without a new assignment', () => {
  const h = consumerHarness({ sessionTimeoutMs: 10_000 });
  h.topics.add('t', 4);
  ok(h.heartbeat(join('a', ['t'], { instanceId: 'i-a' })));
  let b = ok(h.heartbeat(join('b', ['t'])));
  let a = ok(beat(h, 'a', 1, new Map([[h.topics.byName('t')!.topicId, [0, 1, 2, 3]]])));
  a = ok(beat(h, 'a', 1, parts(a)));
  b = ok(beat(h, 'b', 2, new Map()));
  assert.equal(h.group().state, 'Stable');
  const aParts = owned(h.topics, {
    ...a,
    assignment: { topicPartitions: [...h.group().members.get('a')!.assigned].map(([topicId, p]) => ({ topicId, partitions: [...p] })) },
  });
  assert.equal(aParts.length, 2);
  const epoch = h.group().groupEpoch;
  // Another process with the same instance id while a is still there: refused.
  assert.equal(h.heartbeat(join('a2', ['t'], { instanceId: 'i-a' })).errorCode, ErrorCode.UNRELEASED_INSTANCE_ID);
  const gone = ok(h.heartbeat({ memberId: 'a', memberEpoch: -2, instanceId: 'i-a' }));
  assert.equal(gone.memberEpoch, -2);
  assert.equal(h.group().groupEpoch, epoch);
  h.advance(5_000);
  const back = ok(h.heartbeat(join('a3', ['t'], { instanceId: 'i-a' })));
  assert.deepEqual(owned(h.topics, back), aParts);
  assert.equal(h.group().groupEpoch, epoch);
  assert.equal(h.group().state, 'Stable');
  assert.equal(h.group().members.has('a'), false);
  assert.equal(h.heartbeat(join('a4', ['t'], { instanceId: 'i-a' })).errorCode, ErrorCode.UNRELEASED_INSTANCE_ID);
  assertReplayable(h);
  // Not back within the session timeout: removed.
  ok(h.heartbeat({ memberId: 'a3', memberEpoch: -2, instanceId: 'i-a' }));
  h.advance(11_000);
  assert.equal(h.group().memberByInstance('i-a'), undefined);
  void b;
});

test('group.consumer.max.size: one member too many gets GROUP_MAX_SIZE_REACHED, the others carry on', () => {
  const h = consumerHarness({ maxSize: 2 });
  h.topics.add('t', 2);
  ok(h.heartbeat(join('a', ['t'])));
  ok(h.heartbeat(join('b', ['t'])));
  const c = h.heartbeat(join('c', ['t']));
  assert.equal(c.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
  assert.equal(h.group().members.size, 2);
  assert.equal(h.group().groupEpoch, 2);
});

test('topics created, grown and deleted show in the next heartbeat (group epoch bump)', () => {
  const h = consumerHarness();
  let a = ok(h.heartbeat(join('a', ['t', 'later'])));
  assert.equal(a.memberEpoch, 1);
  assert.deepEqual(owned(h.topics, a), []);
  h.topics.add('later', 2);
  a = ok(beat(h, 'a', a.memberEpoch, new Map()));
  assert.equal(a.memberEpoch, 2);
  assert.deepEqual(owned(h.topics, a), ['later-0', 'later-1']);
  const grown = h.topics.byName('later')!;
  h.topics.topics.set('later', { ...grown, partitionCount: 3 });
  a = ok(beat(h, 'a', a.memberEpoch, parts(a)));
  assert.deepEqual(owned(h.topics, a), ['later-0', 'later-1', 'later-2']);
  const id = grown.topicId;
  h.topics.topics.delete('later');
  a = ok(beat(h, 'a', a.memberEpoch, parts(a)));
  assert.equal(h.group().members.get('a')!.state, MemberState.UNREVOKED_PARTITIONS);
  a = ok(beat(h, 'a', a.memberEpoch, new Map()));
  assert.equal(h.group().partitionEpoch(id, 0), -1);
  assert.equal(h.group().state, 'Stable');
  assertReplayable(h);
});

test('an empty classic group (only committed offsets) becomes a consumer group, its offsets kept', () => {
  const h = consumerHarness();
  h.topics.add('t', 1);
  h.shard.groups.set('offsets-only', new ClassicGroup('offsets-only', h.now));
  ok(h.heartbeat({ ...join('a', ['t']), groupId: 'offsets-only' }));
  assert.equal(h.shard.groups.has('offsets-only'), false);
  assert.ok(h.shard.consumerGroups.has('offsets-only'));
});

test('regex subscriptions (v1, RE2J dialect): whole-name matches, a topic created later joins at the next heartbeat, bad patterns are refused', () => {
  const h = consumerHarness();
  h.topics.add('events-a', 1);
  h.topics.add('other', 1);
  h.topics.add('xevents-b', 1);
  let a = ok(h.heartbeat(join('a', [], { subscribedTopicNames: null, subscribedTopicRegex: 'events-.*' })));
  assert.deepEqual(owned(h.topics, a), ['events-a-0']);
  h.topics.add('events-b', 2);
  a = ok(beat(h, 'a', a.memberEpoch, parts(a)));
  assert.deepEqual(owned(h.topics, a), ['events-a-0', 'events-b-0', 'events-b-1']);
  const bad = h.heartbeat(join('b', [], { subscribedTopicNames: null, subscribedTopicRegex: '(?<name>x)\\1' }));
  assert.equal(bad.errorCode, 128);
  assert.match(bad.errorMessage!, /SubscribedTopicRegex `.*` is not a valid regular expression/);
  // Catastrophic for a backtracking engine, linear here.
  h.topics.add(`${'a'.repeat(5_000)}!`, 1);
  const started = performance.now();
  ok(h.heartbeat(join('c', [], { subscribedTopicNames: null, subscribedTopicRegex: '(a+)+$' })));
  assert.ok(performance.now() - started < 1_000);
  assert.deepEqual([...h.group().members.keys()].sort(), ['a', 'c']);
  assertReplayable(h);
});
