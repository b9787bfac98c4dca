/**
 * The shard workers' partitions for one scrape (num.io.threads > 1): every family that reads
 * them (log-metrics.ts, topic-partition-metrics.ts, replica-metrics.ts) shares one
 * PartitionShards.partitionStates() pass, so a scrape costs one message per shard, not one per
 * family and shard. The registry asks all families in the same turn of the event loop; the
 * next turn's scrape starts a new pass, as the families' own per-scrape passes do.
 */
import type { PartitionShards, PartitionState } from '../../replication/shards/partition-shards.js';

const passes = new WeakMap<PartitionShards, Promise<PartitionState[]>>();

/** Every hosted partition's state, asked once per turn per shards object. */
export function statesThisScrape(shards: PartitionShards): Promise<PartitionState[]> {
  let pass = passes.get(shards);
  if (!pass) {
    pass = shards.partitionStates();
    passes.set(shards, pass);
    setImmediate(() => passes.delete(shards));
  }
  return pass;
}

/** Whether the partitions live on shard workers (num.io.threads > 1), so the scrape must ask them. */
export function onShardWorkers(shards: PartitionShards | undefined): shards is PartitionShards {
  return shards !== undefined && shards.count > 1;
}
