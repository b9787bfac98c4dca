/**
 * Reading records from given offsets with Fjord's consumer (assigned partitions, no group), for
 * the tools and the console, which look at records rather than offsets: the timestamp of the
 * first record at or after an offset (--describe --lag-time, the console's lag in time) and
 * every record of a range (the offset history).
 */
import type { ClientOptions } from '../cluster.js';
import { Consumer, type ConsumerRecord } from '../consumer.js';
import { tpKey } from '../../common/partition-keys.js';

export interface OffsetTarget {
  topic: string;
  partition: number;
  offset: bigint;
  /** The log end seen by the caller: a partition whose position gets there without a record is done. */
  end?: bigint;
}

/**
 * A consumer that takes only what it is assigned and never commits. read_uncommitted, as the
 * log end offsets the tools compare with: read_committed would wait at an open transaction.
 */
function standaloneConsumer(client: ClientOptions): Consumer {
  return new Consumer({ ...client, enableAutoCommit: false, autoOffsetReset: 'none', isolationLevel: 'read_uncommitted' });
}

/**
 * The timestamp of the first record at or after each target offset (the record at the offset,
 * or the next one where compaction or a transaction marker took it), keyed by tpKey. A
 * partition that gives no record before the deadline is absent from the answer.
 */
export async function firstRecordTimestamps(client: ClientOptions, targets: readonly OffsetTarget[], timeoutMs: number): Promise<Map<string, bigint>> {
  const found = new Map<string, bigint>();
  if (targets.length === 0) return found;
  const consumer = standaloneConsumer(client);
  try {
    consumer.assign(targets.map((t) => ({ topic: t.topic, partition: t.partition })));
    for (const t of targets) consumer.seek(t, t.offset);
    const deadline = Date.now() + timeoutMs;
    const done = new Set<string>();
    while (done.size < targets.length && Date.now() < deadline) {
      for (const r of await consumer.poll(Math.max(1, deadline - Date.now()))) {
        const key = tpKey(r.topic, r.partition);
        if (done.has(key)) continue;
        found.set(key, r.timestamp);
        done.add(key);
        // Done with this partition: fetch no more of it.
        consumer.pause([{ topic: r.topic, partition: r.partition }]);
      }
      // Only control records (transaction markers) up to the end: no record to date.
      for (const t of targets) if (t.end !== undefined && (consumer.position(t) ?? t.offset) >= t.end) done.add(tpKey(t.topic, t.partition));
    }
    return found;
  } finally {
    await consumer.close();
  }
}

/**
 * Every record of one partition from `from` up to (not including) `to`, in offset order.
 * `stallMs` bounds a wait with no progress (not the whole read, which may be long): `complete`
 * is false when the read stopped that way before `to`.
 */
export async function readRange(
  client: ClientOptions,
  tp: { topic: string; partition: number },
  from: bigint,
  to: bigint,
  stallMs: number,
): Promise<{ records: ConsumerRecord[]; complete: boolean }> {
  const records: ConsumerRecord[] = [];
  if (from >= to) return { records, complete: true };
  const consumer = standaloneConsumer(client);
  // The position, not the last record: a transaction marker at the end has no record.
  const position = (): bigint => consumer.position(tp) ?? from;
  try {
    consumer.assign([tp]);
    consumer.seek(tp, from);
    let deadline = Date.now() + stallMs;
    while (position() < to && Date.now() < deadline) {
      const before = position();
      for (const r of await consumer.poll(Math.max(1, deadline - Date.now()))) if (r.offset < to) records.push(r);
      if (position() > before) deadline = Date.now() + stallMs;
    }
    return { records, complete: position() >= to };
  } finally {
    await consumer.close();
  }
}
