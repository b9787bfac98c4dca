/**
 * Replica states and their legal moves (Kafka's ReplicaStateMachine), one entry per replica
 * (partition x broker). As for partitions, the table is the only judge of a move; illegal moves
 * are logged and refused. The actions (ISR removal, StopReplica) are in replica-ops.ts.
 */
import type { Logger } from 'pino';
import { replicaKey, type ControllerContext, type TopicPartition } from './context.js';

export type ReplicaState =
  | 'NewReplica'
  | 'OnlineReplica'
  | 'OfflineReplica'
  | 'ReplicaDeletionStarted'
  | 'ReplicaDeletionSuccessful'
  | 'ReplicaDeletionIneligible'
  | 'NonExistentReplica';

export const REPLICA_VALID_PREVIOUS: Readonly<Record<ReplicaState, readonly ReplicaState[]>> = {
  NewReplica: ['NonExistentReplica'],
  OnlineReplica: ['NewReplica', 'OnlineReplica', 'OfflineReplica', 'ReplicaDeletionIneligible'],
  OfflineReplica: ['NewReplica', 'OnlineReplica', 'OfflineReplica', 'ReplicaDeletionIneligible'],
  ReplicaDeletionStarted: ['OfflineReplica'],
  ReplicaDeletionSuccessful: ['ReplicaDeletionStarted'],
  ReplicaDeletionIneligible: ['OfflineReplica', 'ReplicaDeletionStarted'],
  NonExistentReplica: ['ReplicaDeletionSuccessful'],
};

export interface PartitionReplica extends TopicPartition {
  replica: number;
}

export function replicaState(ctx: ControllerContext, r: PartitionReplica): ReplicaState {
  return ctx.replicaStates.get(replicaKey(r, r.replica)) ?? 'NonExistentReplica';
}

export function isLegalReplicaMove(from: ReplicaState, to: ReplicaState): boolean {
  return REPLICA_VALID_PREVIOUS[to].includes(from);
}

export function legalForReplicaMove(ctx: ControllerContext, rs: readonly PartitionReplica[], target: ReplicaState, log: Logger): PartitionReplica[] {
  const ok: PartitionReplica[] = [];
  for (const r of rs) {
    const from = replicaState(ctx, r);
    if (isLegalReplicaMove(from, target)) ok.push(r);
    else log.error({ replica: replicaKey(r, r.replica), from, to: target }, 'illegal replica state change refused');
  }
  return ok;
}

export function setReplicaState(ctx: ControllerContext, r: PartitionReplica, target: ReplicaState): void {
  const k = replicaKey(r, r.replica);
  if (target === 'NonExistentReplica') ctx.replicaStates.delete(k);
  else ctx.replicaStates.set(k, target);
}

export function replicasOf(ctx: ControllerContext, tps: readonly TopicPartition[], filter: (broker: number) => boolean = () => true): PartitionReplica[] {
  const out: PartitionReplica[] = [];
  for (const tp of tps) for (const replica of ctx.replicasFor(tp)) if (filter(replica)) out.push({ ...tp, replica });
  return out;
}
