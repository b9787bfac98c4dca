/**
 * Topic events: topics created or deleted in ZooKeeper (TopicChange), partitions added to a
 * topic (PartitionModifications), ISR changes announced by leaders (IsrChangeNotification).
 * Creation of assignments is the writer's job (any broker or tool); the controller only gives the
 * new partitions their first leader and ISR and tells the brokers.
 */
import type { TopicAssignment } from '../metadata/zk/zk-client-types.js';
import { randomUuid } from '../protocol/primitives/index.js';
import { tpKey } from '../common/partition-keys.js';
import type { ControllerTopic, TopicPartition } from './context.js';
import type { ControllerRuntime } from './env.js';
import { handlePartitionStateChanges, refreshLeadership } from './partition-ops.js';
import { handleReplicaStateChanges } from './replica-ops.js';
import { replicasOf } from './replica-state-machine.js';
import { maybeCompleteReassignments } from './reassignment.js';

export function toControllerTopic(a: TopicAssignment): ControllerTopic {
  return {
    name: a.topic,
    topicId: a.topicId,
    assignment: new Map(a.partitions),
    addingReplicas: new Map(a.addingReplicas),
    removingReplicas: new Map(a.removingReplicas),
    zkVersion: a.zkVersion,
  };
}

/**
 * Reads a topic's assignment (watching it) into the context. A topic written before Kafka 2.8
 * has no id: the controller gives it one and writes it back, as Kafka's controller does.
 */
export async function loadTopic(rt: ControllerRuntime, topic: string): Promise<ControllerTopic | undefined> {
  const a = await rt.zk.getTopicAssignment(topic, rt.watch.topic(topic));
  if (!a) return undefined;
  const t = toControllerTopic(a);
  if (t.topicId === '') {
    t.topicId = randomUuid();
    t.zkVersion = await rt.zk.setTopicAssignment(
      { topic, topicId: t.topicId, partitions: a.partitions, addingReplicas: a.addingReplicas, removingReplicas: a.removingReplicas },
      a.zkVersion,
      rt.fence(),
    );
    rt.log.info({ topic, topicId: t.topicId }, 'assigned a topic id to a topic without one');
  }
  rt.ctx.topics.set(topic, t);
  return t;
}

/** New partitions: NewPartition → OnlinePartition (first leader, ISR) and their replicas online. */
export async function onNewPartitionCreation(rt: ControllerRuntime, tps: readonly TopicPartition[]): Promise<void> {
  if (tps.length === 0) return;
  rt.log.info({ partitions: tps.map((tp) => tpKey(tp.topic, tp.partition)) }, 'new partitions');
  const replicas = replicasOf(rt.ctx, tps);
  await handlePartitionStateChanges(rt, tps, 'NewPartition');
  await handleReplicaStateChanges(rt, replicas, 'NewReplica');
  await handlePartitionStateChanges(rt, tps, 'OnlinePartition', { kind: 'offline' });
  await handleReplicaStateChanges(
    rt,
    replicas.filter((r) => rt.ctx.liveBrokers.has(r.replica)),
    'OnlineReplica',
  );
  await handleReplicaStateChanges(
    rt,
    replicas.filter((r) => !rt.ctx.liveBrokers.has(r.replica)),
    'OfflineReplica',
  );
}

export async function processTopicChange(rt: ControllerRuntime): Promise<void> {
  const { ctx, zk } = rt;
  const current = new Set(await zk.getAllTopics(rt.watch.topics));
  for (const t of [...ctx.topics.keys()]) {
    if (!current.has(t)) {
      rt.log.info({ topic: t }, 'topic znode removed');
      ctx.removeTopic(t);
    }
  }
  const created: TopicPartition[] = [];
  for (const t of [...current].sort()) {
    if (ctx.topics.has(t)) continue;
    if (!(await loadTopic(rt, t))) continue;
    created.push(...ctx.partitionsForTopic(t));
  }
  await onNewPartitionCreation(rt, created);
}

/** A topic's assignment znode changed: partitions added (CreatePartitions) get leaders. */
export async function processPartitionModifications(rt: ControllerRuntime, topic: string): Promise<void> {
  const { ctx, zk } = rt;
  const a = await zk.getTopicAssignment(topic, rt.watch.topic(topic));
  const known = ctx.topics.get(topic);
  if (!a || !known) return; // deleted, or not yet seen: TopicChange handles it
  const added = [...a.partitions.keys()].filter((p) => !known.assignment.has(p)).sort((x, y) => x - y);
  known.zkVersion = a.zkVersion;
  if (added.length === 0) return;
  if (ctx.isTopicQueuedForDeletion(topic)) {
    rt.log.warn({ topic, added }, 'partitions added to a topic being deleted are ignored');
    return;
  }
  for (const p of added) known.assignment.set(p, a.partitions.get(p)!);
  await onNewPartitionCreation(
    rt,
    added.map((partition) => ({ topic, partition })),
  );
}

/** Leaders that changed an ISR themselves announce it; brokers are told the new state. */
export async function processIsrChangeNotification(rt: ControllerRuntime): Promise<void> {
  const { ctx, zk } = rt;
  const names = await zk.getIsrChangeNotifications(rt.watch.isrChanges);
  if (names.length === 0) return;
  const seen = new Map<string, TopicPartition>();
  for (const n of names) for (const tp of await zk.getIsrChangeNotification(n)) if (ctx.topics.has(tp.topic)) seen.set(tpKey(tp.topic, tp.partition), tp);
  const tps = [...seen.values()];
  await refreshLeadership(rt, tps);
  rt.batch.addUpdateMetadataRequestForBrokers(ctx.liveOrShuttingDownBrokerIds(), tps);
  // Partitions being reassigned may now have every target replica in sync.
  await maybeCompleteReassignments(rt, tps);
  await zk.deleteIsrChangeNotifications(names, rt.fence());
}
