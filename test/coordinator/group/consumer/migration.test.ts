/**
 * Online migration between the classic and consumer protocols (KIP-848, Kafka 4's
 * group.consumer.migration.policy) on one shard: a classic group upgraded by a
 * ConsumerGroupHeartbeat keeps its members' assignments; classic members inside the consumer
 * group rejoin, revoke before anyone else gets a partition, sync and commit; the group
 * downgrades when the last consumer-protocol member leaves; the policy refuses each direction
 * alone; a shard loaded again from the records finds the same group every step of the way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAssignment, encodeSubscription } from '../../../../src/client/group/membership.js';
import { joinGroup, syncGroup } from '../../../../src/coordinator/group/join-sync.js';
import { heartbeat } from '../../../../src/coordinator/group/heartbeat-leave.js';
import type { JoinOutcome, SyncOutcome } from '../../../../src/coordinator/group/classic-group.js';
import { classicJoinOverConsumerGroup } from '../../../../src/coordinator/group/consumer/classic-join.js';
import {
  classicHeartbeatToConsumerGroup,
  classicLeaveFromConsumerGroup,
  classicSyncToConsumerGroup,
} from '../../../../src/coordinator/group/consumer/classic-member-in-consumer-group.js';
import { decodeClassicAssignment } from '../../../../src/coordinator/group/consumer/classic-protocol.js';
import { describeConsumerGroup, listConsumerGroups } from '../../../../src/coordinator/group/consumer/describe.js';
import { listGroups } from '../../../../src/coordinator/group/admin.js';
import { commitOffsets } from '../../../../src/coordinator/group/offsets.js';
import type { MigrationPolicy } from '../../../../src/coordinator/group/consumer/settings.js';
import { MemberState } from '../../../../src/coordinator/group/consumer/member.js';
import { encodeRecord, type CoordinatorRecord } from '../../../../src/coordinator/group/records.js';
import type { GroupShard } from '../../../../src/coordinator/group/group-shard.js';
import type { OperationResult } from '../../../../src/coordinator/runtime/types.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { joinReq } from '../harness.js';
import { type ConsumerHarness, assertReplayable, consumerHarness, join, owned } from './harness.js';

/** Runs an operation as the runtime would once its records are durable (replay, then onDurable). */
function op<T>(h: ConsumerHarness, f: (s: GroupShard, now: number) => OperationResult<T, CoordinatorRecord>): T {
  const res = f(h.shard, h.now);
  for (const r of res.records) {
    h.shard.replay(r, false);
    h.log.push(encodeRecord(r));
  }
  res.onDurable?.();
  return res.response;
}

const subscription = (owned: { topic: string; partition: number }[] = []) => encodeSubscription(['t'], owned, -1);
const classicJoin = (h: ConsumerHarness, memberId: string, ownedPartitions: number[] = []): Promise<JoinOutcome> => {
  const req = joinReq({
    memberId,
    apiVersion: 3,
    sessionTimeoutMs: 20_000,
    protocols: [{ name: 'range', metadata: subscription(ownedPartitions.map((partition) => ({ topic: 't', partition }))) }],
  });
  return op(h, (s, now) => classicJoinOverConsumerGroup(s, req, now, () => joinGroup(s, req, now)));
};
const sync = (
  h: ConsumerHarness,
  memberId: string,
  generationId: number,
  assignments: { memberId: string; assignment: Buffer }[] = [],
): Promise<SyncOutcome> => {
  const req = { groupId: 'g', generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments };
  return op(h, (s, now) => {
    const cg = s.consumerGroups.get('g');
    return cg ? classicSyncToConsumerGroup(s, cg, req) : syncGroup(s, req, now);
  });
};
const classicHeartbeat = (h: ConsumerHarness, memberId: string, generationId: number): number => {
  const req = { groupId: 'g', generationId, memberId, groupInstanceId: null };
  return op(h, (s) => {
    const cg = s.consumerGroups.get('g');
    return cg ? classicHeartbeatToConsumerGroup(s, cg, req) : heartbeat(s, req);
  });
};
const partitionsOf = (bytes: Buffer): number[] =>
  decodeClassicAssignment(bytes)
    .flatMap((t) => t.partitions)
    .sort((a, b) => a - b);

