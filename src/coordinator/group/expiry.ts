/**
 * Offset expiry with Kafka 2.1+ semantics (KIP-211): an empty group's offsets expire
 * offsets.retention.minutes after the group became empty; a standalone consumer's (a group
 * that never had members) that long after each commit; a stable consumer group's only for
 * topics it no longer subscribes to (consumer groups of KIP-848: consumer/expiry.ts). Old
 * commits' explicit expire timestamps are honoured in
 * the same situations. Rebalancing groups are never touched. Expired offsets, and groups left
 * with nothing, get tombstones.
 */
import type { OperationResult } from '../runtime/types.js';
import type { CommittedOffset } from './offset-store.js';
import type { GroupShardState } from './group-shard-state.js';
import { groupSubscribedTopics } from './offsets.js';
import type { CoordinatorRecord } from './records.js';
import { expireConsumerGroupOffsets } from './consumer/expiry.js';

const EXPIRY_TIMER = 'offsets-expiry';

export function expireOffsets(shard: GroupShardState, now: number): OperationResult<number, CoordinatorRecord> {
  const records: CoordinatorRecord[] = [];
  const retention = shard.config.offsetsRetentionMs;
  let expired = 0;
  for (const g of shard.groups.values()) {
    if (!g.is('Empty', 'Stable')) continue;
    let isExpired: (topic: string, v: CommittedOffset) => boolean;
    if (g.is('Empty')) {
      const standalone = g.protocolType === null;
      isExpired = (_t, v) => (v.expireTimestamp >= 0 ? now >= v.expireTimestamp : now - (standalone ? v.commitTimestamp : g.stateTimestamp) >= retention);
    } else {
      const subscribed = groupSubscribedTopics(g);
      if (subscribed === null) continue;
      isExpired = (t, v) => !subscribed.has(t) && (v.expireTimestamp >= 0 ? now >= v.expireTimestamp : now - v.commitTimestamp >= retention);
    }
    const all = shard.offsets.list(g.groupId);
    let left = all.length;
    for (const o of all) {
      // A transactional commit of the partition is pending: its outcome decides, not expiry.
      if (!isExpired(o.topic, o.value) || shard.hasPendingTxnOffset(g.groupId, o.topic, o.partition)) continue;
      records.push({ type: 'offset', group: g.groupId, topic: o.topic, partition: o.partition, value: null });
      left--;
      expired++;
    }
    // As Kafka's hasOffsets: pending transactional commits keep the group.
    if (left === 0 && g.is('Empty') && g.isEmpty && !shard.hasPendingTxnOffsets(g.groupId)) {
      records.push({ type: 'group', group: g.groupId, value: null });
    }
  }
  expired += expireConsumerGroupOffsets(shard, now, records);
  return { records, response: expired };
}

/** Runs expiry every offsets.retention.check.interval.ms while the partition is loaded. */
export function scheduleExpiry(shard: GroupShardState): void {
  shard.ctx.scheduleTimer(EXPIRY_TIMER, shard.config.offsetsRetentionCheckIntervalMs, (now) => {
    const result = expireOffsets(shard, now);
    if (result.response > 0) {
      const groups = result.records.filter((r) => r.type === 'group').length;
      shard.logger.info(
        { offsetsPartition: shard.ctx.partition, offsets: result.response, groupsRemoved: groups },
        `removed ${result.response} expired offset(s)${groups > 0 ? ` and ${groups} group(s) left with nothing` : ''}`,
      );
    }
    scheduleExpiry(shard);
    const out = { records: result.records, response: undefined };
    return shard.expiryHistory ? shard.expiryHistory(out, now) : out;
  });
}
