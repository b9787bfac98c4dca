/**
 * A group's offset history as the tools and the console read it: the records of
 * `__consumer_offsets_history` (written by the group coordinator, one per change of a committed
 * offset) in the group's partition (partitionFor(group), as `__consumer_offsets`), read with
 * Fjord's consumer from the first record at or after a time (ListOffsets by timestamp) up to the
 * end offset seen at start; `maxRecords` bounds a read to the newest records of that range.
 */
import { type Admin, ConfigResourceType } from '../admin.js';
import type { ClientOptions } from '../cluster.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import {
  decodeHistoryKey,
  decodeHistoryValue,
  historyPartitionFor,
  type HistoryValue,
  OFFSET_HISTORY_TOPIC,
} from '../../protocol/offset-history/history-record.js';
import { readRange } from './partition-reader.js';

/** What the history cannot answer (no history kept, a read that made no progress), in the user's words. */
export class OffsetHistoryError extends Error {
  override name = 'OffsetHistoryError';
}

/** One change of one partition's committed offset, at `timestamp` (ms since the epoch). */
export interface HistoryEntry extends HistoryValue {
  timestamp: number;
}

export interface HistoryWindow {
  /** From this time (ms), inclusive; from the oldest kept record when absent. */
  from?: number;
  /** Up to this time (ms), inclusive; to the newest record when absent. */
  to?: number;
  /** At most this many records of the history partition are read (the newest of the range; other groups' count too). */
  maxRecords?: number;
}

/** Where the history of `group` is, or a clear error when the cluster keeps none. */
async function historyPartition(admin: Admin, group: string): Promise<{ topic: string; partition: number }> {
  try {
    const [topic] = await admin.describeTopics([OFFSET_HISTORY_TOPIC]);
    return { topic: OFFSET_HISTORY_TOPIC, partition: historyPartitionFor(group, topic!.partitions.length) };
  } catch (err) {
    if (err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
      throw new OffsetHistoryError(
        `this cluster keeps no offset history: topic ${OFFSET_HISTORY_TOPIC} does not exist (offsets.history.enable=false, or no offset was committed since it was enabled)`,
      );
    }
    throw err;
  }
}

/**
 * Whether the group's offsets are kept in a history, so that a reset can be undone: the history
 * topic exists, or (a cluster whose first commit was this reset: the coordinator creates the
 * topic just after answering it) the group's coordinator has offsets.history.enable=true.
 */
export async function historyKept(admin: Admin, coordinatorId: number | undefined): Promise<boolean> {
  try {
    await admin.describeTopics([OFFSET_HISTORY_TOPIC]);
    return true;
  } catch {
    if (coordinatorId === undefined || coordinatorId < 0) return false;
    // Not allowed to describe the broker's configs (ACLs), or a broker without the key: no hint.
    const configs = await admin.describeConfigs(ConfigResourceType.Broker, String(coordinatorId), ['offsets.history.enable']).catch(() => []);
    return configs.find((c) => c.name === 'offsets.history.enable')?.value === 'true';
  }
}

/**
 * The changes of `group`'s offsets in the window, oldest first. Reading stops at the end offset
 * seen at start (what is written meanwhile waits for the next run); `stallMs` bounds a read that
 * makes no progress (a history partition with no leader).
 */
export async function readGroupHistory(admin: Admin, client: ClientOptions, group: string, window: HistoryWindow, stallMs: number): Promise<HistoryEntry[]> {
  return (await readGroupHistoryBounded(admin, client, group, window, stallMs)).entries;
}

/** As readGroupHistory; `truncated` says that window.maxRecords cut off the older part of the window. */
export async function readGroupHistoryBounded(
  admin: Admin,
  client: ClientOptions,
  group: string,
  window: HistoryWindow,
  stallMs: number,
): Promise<{ entries: HistoryEntry[]; truncated: boolean }> {
  const tp = await historyPartition(admin, group);
  const [end] = await admin.listOffsets([{ ...tp, timestamp: -1n }]);
  let start: bigint;
  if (window.from !== undefined) {
    // The first record at or after --from; -1 when every record is older.
    const [byTime] = await admin.listOffsets([{ ...tp, timestamp: BigInt(window.from) }]);
    start = byTime!.offset >= 0n ? byTime!.offset : end!.offset;
  } else {
    const [earliest] = await admin.listOffsets([{ ...tp, timestamp: -2n }]);
    start = earliest!.offset;
  }
  const truncated = window.maxRecords !== undefined && end!.offset - start > BigInt(window.maxRecords);
  if (truncated) start = end!.offset - BigInt(window.maxRecords!);
  const { records, complete } = await readRange(client, tp, start, end!.offset, stallMs);
  if (!complete)
    throw new OffsetHistoryError(
      `reading the offset history (${tp.topic}-${tp.partition}) made no progress for ${stallMs} ms (--timeout): is its leader down?`,
    );
  const entries: HistoryEntry[] = [];
  for (const r of records) {
    if (!r.key || !r.value) continue;
    const timestamp = Number(r.timestamp);
    // ListOffsets finds the first record at or after --from; a later one may still be older
    // (a clock that stepped back), so the window is checked on every record.
    if ((window.to !== undefined && timestamp > window.to) || (window.from !== undefined && timestamp < window.from)) continue;
    // Other groups share the partition; a record of a newer format is skipped, not guessed at.
    if (decodeHistoryKey(r.key)?.group !== group) continue;
    const value = decodeHistoryValue(r.value);
    if (value) entries.push({ ...value, timestamp });
  }
  return { entries, truncated };
}

/**
 * The history is written just after the commit it records is answered: a command run right
 * after a reset could read a history without it. For an undo, the history (in `window`) is read again
 * (until `timeoutMs`) while it disagrees with the offsets the group has now; what still
 * disagrees then (a history entry that was dropped) is returned for a warning.
 */
export async function readSettledHistory(
  admin: Admin,
  client: ClientOptions,
  group: string,
  timeoutMs: number,
  window: HistoryWindow = {},
): Promise<{ entries: HistoryEntry[]; behind: string[] }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const committed = await admin.listGroupOffsets(group);
    const entries = await readGroupHistory(admin, client, group, window, timeoutMs);
    const newest = new Map<string, bigint>();
    for (const e of entries) newest.set(`${e.topic}-${e.partition}`, e.newOffset);
    const behind: string[] = [];
    for (const [topic, partitions] of committed) {
      for (const [partition, { offset }] of partitions) {
        const recorded = newest.get(`${topic}-${partition}`);
        // A partition with no history (expired, or committed before the history was on) is not checked.
        if (recorded !== undefined && offset >= 0n && recorded !== offset)
          behind.push(`${topic}-${partition}: committed ${offset}, the history's newest ${recorded}`);
      }
    }
    if (behind.length === 0 || Date.now() >= deadline) return { entries, behind };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
