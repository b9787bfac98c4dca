/**
 * What the group coordinator's metrics read at scrape time (Kafka's GroupMetadataManager gauges:
 * NumGroups, NumGroupsStable/PreparingRebalance/CompletingRebalance/Empty/Dead, NumOffsets),
 * counted over the shards this broker serves, into a reused object.
 */
import type { GroupShardState } from './group-shard-state.js';

export interface GroupCounts {
  groups: number;
  stable: number;
  preparingRebalance: number;
  completingRebalance: number;
  empty: number;
  dead: number;
  /** Committed offsets held (one per group, topic and partition). */
  offsets: number;
  /** `__consumer_offsets` partitions being loaded here. */
  loadingPartitions: number;
}

export function emptyGroupCounts(): GroupCounts {
  return { groups: 0, stable: 0, preparingRebalance: 0, completingRebalance: 0, empty: 0, dead: 0, offsets: 0, loadingPartitions: 0 };
}

export function countGroups(shards: Iterable<GroupShardState>, out: GroupCounts): GroupCounts {
  out.groups = out.stable = out.preparingRebalance = out.completingRebalance = out.empty = out.dead = out.offsets = 0;
  for (const shard of shards) {
    out.offsets += shard.offsets.count();
    for (const g of shard.groups.values()) {
      out.groups++;
      switch (g.state) {
        case 'Stable':
          out.stable++;
          break;
        case 'PreparingRebalance':
          out.preparingRebalance++;
          break;
        case 'CompletingRebalance':
          out.completingRebalance++;
          break;
        case 'Empty':
          out.empty++;
          break;
        case 'Dead':
          out.dead++;
          break;
      }
    }
  }
  return out;
}
