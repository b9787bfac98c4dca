/**
 * Elections asked for from outside: the ElectLeaders API (preferred or unclean), the legacy
 * `/admin/preferred_replica_election` znode written by tools, and the periodic auto leader
 * rebalance (auto.leader.rebalance.enable) that moves leadership back to preferred replicas once a
 * broker's share of partitions led by someone else passes leader.imbalance.per.broker.percentage.
 */
import { ErrorCode } from '../protocol/errors.js';
import { tpKey } from '../common/partition-keys.js';
import type { TopicPartition } from './context.js';
import { imbalancedPartitions } from './election.js';
import { ControllerErrors, type ControllerRuntime } from './env.js';
import { DEFAULT_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE } from './config.js';
import { handlePartitionStateChanges, triggerOnlinePartitionStateChange } from './partition-ops.js';

/** Kafka's onReplicaElection with per-partition results (tpKey -> error code). */
export async function onReplicaElection(
  rt: ControllerRuntime,
  electionType: 0 | 1,
  partitions: readonly TopicPartition[] | null,
): Promise<Map<string, number>> {
  const { ctx } = rt;
  const results = new Map<string, number>();
  const toElect: TopicPartition[] = [];
  for (const tp of partitions ?? ctx.allPartitions()) {
    const key = tpKey(tp.topic, tp.partition);
    const replicas = ctx.replicasFor(tp);
    const l = ctx.leadership.get(key);
    if (replicas.length === 0 || ctx.isTopicQueuedForDeletion(tp.topic)) {
      results.set(key, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    } else if (electionType === 0 && l?.state.leader === replicas[0]) {
      results.set(key, ControllerErrors.ELECTION_NOT_NEEDED);
    } else if (electionType === 1 && l !== undefined && ctx.isLive(l.state.leader)) {
      results.set(key, ControllerErrors.ELECTION_NOT_NEEDED);
    } else {
      toElect.push(tp);
    }
  }
  if (toElect.length > 0)
    rt.log.info(
      {
        electionType: electionType === 0 ? 'preferred' : 'unclean',
        count: toElect.length,
        partitions: toElect.slice(0, 50).map((tp) => tpKey(tp.topic, tp.partition)),
      },
      'leader election triggered',
    );
  // Preferred elections run on online partitions; unclean ones on offline partitions (Kafka's rules).
  const outcome = await handlePartitionStateChanges(
    rt,
    toElect,
    'OnlinePartition',
    electionType === 0 ? { kind: 'preferred' } : { kind: 'offline', allowUnclean: true },
  );
  for (const tp of toElect) {
    const key = tpKey(tp.topic, tp.partition);
    results.set(
      key,
      outcome.get(key) ?? (electionType === 0 ? ControllerErrors.PREFERRED_LEADER_NOT_AVAILABLE : ControllerErrors.ELIGIBLE_LEADERS_NOT_AVAILABLE),
    );
  }
  return results;
}

/** The znode written by `kafka-preferred-replica-election.sh --zookeeper` / older tools. */
export async function processPreferredReplicaElectionZNode(rt: ControllerRuntime): Promise<void> {
  const ps = await rt.zk.getPreferredReplicaElection(rt.watch.preferredElection);
  if (!ps) return;
  const known = ps.filter((tp) => rt.ctx.replicasFor(tp).length > 0);
  const results = await onReplicaElection(rt, 0, known);
  rt.log.info({ results: Object.fromEntries(results) }, 'preferred replica election from ZooKeeper');
  await rt.zk.deletePreferredReplicaElection(rt.fence());
}

/**
 * A topic's configs changed: when it now allows unclean elections (topic config, else the
 * broker default), its offline partitions are elected at once, possibly from outside the ISR
 * (Kafka's TopicUncleanLeaderElectionEnable); otherwise nothing changes.
 */
export async function processTopicUncleanLeaderElectionEnable(rt: ControllerRuntime, topic: string): Promise<void> {
  if (!rt.ctx.topics.has(topic) || !(await rt.uncleanLeaderElectionEnabled(topic))) return;
  await triggerOnlinePartitionStateChange(rt, rt.ctx.partitionsForTopic(topic));
  rt.sendBatch();
}

export async function checkAndTriggerAutoLeaderRebalance(rt: ControllerRuntime): Promise<void> {
  const { ctx } = rt;
  const threshold = rt.config.leaderImbalancePerBrokerPercentage ?? DEFAULT_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE;
  const candidates = ctx
    .allPartitions()
    .filter(
      (tp) =>
        !ctx.isTopicQueuedForDeletion(tp.topic) &&
        !ctx.pendingReassignments.has(tpKey(tp.topic, tp.partition)) &&
        ctx.leadership.has(tpKey(tp.topic, tp.partition)),
    )
    .map((tp) => ({ tp, assignment: ctx.replicasFor(tp), leader: ctx.leaderOf(tp) }));
  const imbalanced = imbalancedPartitions(candidates, threshold);
  const toElect: TopicPartition[] = [];
  for (const [broker, tps] of imbalanced) {
    if (!ctx.isLive(broker)) continue;
    for (const tp of tps) if (ctx.leadership.get(tpKey(tp.topic, tp.partition))!.state.isr.includes(broker)) toElect.push(tp);
  }
  if (toElect.length === 0) return;
  rt.log.info({ partitions: toElect.map((tp) => tpKey(tp.topic, tp.partition)) }, 'auto leader rebalance');
  await onReplicaElection(rt, 0, toElect);
}
