/**
 * What the replica manager's metrics read at scrape time (Kafka's ReplicaManager gauges:
 * LeaderCount, PartitionCount, UnderReplicatedPartitions, UnderMinIsrPartitionCount,
 * AtMinIsrPartitionCount, OfflineReplicaCount, ReassigningPartitions), counted in one pass over the hosted partitions
 * into a reused object, so a scrape at 10,000 partitions allocates nothing per partition. The
 * ISR shrink and expand totals are kept by the ISR writer (IsrChangeCounts) as they happen.
 */
import type { Partition } from './partition/partition.js';

/** What the count reads of a partition: a `Partition`, or the same fields of a shard worker's answer (PartitionShards.partitionStates). */
export type ReplicaStateView = Pick<Partition, 'topic' | 'isLeader' | 'reassigning' | 'isr' | 'replicas'> & { log: { offline: boolean } };

export interface ReplicaStateCounts {
  /** Partitions hosted here (leader or follower). */
  partitions: number;
  /** Partitions led here. */
  leaders: number;
  /** Led here with an ISR smaller than the assigned replicas (Kafka's isUnderReplicated). */
  underReplicated: number;
  /** Led here with an ISR smaller than the topic's min.insync.replicas. */
  underMinIsr: number;
  /** Led here with an ISR exactly at min.insync.replicas (one more loss refuses acks=all). */
  atMinIsr: number;
  /** Hosted here with the log in an offline log directory. */
  offline: number;
  /** Led here with a reassignment in progress (Kafka's ReassigningPartitions). */
  reassigning: number;
}

export function emptyReplicaStateCounts(): ReplicaStateCounts {
  return { partitions: 0, leaders: 0, underReplicated: 0, underMinIsr: 0, atMinIsr: 0, offline: 0, reassigning: 0 };
}

/** Counts `partitions` into `out` (reset first); `minIsrOf` is asked once per topic seen. */
export function countReplicaStates(partitions: Iterable<ReplicaStateView>, minIsrOf: (topic: string) => number, out: ReplicaStateCounts): ReplicaStateCounts {
  out.partitions = out.leaders = out.underReplicated = out.underMinIsr = out.atMinIsr = out.offline = out.reassigning = 0;
  let lastTopic = '';
  let minIsr = 1;
  for (const p of partitions) {
    out.partitions++;
    if (p.log.offline) out.offline++;
    if (!p.isLeader) continue;
    out.leaders++;
    if (p.reassigning) out.reassigning++;
    const isr = p.isr.length;
    if (isr < p.replicas.length) out.underReplicated++;
    // Partitions of a topic sit together in the hosted map: one lookup per run of a topic.
    if (p.topic !== lastTopic) {
      lastTopic = p.topic;
      minIsr = minIsrOf(lastTopic);
    }
    if (isr < minIsr) out.underMinIsr++;
    else if (isr === minIsr) out.atMinIsr++;
  }
  return out;
}
