/**
 * Reads a group's offset history back as any client does: the partition count of
 * __consumer_offsets_history from Metadata, the group's partition by Kafka's partitionFor, and its
 * records with Fjord's consumer (Fetch), decoded with the record format's functions.
 */
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import {
  OFFSET_HISTORY_TOPIC,
  decodeHistoryKey,
  decodeHistoryValue,
  historyPartitionFor,
  type HistoryValue,
} from '../../src/protocol/offset-history/history-record.js';

export type ReadEntry = HistoryValue & { ts: bigint; offset: bigint };

/** The group's entries from the start of its partition, read until `enough` holds (or fails after `timeoutMs`). */
export async function readGroupHistory(bootstrap: string, group: string, enough: (e: ReadEntry[]) => boolean, timeoutMs = 20_000): Promise<ReadEntry[]> {
  const deadline = Date.now() + timeoutMs;
  const admin = new Admin({ bootstrapServers: bootstrap });
  let partitions = 0;
  try {
    while (partitions === 0) {
      assert.ok(Date.now() < deadline, `${OFFSET_HISTORY_TOPIC} was not created`);
      const [t] = await admin.describeTopics([OFFSET_HISTORY_TOPIC]);
      if (t && t.errorCode === 0 && t.partitions.every((p) => p.leader >= 0)) partitions = t.partitions.length;
      else await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await admin.close();
  }
  const consumer = new Consumer({ bootstrapServers: bootstrap, clientId: 'history-reader', autoOffsetReset: 'earliest' });
  const out: ReadEntry[] = [];
  try {
    consumer.assign([{ topic: OFFSET_HISTORY_TOPIC, partition: historyPartitionFor(group, partitions) }]);
    while (!enough(out)) {
      assert.ok(Date.now() < deadline, `history of ${group} incomplete: ${JSON.stringify(out, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
      for (const r of await consumer.poll(500)) {
        if (r.key === null || r.value === null || decodeHistoryKey(r.key)?.group !== group) continue;
        out.push({ ...decodeHistoryValue(r.value)!, ts: r.timestamp, offset: r.offset });
      }
    }
  } finally {
    await consumer.close();
  }
  return out;
}

/** One line per entry: `topic-partition previous->new cause`. */
export const moveLine = (e: HistoryValue): string => `${e.topic}-${e.partition} ${e.previousOffset}->${e.newOffset} ${e.cause}`;
