/**
 * Offset expiry for consumer groups (KIP-848), as Kafka 4 does it: a committed offset expires
 * offsets.retention.minutes after its commit when the group has no members, or when no member
 * subscribes to its topic any more; a group left with no members and no offsets is deleted
 * (tombstones for all its records).
 */
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import { groupTombstones } from './consumer-replay.js';

/** Appends the expiry records of the shard's consumer groups to `records`; returns the offsets expired. */
export function expireConsumerGroupOffsets(shard: GroupShardState, now: number, records: CoordinatorRecord[]): number {
  const retention = shard.config.offsetsRetentionMs;
  let expired = 0;
  for (const g of shard.consumerGroups.values()) {
    const subscribed = g.members.size === 0 ? new Set<string>() : new Set([...g.subscribedTopicNames(), ...g.subscriptionMetadata.keys()]);
    const all = shard.offsets.list(g.groupId);
    let left = all.length;
    for (const o of all) {
      if (subscribed.has(o.topic) || shard.hasPendingTxnOffset(g.groupId, o.topic, o.partition)) continue;
      const expiresAt = o.value.expireTimestamp >= 0 ? o.value.expireTimestamp : o.value.commitTimestamp + retention;
      if (now < expiresAt) continue;
      records.push({ type: 'offset', group: g.groupId, topic: o.topic, partition: o.partition, value: null });
      left--;
      expired++;
    }
    if (left === 0 && g.members.size === 0 && !shard.hasPendingTxnOffsets(g.groupId)) records.push(...groupTombstones(g));
  }
  return expired;
}
