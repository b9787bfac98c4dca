import { test } from 'node:test';
import assert from 'node:assert/strict';
import { joinGroup, syncGroup } from '../../../src/coordinator/group/join-sync.js';
import { heartbeat, leaveGroup } from '../../../src/coordinator/group/heartbeat-leave.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { decodeRecord } from '../../../src/coordinator/group/records.js';
import { harness, joinReq, type Harness } from './harness.js';
import type { JoinRequest } from '../../../src/coordinator/group/join-sync.js';

const join = (h: Harness, r: Partial<JoinRequest>) => h.runtime.write(0, (s, now) => joinGroup(s, joinReq(r), now));
const sync = (
  h: Harness,
  memberId: string,
  generationId: number,
  assignments: { memberId: string; assignment: Buffer }[] = [],
  groupInstanceId: string | null = null,
) =>
  h.runtime.write(0, (s, now) =>
    syncGroup(s, { groupId: 'g', generationId, memberId, groupInstanceId, protocolType: null, protocolName: null, assignments }, now),
  );

/** Two-step join of a new dynamic member (KIP-394), returning its join outcome promise. */
async function joinNew(h: Harness, over: Partial<JoinRequest> = {}) {
  const first = await join(h, over);
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.ok(first.memberId.startsWith('c-'));
  return { memberId: first.memberId, outcome: join(h, { ...over, memberId: first.memberId }) };
}

test('a single member joins (after MEMBER_ID_REQUIRED), leads, syncs and becomes Stable with a GroupMetadata record', async () => {
  const h = await harness();
  const a = await joinNew(h);
  const j = await a.outcome;
  assert.equal(j.errorCode, ErrorCode.NONE);
  assert.equal(j.generationId, 1);
  assert.equal(j.leader, a.memberId);
  assert.equal(j.protocolName, 'range');
  assert.deepEqual(
    j.members.map((m) => m.memberId),
    [a.memberId],
  );
  assert.equal(h.shard().groups.get('g')!.state, 'CompletingRebalance');
  const s = await sync(h, a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('A') }]);
  assert.equal(s.errorCode, ErrorCode.NONE);
  assert.equal(s.assignment.toString(), 'A');
  assert.equal(h.shard().groups.get('g')!.state, 'Stable');
  const recs = h.log.all().map((r) => decodeRecord(r.key, r.value));
  assert.equal(recs.length, 1);
  assert.equal(recs[0]!.type, 'group');
  assert.equal(recs[0]!.type === 'group' && recs[0]!.value!.members[0]!.assignment.toString(), 'A');
});

test('v0–v3 joins get a member id at once; a second member triggers a rebalance that waits for both', async () => {
  const h = await harness();
  const a = await join(h, { apiVersion: 3 });
  assert.equal(a.errorCode, ErrorCode.NONE);
  await sync(h, a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('all') }]);
  const bJoin = join(h, { apiVersion: 3, clientId: 'b' });
  // The stable member learns about the rebalance through its heartbeat.
  assert.equal(
    await h.runtime.write(0, (s) => heartbeat(s, { groupId: 'g', generationId: 1, memberId: a.memberId, groupInstanceId: null })),
    ErrorCode.REBALANCE_IN_PROGRESS,
  );
  const aJoin = join(h, { apiVersion: 3, memberId: a.memberId });
  const [ja, jb] = await Promise.all([aJoin, bJoin]);
  assert.equal(ja.generationId, 2);
  assert.equal(jb.generationId, 2);
  assert.equal(ja.leader, a.memberId);
  assert.equal(ja.members.length, 2);
  assert.equal(jb.members.length, 0);
  const followerSync = sync(h, jb.memberId, 2);
  const leaderSync = await sync(h, a.memberId, 2, [
    { memberId: a.memberId, assignment: Buffer.from('p0') },
    { memberId: jb.memberId, assignment: Buffer.from('p1') },
  ]);
  assert.equal(leaderSync.assignment.toString(), 'p0');
  assert.equal((await followerSync).assignment.toString(), 'p1');
});

test('generation and member checks: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS', async () => {
  const h = await harness();
  const a = await (await joinNew(h)).outcome;
  await sync(h, a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('x') }]);
  assert.equal((await sync(h, a.memberId, 0)).errorCode, ErrorCode.ILLEGAL_GENERATION);
  assert.equal((await sync(h, 'nobody', 1)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(
    await h.runtime.write(0, (s) => heartbeat(s, { groupId: 'g', generationId: 7, memberId: a.memberId, groupInstanceId: null })),
    ErrorCode.ILLEGAL_GENERATION,
  );
  assert.equal(
    await h.runtime.write(0, (s) => heartbeat(s, { groupId: 'nope', generationId: 1, memberId: a.memberId, groupInstanceId: null })),
    ErrorCode.UNKNOWN_MEMBER_ID,
  );
});

