/**
 * The shard workers' partitions for one scrape (num.io.threads > 1): every family that reads
 * them (log-metrics.ts, topic-partition-metrics.ts, replica-metrics.ts) shares one
 * PartitionShards.partitionStates() pass, so a scrape costs one message per shard, not one per
 * family and shard. The registry asks all families in the same turn of the event loop; the
 * next turn's scrape starts a new pass, as the families' own per-scrape passes do.
 */
import type { LogManagerStats, PartitionShards, PartitionState } from '../../replication/shards/partition-shards.js';
import { oncePerTurn } from './once-per-turn.js';

/** A worker that has not answered a scrape's question within this is left out of that scrape (its loop is stuck). */
export const SCRAPE_SHARD_DEADLINE_MS = 5_000;

/** Each shards object's two passes, shared by the families of one scrape (once-per-turn.ts). */
const passes = new WeakMap<PartitionShards, { states: () => Promise<PartitionState[]>; logStats: () => Promise<LogManagerStats[]> }>();

function passesOf(shards: PartitionShards) {
  let p = passes.get(shards);
  if (!p) {
    p = {
      states: oncePerTurn(() => shards.partitionStates(undefined, { deadlineMs: SCRAPE_SHARD_DEADLINE_MS })),
      logStats: oncePerTurn(() => shards.logManagerStats({ deadlineMs: SCRAPE_SHARD_DEADLINE_MS })),
    };
    passes.set(shards, p);
  }
  return p;
}

/** Every hosted partition's state, asked once per turn per shards object. */
export function statesThisScrape(shards: PartitionShards): Promise<PartitionState[]> {
  return passesOf(shards).states();
}

/** Every shard's LogManager stats (log-metrics.ts's flush and directory families), asked once per turn per shards object. */
export function logStatsThisScrape(shards: PartitionShards): Promise<LogManagerStats[]> {
  return passesOf(shards).logStats();
}

/** Whether the partitions live on shard workers (num.io.threads > 1), so the scrape must ask them. */
export function onShardWorkers(shards: PartitionShards | undefined): shards is PartitionShards {
  return shards !== undefined && shards.count > 1;
}
