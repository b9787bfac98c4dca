/**
 * The actions behind replica state moves (the doing half of Kafka's ReplicaStateMachine): an
 * online replica is sent the partition's LeaderAndIsr, an offline one is stopped and removed from
 * the ISR (with a conditional, fenced state write), a replica being deleted gets
 * StopReplica(deletePartition). Replicas that left the assignment are forgotten.
 */
import type { LeaderIsrState } from '../metadata/zk/zk-client-types.js';
import { groupByTopic, tpKey } from '../common/partition-keys.js';
import { NO_LEADER, type TopicPartition } from './context.js';
import type { ControllerEnv } from './env.js';
import { refreshLeadership } from './partition-ops.js';
import { legalForReplicaMove, replicaState, setReplicaState, type PartitionReplica, type ReplicaState } from './replica-state-machine.js';

const MAX_ZK_RETRIES = 5;

export async function handleReplicaStateChanges(env: ControllerEnv, replicas: readonly PartitionReplica[], target: ReplicaState): Promise<void> {
  const { ctx, batch } = env;
  const legal = legalForReplicaMove(ctx, replicas, target, env.log);
  switch (target) {
    case 'NewReplica':
    case 'OnlineReplica':
      for (const r of legal) {
        const wasNew = replicaState(ctx, r) === 'NewReplica' || replicaState(ctx, r) === 'NonExistentReplica';
        // A replica on a live broker learns its partition's state (a new one is created there).
        if (ctx.leadership.has(tpKey(r.topic, r.partition)) && !ctx.isTopicQueuedForDeletion(r.topic)) {
          batch.addLeaderAndIsrRequestForBrokers([r.replica], r, target === 'NewReplica' || wasNew);
        }
        moveReplica(env, r, target);
      }
      return;
    case 'OfflineReplica': {
      for (const r of legal) batch.addStopReplicaRequestForBrokers([r.replica], r, false);
      const byBroker = new Map<number, TopicPartition[]>();
      for (const r of legal) (byBroker.get(r.replica) ?? byBroker.set(r.replica, []).get(r.replica)!).push(r);
      for (const [broker, tps] of byBroker) {
        const changed = await removeReplicaFromIsr(env, broker, tps);
        for (const tp of changed) {
          if (ctx.isTopicQueuedForDeletion(tp.topic)) continue;
          batch.addLeaderAndIsrRequestForBrokers(
            ctx.replicasFor(tp).filter((b) => b !== broker),
            tp,
            false,
          );
        }
      }
      for (const r of legal) moveReplica(env, r, 'OfflineReplica');
      return;
    }
    case 'ReplicaDeletionStarted':
      for (const r of legal) {
        batch.addStopReplicaRequestForBrokers([r.replica], r, true);
        moveReplica(env, r, target);
      }
      return;
    case 'ReplicaDeletionIneligible':
    case 'ReplicaDeletionSuccessful':
      for (const r of legal) moveReplica(env, r, target);
      return;
    case 'NonExistentReplica':
      for (const r of legal) {
        const t = ctx.topics.get(r.topic);
        const replicas = t?.assignment.get(r.partition);
        if (t && replicas)
          t.assignment.set(
            r.partition,
            replicas.filter((b) => b !== r.replica),
          );
        moveReplica(env, r, target);
      }
      return;
  }
}

/** Sets a replica's state, writing the move to the state-change log. */
function moveReplica(env: ControllerEnv, r: PartitionReplica, target: ReplicaState): void {
  const from = replicaState(env.ctx, r);
  setReplicaState(env.ctx, r, target);
  env.stateChange.replicaState(r.topic, r.partition, r.replica, from, target, env.cause);
}

/**
 * Takes `broker` out of each partition's ISR (Kafka's removeReplicasFromIsr). If it led, the
 * partition has no leader (-1) until an election; the last ISR member is kept even when dead, so
 * a later clean election knows who had everything. Returns the partitions whose state changed.
 */
export async function removeReplicaFromIsr(env: ControllerEnv, broker: number, tps: readonly TopicPartition[]): Promise<TopicPartition[]> {
  const { ctx, zk } = env;
  const changed: TopicPartition[] = [];
  let remaining = [...tps];
  for (let attempt = 0; remaining.length > 0 && attempt < MAX_ZK_RETRIES; attempt++) {
    const retry: TopicPartition[] = [];
    for (const [topic, list] of groupByTopic(remaining)) {
      const updates: { partition: number; state: LeaderIsrState; expectedZkVersion: number }[] = [];
      for (const tp of list) {
        const cur = ctx.leadership.get(tpKey(topic, tp.partition));
        if (!cur) continue;
        const { state } = cur;
        if (state.leader !== broker && !state.isr.includes(broker)) continue;
        const leader = state.leader === broker ? NO_LEADER : state.leader;
        const isr = leader === NO_LEADER && state.isr.length === 1 ? [...state.isr] : state.isr.filter((b) => b !== broker);
        updates.push({
          partition: tp.partition,
          state: { leader, leaderEpoch: state.leaderEpoch + 1, isr, controllerEpoch: ctx.epoch },
          expectedZkVersion: cur.zkVersion,
        });
      }
      if (updates.length === 0) continue;
      const results = await zk.updatePartitionStates(topic, updates, env.fence());
      for (const u of updates) {
        const r = results.get(u.partition);
        const tp = { topic, partition: u.partition };
        if (typeof r === 'number') {
          env.stateChange.leaderAndIsr(topic, u.partition, ctx.leadership.get(tpKey(topic, u.partition))?.state, u.state, env.cause);
          ctx.leadership.set(tpKey(topic, u.partition), { state: u.state, zkVersion: r });
          changed.push(tp);
        } else retry.push(tp);
      }
    }
    if (retry.length > 0) await refreshLeadership(env, retry);
    remaining = retry;
  }
  if (remaining.length > 0)
    env.log.error({ broker, partitions: remaining.map((tp) => tpKey(tp.topic, tp.partition)) }, 'could not remove replica from ISR after repeated races');
  return changed;
}
