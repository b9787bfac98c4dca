/**
 * The replica manager's metrics (Kafka's kafka.server:type=ReplicaManager MBeans, named as the
 * Prometheus JMX exporter's Kafka rules name them): partitions hosted and led here, under-
 * replicated, under and at min ISR, offline replicas, being reassigned, and the ISR shrink and expand totals.
 * The counts come from one pass over the hosted partitions per scrape (replica-state-stats.ts),
 * shared by the six gauges of that scrape. With shard workers (num.io.threads > 1) the pass is
 * over every shard's partitions, asked through the seam (PartitionShards.partitionStates, one
 * message per shard).
 */
import type { ReplicaManager } from '../../replication/replica-manager.js';
import { countReplicaStates, emptyReplicaStateCounts, type ReplicaStateCounts } from '../../replication/replica-state-stats.js';
import type { PartitionShards } from '../../replication/shards/partition-shards.js';
import { statesThisScrape } from './scrape-states.js';
import { statsCounter, statsGauge, one } from './stats-families.js';
import type { MetricsRegistry } from './registry.js';

/** The partitions on shard workers and the topics' min.insync.replicas: present when num.io.threads > 1. */
export interface ShardedReplicas {
  shards: PartitionShards;
  minIsrOf(topic: string): number;
}

/** Counts once per scrape: the registry asks every family in the same turn, so the first one counts. */
export class ReplicaCountsPerScrape {
  private readonly counts = emptyReplicaStateCounts();
  private fresh = false;
  private pass: Promise<ReplicaStateCounts> | undefined;

  constructor(
    private readonly replicaManager: ReplicaManager,
    private readonly sharded?: ShardedReplicas,
  ) {}

  /**
   * This thread's partitions counted now. With shard workers: the counts of the last pass over
   * every shard (`current`), which a scrape of the replica families has just made.
   */
  get(): ReplicaStateCounts {
    if (this.sharded && this.sharded.shards.count > 1) return this.counts;
    if (!this.fresh) {
      this.replicaManager.stateCounts(this.counts);
      this.fresh = true;
      setImmediate(() => {
        this.fresh = false;
      });
    }
    return this.counts;
  }

  /** The counts for this scrape: with shard workers, one pass over every shard's partitions (shared by the scrape's families). */
  current(): ReplicaStateCounts | Promise<ReplicaStateCounts> {
    const sharded = this.sharded;
    if (!sharded || sharded.shards.count <= 1) return this.get();
    if (!this.pass) {
      this.pass = statesThisScrape(sharded.shards).then((states) =>
        countReplicaStates(
          states.map((s) => ({
            topic: s.topic,
            isLeader: s.leader,
            reassigning: s.reassigning,
            isr: s.isr,
            replicas: s.replicas,
            log: { offline: s.offline },
          })),
          (t) => sharded.minIsrOf(t),
          this.counts,
        ),
      );
      setImmediate(() => {
        this.pass = undefined;
      });
    }
    return this.pass;
  }
}

export function registerReplicaMetrics(registry: MetricsRegistry, replicaManager: ReplicaManager, counts: ReplicaCountsPerScrape): void {
  const gauge = (name: string, help: string, pick: (c: ReplicaStateCounts) => number): void =>
    statsGauge(registry, `kafka_server_replicamanager_${name}`, help, () => {
      const c = counts.current();
      return c instanceof Promise ? c.then((got) => one(pick(got))) : one(pick(c));
    });
  gauge('leadercount', 'Partitions led by this broker (ReplicaManager LeaderCount).', (c) => c.leaders);
  gauge('partitioncount', 'Partitions hosted by this broker, leader or follower (ReplicaManager PartitionCount).', (c) => c.partitions);
  gauge('underreplicatedpartitions', 'Partitions led here whose ISR is smaller than their replicas (UnderReplicatedPartitions).', (c) => c.underReplicated);
  gauge(
    'underminisrpartitioncount',
    'Partitions led here whose ISR is below min.insync.replicas: acks=all produces fail (UnderMinIsrPartitionCount).',
    (c) => c.underMinIsr,
  );
  gauge('atminisrpartitioncount', 'Partitions led here whose ISR is exactly min.insync.replicas (AtMinIsrPartitionCount).', (c) => c.atMinIsr);
  gauge(
    'reassigningpartitions',
    'Partitions led here with a reassignment in progress: replicas being added or removed (ReassigningPartitions).',
    (c) => c.reassigning,
  );
  gauge('offlinereplicacount', 'Replicas hosted here whose log directory is offline (OfflineReplicaCount).', (c) => c.offline);
  statsCounter(registry, 'kafka_server_replicamanager_isrshrinks_total', 'ISR shrinks accepted for partitions led here (IsrShrinksPerSec).', () =>
    one(replicaManager.isrChangeCounts?.shrinks ?? 0),
  );
  statsCounter(registry, 'kafka_server_replicamanager_isrexpands_total', 'ISR expansions accepted for partitions led here (IsrExpandsPerSec).', () =>
    one(replicaManager.isrChangeCounts?.expands ?? 0),
  );
}
