/**
 * The broker-state metrics in one call for Broker.start(): replica manager (and replication traffic), controller, logs,
 * ZooKeeper session (cluster mode) and coordinators, each file registering its families on the
 * broker's registry. Everything is read at scrape time from plain stats of the layers below.
 */
import type { KafkaController } from '../../controller/index.js';
import type { GroupCoordinator } from '../../coordinator/group/group-coordinator.js';
import type { TxnCoordinator } from '../../coordinator/txn/txn-coordinator.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { ZkSessionStats } from '../../metadata/zk/zk-session.js';
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { PartitionShards } from '../../replication/shards/partition-shards.js';
import { registerControllerMetrics, type ControllerSource } from './controller-metrics.js';
import { registerCoordinatorMetrics } from './coordinator-metrics.js';
import { registerLogMetrics } from './log-metrics.js';
import { topicMinInsync } from '../../replication/log-config.js';
import type { LogDefaultsConfig } from '../../replication/replication-config.js';
import { registerOffsetHistoryMetrics } from './offset-history-metrics.js';
import type { MetricsRegistry } from './registry.js';
import type { BrokerConfig } from '../config/broker-config.js';
import { ReplicaCountsPerScrape, registerReplicaMetrics } from './replica-metrics.js';
import { registerReplicationTrafficMetrics } from './replication-traffic-metrics.js';
import { registerZookeeperMetrics } from './zookeeper-metrics.js';
import { onShardWorkers } from './scrape-states.js';

export interface BrokerStateSources {
  metadata: MetadataStore;
  /** Its logManager too (log metrics). */
  replicaManager: ReplicaManager;
  /** The partitions' owners (services.shards): the log metrics read the shard workers' partitions through them. */
  shards?: PartitionShards | undefined;
  groups: GroupCoordinator;
  txns: TxnCoordinator;
  /** Cluster mode: the session's stats and the hosted controller (set once the broker registers). */
  zookeeper?: { session: ZkSessionStats; controller: () => KafkaController | undefined } | undefined;
}

/**
 * `cfg.metricsPartitionLevelEnable` (metrics.partition.level.enable) false leaves the per-partition
 * families out; `metricsRecordingEnable` false leaves out replication bytes in, a broker topic
 * metric like those metrics.recording.enable turns off.
 */
export function registerBrokerStateMetrics(
  registry: MetricsRegistry,
  cfg: Pick<BrokerConfig, 'metricsPartitionLevelEnable' | 'metricsRecordingEnable'> & LogDefaultsConfig,
  s: BrokerStateSources,
): void {
  const sharded =
    s.shards && s.shards.count > 1 ? { shards: s.shards, minIsrOf: (t: string) => topicMinInsync(cfg, s.metadata.topic(t)?.configs ?? {}) } : undefined;
  const replicaCounts = new ReplicaCountsPerScrape(s.replicaManager, sharded);
  registerReplicaMetrics(registry, s.replicaManager, replicaCounts);
  if (cfg.metricsRecordingEnable) registerReplicationTrafficMetrics(registry, s.replicaManager, s.shards);
  const controller: ControllerSource = s.zookeeper
    ? { kind: 'zookeeper', controller: s.zookeeper.controller }
    : {
        kind: 'embedded',
        counts: (out) => {
          const topics = s.metadata.topics();
          out.globalTopics = topics.length;
          out.globalPartitions = 0;
          for (const t of topics) out.globalPartitions += t.partitions.length;
          out.activeBrokers = 1;
          out.preferredReplicaImbalance = 0;
          // One replica each: a partition whose log directory is offline has no leader (with shard
          // workers, `offlinePartitions` below counts it in this scrape's pass over every shard).
          out.offlinePartitions = replicaCounts.get().offline;
          return out;
        },
        ...(onShardWorkers(s.shards) ? { offlinePartitions: async () => (await replicaCounts.current()).offline } : {}),
      };
  registerControllerMetrics(registry, controller);
  registerLogMetrics(registry, {
    replicaManager: s.replicaManager,
    shards: s.shards,
    logManager: s.replicaManager.logManager,
    partitionLevel: cfg.metricsPartitionLevelEnable,
  });
  if (s.zookeeper) registerZookeeperMetrics(registry, s.zookeeper.session);
  registerCoordinatorMetrics(registry, s.groups, s.txns);
  registerOffsetHistoryMetrics(registry, s.groups);
}