/** A Stable classic group of two members: `a` owns partitions 0-2 of t, `b` 3-5 (generation 2). */
async function classicGroup(h: ConsumerHarness): Promise<{ a: string; b: string }> {
  const first = await classicJoin(h, '');
  const a = first.memberId;
  await sync(h, a, first.generationId, [{ memberId: a, assignment: encodeAssignment(new Map([['t', [0, 1, 2, 3, 4, 5]]])) }]);
  const joiningB = classicJoin(h, '');
  const rejoinA = await classicJoin(h, a);
  const b = (await joiningB).memberId;
  assert.equal(rejoinA.generationId, 2);
  const syncB = sync(h, b, 2);
  await sync(h, a, 2, [
    { memberId: a, assignment: encodeAssignment(new Map([['t', [0, 1, 2]]])) },
    { memberId: b, assignment: encodeAssignment(new Map([['t', [3, 4, 5]]])) },
  ]);
  assert.deepEqual(partitionsOf((await syncB).assignment), [3, 4, 5]);
  assert.equal(h.shard.groups.get('g')?.state, 'Stable');
  return { a, b };
}

/** No partition is held (assigned or being revoked) by two members at once. */
function assertSingleOwners(h: ConsumerHarness): void {
  const holders = new Map<string, string>();
  for (const m of h.group().members.values()) {
    for (const a of [m.assigned, m.pendingRevocation]) {
      for (const [topicId, ps] of a) {
        for (const p of ps) {
          const key = `${topicId}-${p}`;
          assert.equal(holders.get(key), undefined, `partition ${p} held by ${holders.get(key)} and ${m.memberId}`);
          holders.set(key, m.memberId);
        }
      }
    }
  }
}

const assignedOf = (h: ConsumerHarness, memberId: string): number[] =>
  [...(h.group().members.get(memberId)?.assigned.values() ?? [])].flat().sort((x, y) => x - y);

function harness(policy?: MigrationPolicy): ConsumerHarness {
  const h = consumerHarness(policy === undefined ? {} : { migrationPolicy: policy });
  h.topics.add('t', 6);
  return h;
}