test('protocol checks: INCONSISTENT_GROUP_PROTOCOL; session timeout bounds; group.max.size', async () => {
  const h = await harness({ maxGroupSize: 1 });
  assert.equal((await join(h, { sessionTimeoutMs: 1 })).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
  const a = await join(h, { apiVersion: 3 });
  assert.equal(a.errorCode, ErrorCode.NONE);
  assert.equal((await join(h, { apiVersion: 3, protocolType: 'connect' })).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal((await join(h, { apiVersion: 3, protocols: [{ name: 'other', metadata: Buffer.alloc(0) }] })).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal((await join(h, { apiVersion: 3 })).errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
});

test('the protocol vote picks what most members prefer among the common protocols', async () => {
  const h = await harness();
  const p = (...names: string[]) => names.map((name) => ({ name, metadata: Buffer.from(name) }));
  const a = await join(h, { apiVersion: 3, protocols: p('roundrobin', 'range') });
  await sync(h, a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.alloc(0) }]);
  const jb = join(h, { apiVersion: 3, protocols: p('range', 'roundrobin') });
  const jc = join(h, { apiVersion: 3, protocols: p('range', 'sticky') });
  const ja = join(h, { apiVersion: 3, memberId: a.memberId, protocols: p('roundrobin', 'range') });
  // c does not support roundrobin, so only range is common to all.
  assert.equal((await ja).protocolName, 'range');
  await Promise.all([jb, jc]);
});

test('static member: a restarted instance takes over without a rebalance and the old one is fenced', async () => {
  const h = await harness();
  const a = await join(h, { groupInstanceId: 'i1' });
  assert.equal(a.errorCode, ErrorCode.NONE); // static members skip MEMBER_ID_REQUIRED
  await sync(h, a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('mine') }], 'i1');
  const before = h.log.all().length;
  const again = await join(h, { groupInstanceId: 'i1' });
  assert.equal(again.errorCode, ErrorCode.NONE);
  assert.equal(again.generationId, 1, 'no new generation');
  assert.equal(again.skipAssignment, true);
  assert.notEqual(again.memberId, a.memberId);
  assert.equal(h.shard().groups.get('g')!.state, 'Stable');
  assert.equal(h.log.all().length, before + 1, 'the new member id is persisted');
  const s = await sync(h, again.memberId, 1, [], 'i1');
  assert.equal(s.assignment.toString(), 'mine');
  assert.equal(
    await h.runtime.write(0, (sh) => heartbeat(sh, { groupId: 'g', generationId: 1, memberId: a.memberId, groupInstanceId: 'i1' })),
    ErrorCode.FENCED_INSTANCE_ID,
  );
});

test('leave: the last member leaving empties the group and writes an Empty GroupMetadata record', async () => {
  const h = await harness();
  const a = await (await joinNew(h)).outcome;
  await sync(h, a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.alloc(0) }]);
  const res = await h.runtime.write(0, (s, now) =>
    leaveGroup(
      s,
      'g',
      [
        { memberId: a.memberId, groupInstanceId: null },
        { memberId: 'ghost', groupInstanceId: null },
      ],
      now,
    ),
  );
  assert.deepEqual(
    res.members.map((m) => m.errorCode),
    [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID],
  );
  const g = h.shard().groups.get('g')!;
  assert.equal(g.state, 'Empty');
  assert.equal(g.generationId, 2);
  const last = h.log.all().at(-1)!;
  const rec = decodeRecord(last.key, last.value);
  assert.ok(rec?.type === 'group' && rec.value!.members.length === 0 && rec.value!.generation === 2);
});

test('a member whose session expires is removed and the group rebalances without it', async () => {
  const h = await harness();
  const a = await join(h, { apiVersion: 3, sessionTimeoutMs: 50 });
  await sync(h, a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.alloc(0) }]);
  const deadline = Date.now() + 5000;
  while (h.shard().groups.get('g')!.state !== 'Empty') {
    assert.ok(Date.now() < deadline, 'session did not expire');
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(h.shard().groups.get('g')!.members.size, 0);
});

test('a restarted coordinator rebuilds the group from its GroupMetadata records', async () => {
  const h = await harness();
  const a = await (await joinNew(h)).outcome;
  await sync(h, a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('asg') }]);
  h.runtime.close();
  const h2 = await harness({}, h.log);
  const g = h2.shard().groups.get('g')!;
  assert.equal(g.state, 'Stable');
  assert.equal(g.generationId, 1);
  assert.equal(g.leaderId, a.memberId);
  assert.equal(g.members.get(a.memberId)!.assignment.toString(), 'asg');
  assert.equal(await h2.runtime.write(0, (s) => heartbeat(s, { groupId: 'g', generationId: 1, memberId: a.memberId, groupInstanceId: null })), ErrorCode.NONE);
  h2.runtime.close();
});
