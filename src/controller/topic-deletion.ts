/**
 * Topic deletion (Kafka's TopicDeletionManager). A topic marked at `/admin/delete_topics/<t>` is
 * announced to every broker with leader -2 (LeaderDuringDelete), its partitions go offline, and
 * each replica is sent StopReplica(deletePartition). The topic is gone (znodes and marker
 * deleted, context forgotten) only when every replica has answered without error. A replica on a
 * dead broker makes the topic ineligible until that broker returns; then deletion resumes.
 */
import type { ControllerEnv } from './env.js';
import { tpKey } from '../common/partition-keys.js';
import type { TopicPartition } from './context.js';
import { handlePartitionStateChanges } from './partition-ops.js';
import { partitionState } from './partition-state-machine.js';
import { handleReplicaStateChanges } from './replica-ops.js';
import { replicaState, replicasOf, type PartitionReplica, type ReplicaState } from './replica-state-machine.js';

export async function enqueueTopicsForDeletion(env: ControllerEnv, topics: readonly string[]): Promise<void> {
  for (const t of topics) if (env.ctx.topics.has(t)) env.ctx.topicsToBeDeleted.add(t);
  await resumeDeletions(env);
}

/** A broker hosting replicas of these topics came back: try again. */
export async function resumeDeletionForTopics(env: ControllerEnv, topics: readonly string[]): Promise<void> {
  for (const t of topics) env.ctx.topicsIneligibleForDeletion.delete(t);
  await resumeDeletions(env);
}

/** Replicas whose broker died (or whose StopReplica failed): retried when it returns. */
export async function failReplicaDeletion(env: ControllerEnv, replicas: readonly PartitionReplica[]): Promise<void> {
  const { ctx } = env;
  const eligible = replicas.filter(
    (r) => ctx.isTopicQueuedForDeletion(r.topic) && inState(env, r, ['OfflineReplica', 'ReplicaDeletionStarted', 'OnlineReplica', 'NewReplica']),
  );
  const needOffline = eligible.filter((r) => inState(env, r, ['OnlineReplica', 'NewReplica']));
  await handleReplicaStateChanges(env, needOffline, 'OfflineReplica');
  await handleReplicaStateChanges(env, eligible, 'ReplicaDeletionIneligible');
  for (const r of eligible) ctx.topicsIneligibleForDeletion.add(r.topic);
  await resumeDeletions(env);
}

export async function completeReplicaDeletion(env: ControllerEnv, replicas: readonly PartitionReplica[]): Promise<void> {
  const started = replicas.filter((r) => env.ctx.isTopicQueuedForDeletion(r.topic) && inState(env, r, ['ReplicaDeletionStarted']));
  await handleReplicaStateChanges(env, started, 'ReplicaDeletionSuccessful');
  await resumeDeletions(env);
}

/** The StopReplica(delete) answer of one broker. */
export async function onStopReplicaDeleteResponse(env: ControllerEnv, brokerId: number, results: { tp: TopicPartition; errorCode: number }[]): Promise<void> {
  const failed = results.filter((r) => r.errorCode !== 0).map((r) => ({ ...r.tp, replica: brokerId }));
  const ok = results.filter((r) => r.errorCode === 0).map((r) => ({ ...r.tp, replica: brokerId }));
  if (failed.length > 0) {
    env.log.warn({ brokerId, partitions: failed.map((r) => tpKey(r.topic, r.partition)) }, 'StopReplica(delete) failed; deletion will be retried');
    await failReplicaDeletion(env, failed);
  }
  if (ok.length > 0) await completeReplicaDeletion(env, ok);
}

function inState(env: ControllerEnv, r: PartitionReplica, states: readonly ReplicaState[]): boolean {
  return states.includes(replicaState(env.ctx, r));
}

export async function resumeDeletions(env: ControllerEnv): Promise<void> {
  const { ctx } = env;
  for (const topic of [...ctx.topicsToBeDeleted]) {
    const replicas = replicasOf(ctx, ctx.partitionsForTopic(topic));
    if (replicas.every((r) => inState(env, r, ['ReplicaDeletionSuccessful']))) {
      await completeDeleteTopic(env, topic);
      continue;
    }
    if (replicas.some((r) => inState(env, r, ['ReplicaDeletionStarted']))) continue; // answers pending
    if (ctx.topicsIneligibleForDeletion.has(topic)) continue;
    // Replicas that failed before get another go now that the topic is eligible again.
    const retry = replicas.filter((r) => inState(env, r, ['ReplicaDeletionIneligible']) && ctx.liveBrokers.has(r.replica));
    await handleReplicaStateChanges(env, retry, 'OfflineReplica');
    await onTopicDeletion(env, topic);
  }
}

async function onTopicDeletion(env: ControllerEnv, topic: string): Promise<void> {
  const { ctx } = env;
  env.log.info({ topic }, 'deleting topic');
  const partitions = ctx.partitionsForTopic(topic);
  // Every broker hears leader -2 for these partitions and drops them from its metadata.
  env.batch.addUpdateMetadataRequestForBrokers(ctx.liveOrShuttingDownBrokerIds(), partitions);
  const present = partitions.filter((tp) => partitionState(ctx, tp) !== 'NonExistentPartition');
  await handlePartitionStateChanges(env, present, 'OfflinePartition');
  await handlePartitionStateChanges(env, present, 'NonExistentPartition');
  const replicas = replicasOf(ctx, partitions).filter((r) => !inState(env, r, ['ReplicaDeletionSuccessful']));
  const dead = replicas.filter((r) => !ctx.liveBrokers.has(r.replica));
  const live = replicas.filter((r) => ctx.liveBrokers.has(r.replica) && !inState(env, r, ['ReplicaDeletionStarted']));
  const deadToMark = dead.filter((r) => inState(env, r, ['OfflineReplica', 'ReplicaDeletionStarted']));
  await handleReplicaStateChanges(env, deadToMark, 'ReplicaDeletionIneligible');
  await handleReplicaStateChanges(env, live, 'OfflineReplica');
  await handleReplicaStateChanges(env, live, 'ReplicaDeletionStarted');
  if (dead.length > 0) {
    ctx.topicsIneligibleForDeletion.add(topic);
    env.log.info({ topic, waitingFor: [...new Set(dead.map((r) => r.replica))] }, 'topic deletion waits for brokers to come back');
  }
}

async function completeDeleteTopic(env: ControllerEnv, topic: string): Promise<void> {
  const { ctx, zk } = env;
  const replicas = replicasOf(ctx, ctx.partitionsForTopic(topic));
  await handleReplicaStateChanges(env, replicas, 'NonExistentReplica');
  await zk.deleteTopicZNodes(topic, env.fence());
  await zk.deleteTopicDeletionMarker(topic, env.fence());
  ctx.removeTopic(topic);
  env.log.info({ topic }, 'topic deletion completed');
}
