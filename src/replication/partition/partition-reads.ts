/**
 * The read side of a hosted partition, Partition's base: its names and offsets, consumer reads,
 * and what ListOffsets, OffsetForLeaderEpoch and DescribeProducers ask of its log. Everything
 * here goes straight to the UnifiedLog, without the append lock: a read sees the log as it is
 * between appends, bounded by the high watermark (or the last stable offset) its caller passes.
 */
import type { ReadResult } from '../../storage/log/log-read.js';
import type { ProducerStateMap } from '../../storage/log/producer-state/producer-state.js';
import type { UnifiedLog } from '../../storage/log/unified-log.js';

export abstract class PartitionReads {
  constructor(readonly log: UnifiedLog) {}

  get topic(): string {
    return this.log.topic;
  }
  get partition(): number {
    return this.log.partition;
  }
  get highWatermark(): number {
    return this.log.highWatermark;
  }
  /** read_committed bound: the high watermark, or the first offset of the earliest transaction not yet stable. */
  get lastStableOffset(): number {
    return this.log.lastStableOffset;
  }
  get logStartOffset(): number {
    return this.log.logStartOffset;
  }
  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  /** The log's idempotent and transactional producers (DescribeProducers, housekeeping). */
  get producers(): ProducerStateMap {
    return this.log.producers;
  }

  /** Reads for a consumer: never beyond the high watermark (or LSO for read_committed). */
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean, upTo: number = this.log.highWatermark): Promise<ReadResult> {
    return this.log.read(fetchOffset, maxBytes, { maxOffset: upTo, minOneBatch });
  }

  // ---- What ListOffsets and OffsetForLeaderEpoch ask of the log.

  /** The first offset at or after `timestamp`, or ('max') the newest timestamp's (Kafka's fetchOffsetForTimestamp). */
  offsetForTimestamp(timestamp: number | 'max'): Promise<{ offset: number; timestamp: number } | null> {
    return timestamp === 'max' ? this.log.maxTimestampOffset() : this.log.offsetForTimestamp(timestamp);
  }
  /** The largest epoch <= `epoch` known here and where it ended. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } {
    return this.log.endOffsetForEpoch(epoch);
  }
  /** The leader epoch in force at `offset` (-1 if unknown). */
  epochAt(offset: number): number {
    return this.log.epochAt(offset);
  }
}
