/**
 * Offsets of partitions that no longer exist (a deleted topic, or partitions beyond a topic's
 * count), removed from every group of a shard as Kafka's coordinator does when topics are
 * deleted: a tombstone per offset, and one for a group left Empty with no members and no offsets
 * (it is gone, as after expiry). Without this a topic recreated under the same name would be
 * resumed at the old topic's offsets, silently skipping the new topic's first records.
 */
import type { OperationResult } from '../runtime/types.js';
import type { GroupShardState } from './group-shard-state.js';
import type { CoordinatorRecord } from './records.js';

/** How many partitions a topic has now; undefined when it does not exist. */
export type PartitionCount = (topic: string) => number | undefined;

export interface RemovedOffsets {
  /** Offsets removed. */
  offsets: number;
  /** Groups that lost at least one offset. */
  groups: number;
  /** Topics whose offsets were removed (some or all). */
  topics: string[];
}

/**
 * Tombstones every committed offset of a partition that `partitionCount` says is gone. With
 * `onlyTopic`, looks at that topic alone (a metadata change names one topic).
 */
export function removeOffsetsOfDeletedPartitions(
  shard: GroupShardState,
  partitionCount: PartitionCount,
  onlyTopic?: string,
): OperationResult<RemovedOffsets, CoordinatorRecord> {
  const records: CoordinatorRecord[] = [];
  const topics = new Set<string>();
  let offsets = 0;
  let groups = 0;
  for (const groupId of [...shard.offsets.groupIds()]) {
    const all = shard.offsets.list(groupId);
    let removed = 0;
    for (const o of all) {
      if (onlyTopic !== undefined && o.topic !== onlyTopic) continue;
      const count = partitionCount(o.topic);
      if (count !== undefined && o.partition < count) continue;
      records.push({ type: 'offset', group: groupId, topic: o.topic, partition: o.partition, value: null });
      topics.add(o.topic);
      removed++;
    }
    if (removed === 0) continue;
    offsets += removed;
    groups++;
    const g = shard.groups.get(groupId);
    if (removed === all.length && g !== undefined && g.is('Empty') && g.isEmpty) {
      records.push({ type: 'group', group: groupId, value: null });
    }
  }
  return { records, response: { offsets, groups, topics: [...topics] } };
}

/** Whether any of `shards` holds a committed offset of `topic` at a partition beyond its `count`. */
export function hasOffsetsBeyond(shards: readonly GroupShardState[], topic: string, count: number): boolean {
  for (const s of shards) {
    for (const g of s.offsets.groupIds()) {
      const parts = s.offsets.groupOffsets(g).get(topic);
      if (parts) for (const p of parts.keys()) if (p >= count) return true;
    }
  }
  return false;
}