test('upgrade: the first consumer heartbeat converts a classic group, its members keep their partitions, and a reloaded shard finds the same group', async () => {
  const h = harness();
  const { a, b } = await classicGroup(h);
  op(h, (s, now) =>
    commitOffsets(
      s,
      {
        groupId: 'g',
        generationId: 2,
        memberId: a,
        groupInstanceId: null,
        retentionTimeMs: -1n,
        apiVersion: 8,
        topics: [
          { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
        ],
      },
      now,
    ),
  );

  const c = h.heartbeat(join('c', ['t']));
  assert.equal(c.errorCode, ErrorCode.NONE, c.errorMessage ?? '');
  assert.equal(h.shard.groups.has('g'), false, 'the classic group is gone');
  const g = h.group();
  assert.equal(g.groupEpoch, 3, 'the generation (2) bumped by the new member');
  assert.equal(c.memberEpoch, 3);
  assert.deepEqual(owned(h.topics, c), [], 'every partition is still held by a classic member');
  assert.equal(g.members.get('c')!.state, MemberState.UNRELEASED_PARTITIONS);
  for (const [id, ps] of [
    [a, [0, 1, 2]],
    [b, [3, 4, 5]],
  ] as const) {
    const m = g.members.get(id)!;
    assert.equal(m.memberEpoch, 2);
    assert.notEqual(m.classic, null);
    assert.equal(m.classic!.sessionTimeoutMs, 20_000);
    assert.deepEqual(assignedOf(h, id), ps, 'nothing revoked by the conversion itself');
  }
  assert.deepEqual(
    h.shard.offsets.list('g').map((o) => o.value.offset),
    [7n],
    'offsets stay',
  );
  assertSingleOwners(h);
  assertReplayable(h);

  // Describe and List show a consumer group with all three members.
  const listed = listConsumerGroups(h.shard, [], []);
  assert.deepEqual(
    listed.map((x) => [x.groupId, x.groupType, x.protocolType]),
    [['g', 'Consumer', 'consumer']],
  );
  assert.deepEqual(listGroups(h.shard, [], []), [], 'no classic group listed');
  const described = describeConsumerGroup(h.shard, 'g');
  assert.deepEqual(described.members.map((m) => m.memberId).sort(), [a, b, 'c'].sort());
  assert.deepEqual(described.members.find((m) => m.memberId === a)!.subscribedTopicNames, ['t']);
});

test('classic members rejoin after a rebalance: revoked first, then the new member gets the partitions; commits use the member epoch', async () => {
  const h = harness();
  const { a, b } = await classicGroup(h);
  h.heartbeat(join('c', ['t']));
  assert.equal(classicHeartbeat(h, a, 1), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(classicHeartbeat(h, a, 2), ErrorCode.REBALANCE_IN_PROGRESS, 'a new group epoch: rejoin');

  // A cooperative member rejoins still owning its partitions: it must revoke before moving on.
  const rejoined = await classicJoin(h, a, [0, 1, 2]);
  assert.equal(rejoined.errorCode, ErrorCode.NONE);
  assert.equal(rejoined.generationId, 2, 'still at its epoch until it revokes');
  assert.equal(rejoined.leader, '');
  assert.deepEqual(rejoined.members, []);
  assert.equal(h.group().members.get(a)!.state, MemberState.UNREVOKED_PARTITIONS);
  const target = [...(h.group().targets.get(a)?.values() ?? [])].flat();
  const synced = await sync(h, a, 2);
  assert.equal(synced.errorCode, ErrorCode.NONE);
  assert.deepEqual(partitionsOf(synced.assignment), assignedOf(h, a));
  assert.ok(
    partitionsOf(synced.assignment).every((p) => target.includes(p)),
    'the sync hands out only what it keeps',
  );
  assertSingleOwners(h);
  assert.equal(classicHeartbeat(h, a, 2), ErrorCode.REBALANCE_IN_PROGRESS, 'revocation pending: rejoin once revoked');

  // The revoked partitions are not the new member's until a says it let them go.
  const before = h.heartbeat({ memberId: 'c', memberEpoch: 3, topicPartitions: [] });
  assert.equal(before.assignment, null);
  const after = await classicJoin(h, a, partitionsOf(synced.assignment));
  assert.equal(after.generationId, 3);
  assertSingleOwners(h);
  const c = h.heartbeat({ memberId: 'c', memberEpoch: 3, topicPartitions: [] });
  assert.ok(owned(h.topics, c).length > 0, 'c got what a revoked');
  assertSingleOwners(h);

  // b is eager (owns nothing when it rejoins); then everyone converges.
  assert.equal(classicHeartbeat(h, b, 2), ErrorCode.REBALANCE_IN_PROGRESS);
  const bJoined = await classicJoin(h, b);
  assert.equal(bJoined.generationId, 3);
  const bSynced = await sync(h, b, 3);
  assert.deepEqual(partitionsOf(bSynced.assignment), assignedOf(h, b));
  const cTopicPartitions = (res: ReturnType<typeof h.heartbeat>) => res.assignment?.topicPartitions ?? [];
  const c2 = h.heartbeat({ memberId: 'c', memberEpoch: 3, topicPartitions: cTopicPartitions(c) });
  assertSingleOwners(h);
  // a waited for a partition b held: now free, so a is told to rejoin for it.
  assert.equal(classicHeartbeat(h, a, 3), ErrorCode.REBALANCE_IN_PROGRESS);
  const aAgain = await classicJoin(h, a, assignedOf(h, a));
  assert.equal(aAgain.generationId, 3);
  assert.deepEqual(partitionsOf((await sync(h, a, 3)).assignment), assignedOf(h, a));
  assertSingleOwners(h);
  assert.equal(
    h.group().state,
    'Stable',
    JSON.stringify({
      c2: owned(h.topics, c2),
      members: [...h.group().members.values()].map((m) => [m.memberId, m.memberEpoch, m.state, [...m.assigned.values()]]),
      targets: [...h.group().targets].map(([k, v]) => [k, [...v.values()]]),
      epoch: h.group().groupEpoch,
    }),
  );
  assert.equal(classicHeartbeat(h, a, 3), ErrorCode.NONE);
  assert.equal(classicHeartbeat(h, b, 3), ErrorCode.NONE);
  assert.deepEqual([...assignedOf(h, a), ...assignedOf(h, b), ...assignedOf(h, 'c')].sort(), [0, 1, 2, 3, 4, 5]);

  const commit = (generationId: number, apiVersion: number) =>
    op(h, (s, now) =>
      commitOffsets(
        s,
        {
          groupId: 'g',
          generationId,
          memberId: b,
          groupInstanceId: null,
          retentionTimeMs: -1n,
          apiVersion,
          topics: [
            { name: 't', partitions: [{ partitionIndex: 3, committedOffset: 9n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
          ],
        },
        now,
      ),
    )[0]!.partitions[0]!.errorCode;
  assert.equal(commit(3, 7), ErrorCode.NONE, 'a classic member commits with its epoch, any version');
  assert.equal(commit(2, 7), ErrorCode.ILLEGAL_GENERATION);
  assertReplayable(h);
});

test('a brand-new classic member joins a consumer group as a classic member; one that never syncs is removed after its rebalance timeout', async () => {
  const h = harness();
  h.heartbeat(join('c', ['t']));
  const asked = await classicJoin(h, '');
  assert.equal(asked.errorCode, ErrorCode.NONE, 'v3: no KIP-394 round trip');
  const id = asked.memberId;
  assert.equal(h.group().members.get(id)?.classic?.sessionTimeoutMs, 20_000);
  assert.equal(asked.protocolType, 'consumer');
  assert.equal(asked.protocolName, 'range');
  assertReplayable(h);
  h.advance(60_001);
  assert.equal(h.group().members.has(id), false, 'no SyncGroup within the rebalance timeout (60 s)');
});

test('downgrade: the last consumer-protocol member leaving turns the group classic again, rebalancing; a reloaded shard finds it', async () => {
  const h = harness();
  const { a, b } = await classicGroup(h);
  h.heartbeat(join('c', ['t']));
  const epoch = h.group().groupEpoch;
  const targetOfB = [...h.group().targets.get(b)!.values()].flat().sort((x, y) => x - y);
  const left = h.heartbeat({ memberId: 'c', memberEpoch: -1 });
  assert.equal(left.errorCode, ErrorCode.NONE);
  assert.equal(h.shard.consumerGroups.has('g'), false);
  const classic = h.shard.groups.get('g');
  assert.ok(classic);
  assert.equal(classic.state, 'PreparingRebalance');
  assert.equal(classic.generationId, epoch);
  assert.deepEqual([...classic.members.keys()].sort(), [a, b].sort());
  assert.deepEqual(partitionsOf(classic.members.get(b)!.assignment), targetOfB, 'its target assignment');
  assert.deepEqual(
    listGroups(h.shard, [], []).map((x) => [x.groupType, x.groupState]),
    [['Classic', 'PreparingRebalance']],
  );

  const reloaded = h.reload();
  assert.equal(reloaded.consumerGroups.has('g'), false);
  assert.deepEqual([...reloaded.groups.get('g')!.members.keys()].sort(), [a, b].sort());
  assert.equal(reloaded.groups.get('g')!.generationId, epoch);

  // The classic members rejoin the classic group: a new generation with both.
  assert.equal(classicHeartbeat(h, a, epoch), ErrorCode.REBALANCE_IN_PROGRESS);
  const ja = classicJoin(h, a);
  const jb = await classicJoin(h, b);
  assert.equal(jb.generationId, epoch + 1);
  assert.equal((await ja).generationId, epoch + 1);
});

test('policies: disabled and downgrade refuse the upgrade and leave the classic group as it was; upgrade keeps a group consumer; disabled refuses new classic members', async () => {
  for (const policy of ['disabled', 'downgrade'] as const) {
    const h = harness(policy);
    const { a } = await classicGroup(h);
    const written = h.log.length;
    const res = h.heartbeat(join('c', ['t']));
    assert.equal(res.errorCode, ErrorCode.GROUP_ID_NOT_FOUND, policy);
    assert.equal(res.errorMessage, 'Group g is not a consumer group.');
    assert.equal(h.log.length, written, 'nothing written');
    assert.equal(h.shard.consumerGroups.has('g'), false);
    assert.equal(h.shard.groups.get('g')!.state, 'Stable');
    assert.equal(classicHeartbeat(h, a, 2), ErrorCode.NONE, 'the classic group goes on undisturbed');
  }

  const up = harness('upgrade');
  await classicGroup(up);
  up.heartbeat(join('c', ['t']));
  const epoch = up.group().groupEpoch;
  up.heartbeat({ memberId: 'c', memberEpoch: -1 });
  assert.equal(up.shard.groups.has('g'), false, 'no downgrade under upgrade');
  assert.equal(up.group().members.size, 2);
  assert.equal(up.group().groupEpoch, epoch + 1);

  const off = harness('disabled');
  off.heartbeat(join('c', ['t']));
  assert.equal((await classicJoin(off, '')).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal(off.group().members.size, 1);

  // A classic group of another protocol type never upgrades.
  const connect = harness();
  const req = joinReq({ apiVersion: 3, protocolType: 'connect', protocols: [{ name: 'default', metadata: Buffer.from('x') }] });
  await op(connect, (s, now) => joinGroup(s, req, now));
  assert.equal(connect.heartbeat(join('c', ['t'])).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
});

test('LeaveGroup of a classic member inside a consumer group removes it and bumps the epoch', async () => {
  const h = harness();
  const { a, b } = await classicGroup(h);
  h.heartbeat(join('c', ['t']));
  const epoch = h.group().groupEpoch;
  const res = op(h, (s) =>
    classicLeaveFromConsumerGroup(s, s.consumerGroups.get('g')!, [
      { memberId: a, groupInstanceId: null },
      { memberId: 'c', groupInstanceId: null },
    ]),
  );
  assert.deepEqual(
    res.members.map((m) => m.errorCode),
    [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID],
    'a consumer-protocol member cannot leave with LeaveGroup',
  );
  assert.deepEqual([...h.group().members.keys()].sort(), [b, 'c'].sort());
  assert.equal(h.group().groupEpoch, epoch + 1);
  assertReplayable(h);
});

test('classic members keep their JoinGroup session timeout inside the consumer group; a group over group.consumer.max.size is not upgraded', async () => {
  const h = harness();
  const { a, b } = await classicGroup(h);
  h.heartbeat(join('c', ['t']));
  h.advance(15_000);
  assert.equal(classicHeartbeat(h, a, 2), ErrorCode.REBALANCE_IN_PROGRESS);
  h.heartbeat({ memberId: 'c', memberEpoch: 3 });
  h.advance(10_000);
  assert.ok(h.group().members.has(a), 'a heartbeat within its 20 s');
  assert.equal(h.group().members.has(b), false, 'b was silent for 25 s > 20 s');
  assert.ok(h.group().members.has('c'), 'the consumer-protocol session is 45 s');

  const small = consumerHarness({ maxSize: 1 });
  small.topics.add('t', 6);
  await classicGroup(small);
  const res = small.heartbeat(join('c', ['t']));
  assert.equal(res.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(small.shard.groups.get('g')!.members.size, 2);
});
