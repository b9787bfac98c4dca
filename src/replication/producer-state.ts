/**
 * Idempotent-producer state of one partition, as Kafka keeps it: for every producer id its
 * epoch and the metadata of its last five batches, so a retried batch is recognised as a
 * duplicate (answered with its original offsets) and a gap in sequences is refused.
 *
 * The rules follow Kafka 2.5+ (KIP-360): a producer id the partition knows nothing about may
 * start at any sequence; an older epoch is fenced; a new epoch must restart at sequence 0
 * unless nothing is known of the previous one.
 */
import { ErrorCode } from '../protocol/errors.js';

export const MAX_CACHED_BATCHES = 5;
const INT32_MAX = 0x7fffffff;

export interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  firstOffset: number;
  lastOffset: number;
  timestamp: number;
}

export interface ProducerEntry {
  producerId: bigint;
  epoch: number;
  /** Oldest first, at most MAX_CACHED_BATCHES. */
  batches: BatchMetadata[];
  lastTimestamp: number;
}

export type SequenceCheck =
  | { kind: 'append' }
  | { kind: 'duplicate'; firstOffset: number; lastOffset: number }
  | { kind: 'error'; errorCode: number; message: string };

const APPEND: SequenceCheck = { kind: 'append' };

/** Kafka's sequence arithmetic: sequences wrap from Int32.MAX_VALUE to 0. */
export function lastSequenceOf(firstSeq: number, lastOffsetDelta: number): number {
  return firstSeq > INT32_MAX - lastOffsetDelta ? lastOffsetDelta - (INT32_MAX - firstSeq) - 1 : firstSeq + lastOffsetDelta;
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

export class ProducerStateMap {
  readonly producers = new Map<bigint, ProducerEntry>();
  /** Bumped on every change, so snapshots are skipped when nothing moved. */
  version = 0;

  get size(): number {
    return this.producers.size;
  }

  /** Decides what to do with a batch from `producerId` before it is appended. */
  check(producerId: bigint, epoch: number, firstSeq: number, lastSeq: number): SequenceCheck {
    const entry = this.producers.get(producerId);
    if (!entry) return APPEND;
    if (epoch < entry.epoch) {
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
        message: `producer ${producerId} epoch ${epoch} is older than the current epoch ${entry.epoch}`,
      };
    }
    if (epoch > entry.epoch) {
      if (firstSeq !== 0 && entry.batches.length > 0) {
        return {
          kind: 'error',
          errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          message: `producer ${producerId} starts epoch ${epoch} at sequence ${firstSeq}, expected 0`,
        };
      }
      return APPEND;
    }
    for (const b of entry.batches) {
      if (b.firstSeq === firstSeq && b.lastSeq === lastSeq) return { kind: 'duplicate', firstOffset: b.firstOffset, lastOffset: b.lastOffset };
    }
    const last = entry.batches[entry.batches.length - 1];
    if (last && !inSequence(last.lastSeq, firstSeq)) {
      return {
        kind: 'error',
        errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        message: `producer ${producerId} sent sequence ${firstSeq}, expected ${last.lastSeq === INT32_MAX ? 0 : last.lastSeq + 1}`,
      };
    }
    return APPEND;
  }

  /** Records an appended batch (also used when rebuilding the state from the log). */
  update(producerId: bigint, epoch: number, batch: BatchMetadata): void {
    let entry = this.producers.get(producerId);
    if (!entry) {
      entry = { producerId, epoch, batches: [], lastTimestamp: batch.timestamp };
      this.producers.set(producerId, entry);
    }
    if (epoch !== entry.epoch) {
      entry.epoch = epoch;
      entry.batches = [];
    }
    entry.batches.push(batch);
    if (entry.batches.length > MAX_CACHED_BATCHES) entry.batches.shift();
    entry.lastTimestamp = Math.max(entry.lastTimestamp, batch.timestamp);
    this.version++;
  }

  /** Forgets producers idle for longer than producer.id.expiration.ms. */
  expire(now: number, expirationMs: number): number {
    let removed = 0;
    for (const [id, e] of this.producers) {
      if (now - e.lastTimestamp > expirationMs) {
        this.producers.delete(id);
        removed++;
      }
    }
    if (removed > 0) this.version++;
    return removed;
  }

  /** Drops batches at or beyond `offset` (the log was truncated there). */
  truncateFrom(offset: number): void {
    for (const [id, e] of this.producers) {
      e.batches = e.batches.filter((b) => b.lastOffset < offset);
      if (e.batches.length === 0) this.producers.delete(id);
    }
    this.version++;
  }

  clear(): void {
    this.producers.clear();
    this.version++;
  }
}
