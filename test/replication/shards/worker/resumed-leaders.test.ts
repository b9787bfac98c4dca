/**
 * A restarted worker's re-sent states (replication/shards/worker/resumed-leaders.ts): a leader
 * whose recovered log ends below its checkpointed high watermark is refused
 * (KAFKA_STORAGE_ERROR); one whose log reaches it, a follower, and a log without a checkpoint
 * are taken up again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { resumableStates } from '../../../../src/replication/shards/worker/resumed-leaders.js';
import type { LeaderAndIsrPartition } from '../../../../src/replication/hosting/role-changes.js';

const state = (partition: number, leader: number): LeaderAndIsrPartition => ({
  topic: 't',
  topicId: undefined,
  partition,
  leader,
  leaderEpoch: 3,
  isr: [0, 1],
  replicas: [0, 1],
});

test('a leader whose recovered log ends below its checkpointed HW is not led again at the same epoch; the others are', () => {
  // partition: [log end, checkpointed HW]
  const logs = new Map<number, [number, number | undefined]>([
    [0, [7, 10]], // led here, truncated below the HW: refused
    [1, [10, 10]], // led here, reaches its HW
    [2, [7, 10]], // followed here: the leader's log decides
    [3, [0, undefined]], // no checkpoint
  ]);
  const out = resumableStates([state(0, 0), state(1, 0), state(2, 1), state(3, 0)], 0, {
    logEndOffset: (_t, p) => logs.get(p)?.[0],
    checkpointedHighWatermark: (_t, p) => logs.get(p)?.[1],
  });
  assert.deepEqual(
    out.states.map((s) => s.partition),
    [1, 2, 3],
  );
  assert.deepEqual(out.refused, [['t-0', ErrorCode.KAFKA_STORAGE_ERROR]]);
});
