/**
 * Down-conversion for Fetch v0-v3 (v0-v1 understand magic 0, v2-v3 magic 1), done after the
 * read, partition by partition in response order, as Kafka's lazy down-conversion does:
 *
 * - converted bytes stay within the partition's max_bytes and what is left of the response's
 *   max_bytes; only the response's first message may be larger, so a consumer always progresses
 *   (Kafka sends the first converted batch whole; one message is enough here, the rest waits);
 * - each batch inflates within readDecompressionCap(the topic's max.message.bytes), off the
 *   event loop; a batch that cannot (a compression bomb, or corrupt) ends the partition's data
 *   before it; when nothing came before it, the partition answers MESSAGE_TOO_LARGE (inflates
 *   past the cap) or CORRUPT_MESSAGE with no records, as the Java consumer reports a record it
 *   can never fetch, instead of an unbounded response.
 */
import { KAFKA_ERROR_CODE, downConvertAsync, readDecompressionCap } from '../../protocol/records/index.js';
import type { PartitionFetchResult } from './fetch-reader.js';
import type { RequestedPartition } from './requested-partitions.js';

const EMPTY = Buffer.alloc(0);

/**
 * The read's results with their records in `toMagic`'s format. `maxMessageBytesOf` gives a
 * partition's max.message.bytes (undefined: the default cap).
 */
export async function downConvertResults(
  requested: readonly RequestedPartition[],
  results: readonly PartitionFetchResult[],
  toMagic: 0 | 1,
  responseMaxBytes: number,
  maxMessageBytesOf: (topic: string, partition: number) => number | undefined,
): Promise<PartitionFetchResult[]> {
  let remaining = responseMaxBytes;
  let sentAny = false;
  const out: PartitionFetchResult[] = [];
  for (let i = 0; i < results.length; i++) {
    const result = results[i]!;
    const r = requested[i]!;
    if (!result.records || result.records.length === 0) {
      out.push(result);
      continue;
    }
    const converted = await downConvertAsync(result.records, toMagic, {
      maxOutputBytes: Math.max(0, Math.min(r.partitionMaxBytes, remaining)),
      firstMessageWhole: !sentAny,
      fromOffset: BigInt(r.fetchOffset),
      maxDecompressedBytes: readDecompressionCap(maxMessageBytesOf(r.topic, r.partition)),
    });
    if (converted.records.length === 0 && converted.error) {
      out.push({ ...result, errorCode: KAFKA_ERROR_CODE[converted.error.kafkaError], records: EMPTY });
      continue;
    }
    remaining -= converted.records.length;
    if (converted.records.length > 0) sentAny = true;
    out.push({ ...result, records: converted.records });
  }
  return out;
}
