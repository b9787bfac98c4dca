/**
 * Partition states and their legal moves (Kafka's PartitionStateMachine): each target state lists
 * the states it may be entered from. The actions that go with a move (elections, state znode
 * writes, requests) live in partition-ops.ts; this file only says which moves are allowed, so an
 * illegal one is logged and refused instead of silently corrupting the controller's view.
 */
import type { Logger } from 'pino';
import { tpKey } from '../common/partition-keys.js';
import type { ControllerContext, TopicPartition } from './context.js';

export type PartitionState = 'NonExistentPartition' | 'NewPartition' | 'OnlinePartition' | 'OfflinePartition';

export const PARTITION_VALID_PREVIOUS: Readonly<Record<PartitionState, readonly PartitionState[]>> = {
  NonExistentPartition: ['OfflinePartition'],
  NewPartition: ['NonExistentPartition'],
  OnlinePartition: ['NewPartition', 'OnlinePartition', 'OfflinePartition'],
  OfflinePartition: ['NewPartition', 'OnlinePartition', 'OfflinePartition'],
};

export function partitionState(ctx: ControllerContext, tp: TopicPartition): PartitionState {
  return ctx.partitionStates.get(tpKey(tp.topic, tp.partition)) ?? 'NonExistentPartition';
}

export function isLegalPartitionMove(from: PartitionState, to: PartitionState): boolean {
  return PARTITION_VALID_PREVIOUS[to].includes(from);
}

/**
 * Keeps the partitions whose move to `target` is legal; logs the others (Kafka logs them as
 * "invalid state transition" and leaves them as they are).
 */
export function legalForPartitionMove(ctx: ControllerContext, tps: readonly TopicPartition[], target: PartitionState, log: Logger): TopicPartition[] {
  const ok: TopicPartition[] = [];
  for (const tp of tps) {
    const from = partitionState(ctx, tp);
    if (isLegalPartitionMove(from, target)) ok.push(tp);
    else log.error({ partition: tpKey(tp.topic, tp.partition), from, to: target }, 'illegal partition state change refused');
  }
  return ok;
}

export function setPartitionState(ctx: ControllerContext, tp: TopicPartition, target: PartitionState): void {
  const k = tpKey(tp.topic, tp.partition);
  if (target === 'NonExistentPartition') ctx.partitionStates.delete(k);
  else ctx.partitionStates.set(k, target);
}
