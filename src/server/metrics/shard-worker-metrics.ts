/**
 * The shard workers' lives (num.io.threads > 1, docs/threads.md "A shard's failure stays in the
 * shard"; Fjord's own, Kafka has no such threads): workers started in place of one that ended,
 * and workers not serving now (ended and waiting for their restart, left offline after too many
 * crashes, or opening their logs after a restart). Served at every count so dashboards and
 * alerts need no special case: 0 at num.io.threads=1, where no worker exists.
 */
import type { PartitionShards } from '../../replication/shards/partition-shards.js';
import { WorkerShards } from '../../replication/shards/worker/worker-shards.js';
import type { MetricsRegistry } from './registry.js';
import { one, statsCounter, statsGauge } from './stats-families.js';

export function registerShardWorkerMetrics(registry: MetricsRegistry, shards: PartitionShards | undefined): void {
  const workers = shards instanceof WorkerShards ? shards : undefined;
  statsCounter(registry, 'fjord_shard_worker_restarts_total', 'Shard worker threads started in place of one that ended (crashed or exited).', () =>
    one(workers?.restarts ?? 0),
  );
  statsGauge(
    registry,
    'fjord_shard_workers_offline',
    'Shard worker threads not serving their partitions now: ended (waiting for a restart, or left offline after too many crashes) or opening their logs after a restart.',
    () => one(workers?.offlineWorkers ?? 0),
  );
}
