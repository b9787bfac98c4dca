/**
 * Reading records from given offsets with Fjord's consumer (assigned partitions, no group), for
 * the tools that look at records rather than offsets: the timestamp of the first record at or
 * after an offset (--describe --lag-time) and every record of a range (--history).
 */
import { Consumer, type ClientOptions, type ConsumerRecord } from '../../client/index.js';
import { tpKey } from '../../common/partition-keys.js';

export interface OffsetTarget {
  topic: string;
  partition: number;
  offset: bigint;
}

/** A consumer that takes only what it is assigned and never commits. */
function standaloneConsumer(client: ClientOptions): Consumer {
  return new Consumer({ ...client, enableAutoCommit: false, autoOffsetReset: 'none', isolationLevel: 'read_committed' });
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
    while (found.size < targets.length && Date.now() < deadline) {
      for (const r of await consumer.poll(Math.max(1, deadline - Date.now()))) {
        const key = tpKey(r.topic, r.partition);
        if (found.has(key)) continue;
        found.set(key, r.timestamp);
        // Done with this partition: fetch no more of it.
        consumer.pause([{ topic: r.topic, partition: r.partition }]);
      }
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
