/**
 * Where a follower truncates, given the leader's (epoch, end offset) for the follower's latest
 * epoch: Kafka's AbstractFetcherThread.getOffsetTruncationState, as a pure function.
 */
import type { FollowerReplica } from './types.js';

export interface TruncationPoint {
  offset: number;
  /** false: truncated to an intermediate point; another round with the leader decides the rest. */
  complete: boolean;
}

export function truncationPoint(
  leader: { leaderEpoch: number; endOffset: number },
  replica: Pick<FollowerReplica, 'logEndOffset' | 'endOffsetForEpoch'>,
  fetchOffset: number,
): TruncationPoint {
  const leo = replica.logEndOffset;
  // The leader knows no end for that epoch: keep the initial fetch offset.
  if (leader.endOffset < 0) return { offset: fetchOffset, complete: true };
  // A leader too old to name the epoch (OffsetForLeaderEpoch v0): its offset is all there is.
  if (leader.leaderEpoch < 0) return { offset: Math.min(leader.endOffset, leo), complete: true };
  const local = replica.endOffsetForEpoch(leader.leaderEpoch);
  // Every epoch we hold is newer than the leader's answer: the leader's offset decides.
  if (!local) return { offset: Math.min(leader.endOffset, leo), complete: true };
  // We do not hold the leader's epoch: cut to the end of our largest epoch below it, then ask again.
  if (local.epoch !== leader.leaderEpoch) return { offset: Math.min(local.endOffset, leo), complete: false };
  return { offset: Math.min(local.endOffset, leader.endOffset, leo), complete: true };
}
