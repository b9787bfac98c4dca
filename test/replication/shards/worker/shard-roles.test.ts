/**
 * ShardRoles (replication/shards/worker/shard-roles.ts) over fake shards: a role change to a shard
 * whose worker is down or opening waits for it (bounded), is applied after the ledger's states
 * when it serves again, and answers KAFKA_STORAGE_ERROR (the state forgotten: offline until the
 * broker restarts) when it is not back in time; a deletion to such a shard stays stale for the
 * restarted worker until a shard answers it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { ShardRoles, type RoleMessage, type RoleShards } from '../../../../src/replication/shards/worker/shard-roles.js';
import type { FromShard } from '../../../../src/replication/shards/worker/shard-protocol.js';
import type { LeaderAndIsrPartition } from '../../../../src/replication/hosting/role-changes.js';

/** Every partition on shard 1; the shard answers NONE for every part while it serves. */
class FakeShards implements RoleShards {
  readonly count = 2;
  serving = true;
  hosting = true;
  readonly sent: RoleMessage[] = [];
  readonly stale = new Set<string>();
  /** The restarted worker refuses the re-sent states (as a leader's log recovered below its checkpointed HW). */
  refuseResumed = false;

  shardOf(): number {
    return 1;
  }
  isServing(): boolean {
    return this.serving;
  }
  isHosting(): boolean {
    return this.hosting;
  }
  callShard(_index: number, message: RoleMessage): Promise<FromShard | undefined> {
    if (!this.serving) return Promise.resolve(undefined);
    this.sent.push(message);
    const parts = message.type === 'leaderAndIsr' ? message.states : message.type === 'stopReplica' ? message.parts : [];
    const code = message.type === 'leaderAndIsr' && message.resumed && this.refuseResumed ? ErrorCode.KAFKA_STORAGE_ERROR : ErrorCode.NONE;
    return Promise.resolve({ type: 'answered', id: 0, result: parts.map((p) => [`${p.topic}-${p.partition}`, code]) });
  }
  deletingPartition(_shard: number, topic: string, partition: number): void {
    this.stale.add(`${topic}-${partition}`);
  }
  partitionDeleteAnswered(_shard: number, topic: string, partition: number): void {
    this.stale.delete(`${topic}-${partition}`);
  }
}

const state = (partition: number, leaderEpoch: number): LeaderAndIsrPartition => ({
  topic: 't',
  topicId: undefined,
  partition,
  leader: 0,
  leaderEpoch,
  isr: [0, 1],
  replicas: [0, 1],
});

function roles(holdForRestartMs: number): { roles: ShardRoles; shards: FakeShards } {
  const shards = new FakeShards();
  const r = new ShardRoles({ brokerId: 0, brokers: () => [], logger: pino({ level: 'silent' }), holdForRestartMs });
  r.attach(shards);
  return { roles: r, shards };
}

const codes = (m: Map<string, number>) => Object.fromEntries(m);

test('a LeaderAndIsr to a shard that is opening waits for it, and is sent after the ledger states on its restart', async () => {
  const { roles: r, shards } = roles(30_000);
  await r.becomeLeaderOrFollower([state(0, 1)], () => ({}));
  shards.serving = false;
  let answered: Map<string, number> | undefined;
  const pending = r.becomeLeaderOrFollower([state(1, 1)], () => ({})).then((m) => (answered = m));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(answered, undefined, 'held while the worker opens');
  shards.serving = true;
  r.restarted(1);
  await pending;
  assert.deepEqual(codes(answered!), { 't-1': ErrorCode.NONE });
  assert.deepEqual(
    shards.sent.map((m) => (m.type === 'leaderAndIsr' ? m.states.map((s) => s.partition) : [])),
    [[0], [0], [1]],
    'the ledger (partition 0) first, then the held part',
  );
  assert.equal(r.leadsHere('t', 1, 1), true);
});

test('a LeaderAndIsr to a shard not back within the hold answers KAFKA_STORAGE_ERROR and is forgotten, with the earlier state', async () => {
  const { roles: r, shards } = roles(50);
  await r.becomeLeaderOrFollower([state(0, 1)], () => ({}));
  shards.serving = false;
  const answered = await r.becomeLeaderOrFollower([state(0, 2)], () => ({}));
  assert.deepEqual(codes(answered), { 't-0': ErrorCode.KAFKA_STORAGE_ERROR });
  shards.serving = true;
  shards.sent.length = 0;
  r.restarted(1);
  assert.deepEqual(shards.sent, [], 'the restarted worker takes up nothing the controller counts offline');
  assert.equal(r.hostedEpoch('t', 0), undefined);
});

test('a LeaderAndIsr to a shard given up on answers KAFKA_STORAGE_ERROR at once', async () => {
  const { roles: r, shards } = roles(30_000);
  shards.serving = false;
  shards.hosting = false;
  assert.deepEqual(codes(await r.becomeLeaderOrFollower([state(0, 1)], () => ({}))), { 't-0': ErrorCode.KAFKA_STORAGE_ERROR });
});

test('a StopReplica deleting a partition on a shard that stays down leaves it stale for the restart; an answered one does not', async () => {
  const { roles: r, shards } = roles(50);
  await r.becomeLeaderOrFollower([state(0, 1), state(1, 1)], () => ({}));
  await r.stopReplicas([{ topic: 't', partition: 0, leaderEpoch: -2, deletePartition: true }]);
  assert.deepEqual([...shards.stale], [], 'answered: not stale');
  shards.serving = false;
  const answered = await r.stopReplicas([{ topic: 't', partition: 1, leaderEpoch: -2, deletePartition: true }]);
  assert.deepEqual(codes(answered), { 't-1': ErrorCode.KAFKA_STORAGE_ERROR });
  assert.deepEqual([...shards.stale], ['t-1'], 'the restarted worker deletes its log before it serves');
  assert.equal(r.hostedEpoch('t', 1), undefined, 'gone from the ledger');
});

test('a re-sent state the restarted worker refuses leaves the ledger: not led here, not sent again', async () => {
  const { roles: r, shards } = roles(50);
  await r.becomeLeaderOrFollower([state(0, 1)], () => ({}));
  shards.refuseResumed = true;
  r.restarted(1);
  await waitUntil(() => r.hostedEpoch('t', 0) === undefined);
  assert.equal(r.leadsHere('t', 0, 1), false);
  assert.equal((shards.sent.at(-1) as { resumed?: boolean }).resumed, true, 'sent as resumed');
});

/** Polls `ok` on each turn of the event loop, up to 2 s. */
async function waitUntil(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!ok()) {
    assert.ok(Date.now() < deadline, 'in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
