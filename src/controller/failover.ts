/**
 * Becoming controller (Kafka's onControllerFailover): watch ZooKeeper, load brokers, topics and
 * partition states into a fresh context, make sure `/feature` exists, tell every live broker
 * everything (UpdateMetadata to all, LeaderAndIsr to each replica), give leaderless partitions a
 * leader, then resume what the previous controller left: deletions, preferred elections, ISR
 * change notifications and reassignments.
 */
import { tpKey } from '../common/partition-keys.js';
import type { ControllerRuntime } from './env.js';
import { setPartitionState } from './partition-state-machine.js';
import { setReplicaState, replicasOf } from './replica-state-machine.js';
import { handleReplicaStateChanges } from './replica-ops.js';
import { triggerOnlinePartitionStateChange } from './partition-ops.js';
import { loadLiveBrokers } from './broker-events.js';
import { loadTopic, processIsrChangeNotification } from './topic-events.js';
import { enqueueTopicsForDeletion } from './topic-deletion.js';
import { processPreferredReplicaElectionZNode } from './leader-balance.js';
import { initializePartitionReassignments } from './reassignment-requests.js';
import { isBeingReassigned, fullAssignment, targetReplicas } from './reassignment-state.js';

export async function initializeControllerContext(rt: ControllerRuntime): Promise<void> {
  const { ctx, zk } = rt;
  for (const b of await loadLiveBrokers(rt)) ctx.liveBrokers.set(b.id, b);
  for (const t of await zk.getAllTopics(rt.watch.topics)) {
    if (!(await loadTopic(rt, t))) continue;
    for (const [p, s] of await zk.getPartitionStates(t)) ctx.leadership.set(tpKey(t, p), s);
  }
  for (const t of await zk.getTopicDeletions(rt.watch.deletions)) if (ctx.topics.has(t)) ctx.topicsToBeDeleted.add(t);
  // Reassignments a previous controller left half done (the topic znode lists adding/removing replicas).
  for (const tp of ctx.allPartitions()) {
    const a = fullAssignment(ctx, tp);
    if (isBeingReassigned(a)) ctx.pendingReassignments.set(tpKey(tp.topic, tp.partition), targetReplicas(a));
  }
  for (const t of ctx.topicsToBeDeleted)
    if (ctx.partitionsForTopic(t).some((tp) => ctx.pendingReassignments.has(tpKey(tp.topic, tp.partition)))) ctx.topicsIneligibleForDeletion.add(t);
  // Partition states from what ZooKeeper says (Kafka's initializePartitionState).
  for (const tp of ctx.allPartitions()) {
    const l = ctx.leadership.get(tpKey(tp.topic, tp.partition));
    setPartitionState(ctx, tp, !l ? 'NewPartition' : ctx.isLive(l.state.leader) ? 'OnlinePartition' : 'OfflinePartition');
  }
  for (const r of replicasOf(ctx, ctx.allPartitions())) {
    const live = ctx.liveBrokers.has(r.replica);
    setReplicaState(ctx, r, live ? 'OnlineReplica' : ctx.isTopicQueuedForDeletion(r.topic) ? 'ReplicaDeletionIneligible' : 'OfflineReplica');
  }
  for (const t of ctx.topicsToBeDeleted)
    if (replicasOf(ctx, ctx.partitionsForTopic(t)).some((r) => !ctx.liveBrokers.has(r.replica))) ctx.topicsIneligibleForDeletion.add(t);
}

export async function onControllerFailover(rt: ControllerRuntime): Promise<void> {
  const { ctx, zk } = rt;
  rt.log.info({ controllerEpoch: ctx.epoch }, 'controller failover: loading cluster state from ZooKeeper');
  await initializeControllerContext(rt);
  await zk.ensureFeatureZNode();
  rt.batch.addUpdateMetadataRequestForBrokers(ctx.liveOrShuttingDownBrokerIds(), ctx.allPartitions());
  rt.sendBatch();
  // Replica state machine start-up: every live replica is sent its partition's state, and the
  // replicas of dead brokers go (again) through OfflineReplica, which takes them out of the ISRs:
  // a broker that died with the previous controller was never removed by anyone.
  const notDeleted = (r: { topic: string }): boolean => !ctx.isTopicQueuedForDeletion(r.topic);
  await handleReplicaStateChanges(rt, replicasOf(ctx, ctx.allPartitions(), (b) => ctx.liveBrokers.has(b)).filter(notDeleted), 'OnlineReplica');
  await handleReplicaStateChanges(rt, replicasOf(ctx, ctx.allPartitions(), (b) => !ctx.liveBrokers.has(b)).filter(notDeleted), 'OfflineReplica');
  // Partition state machine start-up: partitions without a (live) leader elect one.
  await triggerOnlinePartitionStateChange(rt);
  rt.sendBatch();
  if (rt.config.deleteTopicEnable) {
    await enqueueTopicsForDeletion(rt, [...ctx.topicsToBeDeleted]);
  } else {
    for (const t of await zk.getTopicDeletions()) await zk.deleteTopicDeletionMarker(t, rt.fence());
    ctx.topicsToBeDeleted.clear();
  }
  rt.sendBatch();
  await processPreferredReplicaElectionZNode(rt);
  await processIsrChangeNotification(rt);
  await initializePartitionReassignments(rt);
  rt.log.info({ brokers: ctx.liveOrShuttingDownBrokerIds(), topics: ctx.topics.size }, 'controller ready');
}
