/**
 * The records of `__consumer_offsets_history`, Fjord's offset history: one record per change of
 * a group's committed offset (and, at most once per alive interval, one showing that a group
 * committed without moving anything). Any client reads them with Fetch, and finds a time window
 * with ListOffsets by timestamp: the record's timestamp is the time of the change.
 *
 * Layout (big-endian, Kafka's non-flexible primitives: int16-length strings), versioned as
 * Kafka's coordinator records are, a version int16 first in key and value:
 *   key   v0: version int16, group string
 *   value v0: version int16, topic string, partition int32, previousOffset int64 (-1: none),
 *             newOffset int64 (-1: deleted), leaderEpoch int32 (-1: unknown), cause int8,
 *             memberId string, clientId string, clientHost string,
 *             generation int32 (generation id, or member epoch of a KIP-848 group; -1: none)
 * A reader skips values of a version it does not know (newer fields are only ever appended, so a
 * v0 reader could read a v1 value's prefix; decodeHistoryValue refuses rather than guess).
 * The key being the group id puts a group's records in one partition, the one that
 * `__consumer_offsets` uses for it (historyPartitionFor).
 */
import { partitionForGroup } from '../../common/partition-for-group.js';
import { Reader } from '../primitives/reader.js';
import { Writer } from '../primitives/writer.js';

export const OFFSET_HISTORY_TOPIC = '__consumer_offsets_history';
export const HISTORY_KEY_VERSION = 0;
export const HISTORY_VALUE_VERSION = 0;

/** Why the committed offset changed (or, `alive`, that the group committed the same offset). */
export type HistoryCause = 'commit' | 'reset' | 'delete' | 'expire' | 'txn-commit' | 'alive';

/** Wire codes of the causes; never renumber (records on disk keep them). */
const CAUSE_CODES: readonly HistoryCause[] = ['commit', 'reset', 'delete', 'expire', 'txn-commit', 'alive'];

export interface HistoryKey {
  group: string;
}

export interface HistoryValue {
  topic: string;
  partition: number;
  /** The committed offset before the change; -1n when there was none. */
  previousOffset: bigint;
  /** The committed offset after it; -1n when it was deleted (or expired). */
  newOffset: bigint;
  leaderEpoch: number;
  cause: HistoryCause;
  /** Who made the change: empty for the broker itself (expiry) and for admin tools. */
  memberId: string;
  clientId: string;
  clientHost: string;
  /** Generation id (classic group) or member epoch (consumer group) of the commit; -1 when none. */
  generation: number;
}

/** The history partition of a group: Kafka's partitionFor(group), as `__consumer_offsets`. */
export function historyPartitionFor(group: string, partitions: number): number {
  return partitionForGroup(group, partitions);
}

export function encodeHistoryKey(key: HistoryKey): Buffer {
  const w = new Writer(8 + key.group.length * 3);
  w.int16(HISTORY_KEY_VERSION);
  w.string(key.group, false);
  return Buffer.from(w.result());
}

export function encodeHistoryValue(v: HistoryValue): Buffer {
  const w = new Writer(64 + (v.topic.length + v.memberId.length + v.clientId.length + v.clientHost.length) * 3);
  w.int16(HISTORY_VALUE_VERSION);
  w.string(v.topic, false);
  w.int32(v.partition);
  w.int64(v.previousOffset);
  w.int64(v.newOffset);
  w.int32(v.leaderEpoch);
  w.int8(CAUSE_CODES.indexOf(v.cause));
  w.string(v.memberId, false);
  w.string(v.clientId, false);
  w.string(v.clientHost, false);
  w.int32(v.generation);
  return Buffer.from(w.result());
}

/** The key of a history record; null when its version is unknown (a newer broker wrote it). */
export function decodeHistoryKey(buf: Buffer): HistoryKey | null {
  const r = new Reader(buf);
  if (r.int16() !== HISTORY_KEY_VERSION) return null;
  return { group: r.string(false) };
}

/** The value of a history record; null when its version or cause is unknown. Throws on a truncated one. */
export function decodeHistoryValue(buf: Buffer): HistoryValue | null {
  const r = new Reader(buf);
  if (r.int16() !== HISTORY_VALUE_VERSION) return null;
  const topic = r.string(false);
  const partition = r.int32();
  const previousOffset = r.int64();
  const newOffset = r.int64();
  const leaderEpoch = r.int32();
  const cause = CAUSE_CODES[r.int8()];
  const memberId = r.string(false);
  const clientId = r.string(false);
  const clientHost = r.string(false);
  const generation = r.int32();
  if (cause === undefined) return null;
  return { topic, partition, previousOffset, newOffset, leaderEpoch, cause, memberId, clientId, clientHost, generation };
}

/**
 * The topic configs of `__consumer_offsets_history`: time-retained (not compacted: every record
 * counts, the key only places it), with the min.insync.replicas of the offsets topic.
 */
export function historyTopicConfigs(retentionMs: number, minInsyncReplicas: number, segmentBytes: number): Record<string, string> {
  return {
    'cleanup.policy': 'delete',
    'retention.ms': String(retentionMs),
    'compression.type': 'producer',
    'min.insync.replicas': String(minInsyncReplicas),
    'segment.bytes': String(segmentBytes),
  };
}
