/**
 * Brokers coming and going (Kafka's processBrokerChange, onBrokerStartup, onBrokerFailure) and
 * controlled shutdown. A broker whose registration changed epoch (it restarted within one watch
 * period) is handled as a failure followed by a start-up, so it is re-sent everything.
 */
import { KafkaError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/errors.js';
import type { LiveBroker, TopicPartition } from './context.js';
import { ControllerErrors, type ControllerRuntime } from './env.js';
import { handlePartitionStateChanges, triggerOnlinePartitionStateChange } from './partition-ops.js';
import { handleReplicaStateChanges } from './replica-ops.js';
import { replicasOf } from './replica-state-machine.js';
import { failReplicaDeletion, resumeDeletionForTopics } from './topic-deletion.js';
import { resumeReassignmentsForBrokers } from './reassignment.js';

export async function loadLiveBrokers(rt: ControllerRuntime): Promise<LiveBroker[]> {
  const all = await rt.zk.getAllBrokers(rt.watch.brokers);
  return all.map((b) => ({ id: b.id, endpoints: b.endpoints, rack: b.rack, brokerEpoch: b.brokerEpoch }));
}

export async function processBrokerChange(rt: ControllerRuntime): Promise<void> {
  const { ctx } = rt;
  const current = new Map((await loadLiveBrokers(rt)).map((b) => [b.id, b]));
  const known = new Set(ctx.liveBrokers.keys());
  const added = [...current.keys()].filter((id) => !known.has(id)).sort((a, b) => a - b);
  const dead = [...known].filter((id) => !current.has(id)).sort((a, b) => a - b);
  const bounced = [...known].filter((id) => current.has(id) && current.get(id)!.brokerEpoch !== ctx.liveBrokers.get(id)!.brokerEpoch);
  if (added.length + dead.length + bounced.length === 0) return;
  rt.log.info({ added, dead, bounced }, 'broker change');
  for (const id of [...dead, ...bounced]) {
    ctx.liveBrokers.delete(id);
    ctx.shuttingDownBrokerIds.delete(id);
    rt.removeBrokerChannel(id);
  }
  if (bounced.length > 0) {
    rt.cause = 'broker failure';
    await onBrokerFailure(rt, bounced);
    for (const id of bounced) ctx.liveBrokers.set(id, current.get(id)!);
    rt.cause = 'broker startup';
    await onBrokerStartup(rt, bounced);
  }
  for (const id of added) ctx.liveBrokers.set(id, current.get(id)!);
  rt.cause = 'broker startup';
  if (added.length > 0) await onBrokerStartup(rt, added);
  rt.cause = 'broker failure';
  if (dead.length > 0) await onBrokerFailure(rt, dead);
}

/** New brokers learn everything; others learn of them; their replicas come online, and leaderless partitions may elect them. */
export async function onBrokerStartup(rt: ControllerRuntime, ids: readonly number[]): Promise<void> {
  const { ctx } = rt;
  const newSet = new Set(ids);
  rt.batch.addUpdateMetadataRequestForBrokers(
    ctx.liveOrShuttingDownBrokerIds().filter((b) => !newSet.has(b)),
    [],
  );
  rt.sendBatch();
  rt.batch.addUpdateMetadataRequestForBrokers(ids, ctx.allPartitions());
  rt.sendBatch();
  const replicas = replicasOf(ctx, ctx.allPartitions(), (b) => newSet.has(b));
  await handleReplicaStateChanges(
    rt,
    replicas.filter((r) => !ctx.isTopicQueuedForDeletion(r.topic)),
    'OnlineReplica',
  );
  await triggerOnlinePartitionStateChange(rt);
  const deleting = [...new Set(replicas.filter((r) => ctx.isTopicQueuedForDeletion(r.topic)).map((r) => r.topic))];
  if (deleting.length > 0) await resumeDeletionForTopics(rt, deleting);
  // Reassignments waiting for a target replica on these brokers start it now.
  await resumeReassignmentsForBrokers(rt, ids);
}

/** Partitions the dead brokers led elect again; their replicas leave ISRs; deletions touching them wait. */
export async function onBrokerFailure(rt: ControllerRuntime, ids: readonly number[]): Promise<void> {
  const { ctx } = rt;
  const deadSet = new Set(ids);
  const replicas = replicasOf(ctx, ctx.allPartitions(), (b) => deadSet.has(b));
  const [forDeletion, others] = [replicas.filter((r) => ctx.isTopicQueuedForDeletion(r.topic)), replicas.filter((r) => !ctx.isTopicQueuedForDeletion(r.topic))];
  const leaderless = ctx.allPartitions().filter((tp) => deadSet.has(ctx.leaderOf(tp)) && !ctx.isTopicQueuedForDeletion(tp.topic));
  if (leaderless.length > 0)
    rt.log.info(
      { brokers: ids, count: leaderless.length, partitions: leaderless.slice(0, 50).map((tp) => `${tp.topic}-${tp.partition}`) },
      'broker failure: electing new leaders for the partitions it led',
    );
  await handlePartitionStateChanges(rt, leaderless, 'OfflinePartition');
  await triggerOnlinePartitionStateChange(rt);
  await handleReplicaStateChanges(rt, others, 'OfflineReplica');
  if (forDeletion.length > 0) await failReplicaDeletion(rt, forDeletion);
  // Everyone learns the broker list without the dead ones even when no partition changed.
  rt.batch.addUpdateMetadataRequestForBrokers(ctx.liveOrShuttingDownBrokerIds(), []);
}

/**
 * Kafka's doControlledShutdown: leadership moves off the broker, it leaves the ISR of partitions
 * it follows, and the answer lists the partitions it still leads (those with one replica never
 * move and do not block the shutdown).
 */
export async function processControlledShutdown(rt: ControllerRuntime, brokerId: number, brokerEpoch: bigint): Promise<TopicPartition[]> {
  const { ctx } = rt;
  const live = ctx.liveBrokers.get(brokerId);
  if (!live) throw new KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, `broker ${brokerId} is not registered`);
  if (brokerEpoch !== -1n && brokerEpoch !== live.brokerEpoch) {
    throw new KafkaError(ControllerErrors.STALE_BROKER_EPOCH, `broker epoch ${brokerEpoch} of broker ${brokerId} is not the current ${live.brokerEpoch}`);
  }
  ctx.shuttingDownBrokerIds.add(brokerId);
  rt.log.info({ brokerId }, 'controlled shutdown');
  const toActOn = ctx
    .partitionsOnBroker(brokerId)
    .filter((tp) => ctx.replicasFor(tp).length > 1 && ctx.leadership.has(`${tp.topic}-${tp.partition}`) && !ctx.isTopicQueuedForDeletion(tp.topic));
  const led = toActOn.filter((tp) => ctx.leaderOf(tp) === brokerId);
  const followed = toActOn.filter((tp) => ctx.leaderOf(tp) !== brokerId);
  await handlePartitionStateChanges(rt, led, 'OnlinePartition', { kind: 'controlledShutdown' });
  await handleReplicaStateChanges(
    rt,
    followed.map((tp) => ({ ...tp, replica: brokerId })),
    'OfflineReplica',
  );
  return ctx.partitionsLedBy(brokerId).filter((tp) => ctx.replicasFor(tp).length > 1);
}
