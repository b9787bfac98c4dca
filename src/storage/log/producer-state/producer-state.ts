/**
 * Idempotent-producer state of one partition, as Kafka keeps it: for every producer id its
 * epoch and the metadata of its last five batches, so a retried batch is recognised as a
 * duplicate (answered with its original offsets) and a gap in sequences is refused.
 *
 * The rules follow Kafka 2.5+ (KIP-360): a producer id the partition knows nothing about may
 * start at any sequence; an older epoch is fenced; a new epoch must restart at sequence 0
 * unless nothing is known of the previous one.
 *
 * Transactions (issue 14): a producer's first transactional batch opens its transaction here
 * (currentTxnFirstOffset); the coordinator's commit or abort marker closes it. The first offset
 * of the earliest transaction still open, or closed by a marker the high watermark has not
 * passed yet (Kafka's ongoing and unreplicated transactions), bounds the last stable offset.
 */
import { ErrorCode } from '../../../protocol/errors.js';

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
  /** First offset of the transaction it has open here; -1 when none. */
  currentTxnFirstOffset: number;
  /** Epoch of the transaction coordinator that wrote its last marker; -1 before any. */
  coordinatorEpoch: number;
}

/** A transaction a marker closed: where it began and ended, and the LSO when it ended (Kafka's CompletedTxn). */
export interface CompletedTxn {
  producerId: bigint;
  firstOffset: number;
  /** The marker's offset. */
  lastOffset: number;
  aborted: boolean;
  /** First offset of the earliest other open transaction, else the marker's offset + 1. */
  lastStableOffset: number;
}

export function newProducerEntry(producerId: bigint, epoch: number, lastTimestamp: number): ProducerEntry {
  return { producerId, epoch, batches: [], lastTimestamp, currentTxnFirstOffset: -1, coordinatorEpoch: -1 };
}

export type SequenceCheck =
  | { kind: 'append' }
  | { kind: 'duplicate'; firstOffset: number; lastOffset: number }
  | { kind: 'error'; errorCode: number; message: string };

/** The answer when a batch may be appended: one object, not one per check. */
export const APPEND: SequenceCheck = { kind: 'append' };

/** The last sequence of a batch (sequences wrap from Int32.MAX to 0): the append step's. */
export { lastSequenceOf } from '../../append/append-step.js';

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

export class ProducerStateMap {
  readonly producers = new Map<bigint, ProducerEntry>();
  /** Transactions closed by a marker at or above the high watermark (not snapshotted). */
  private unreplicated: CompletedTxn[] = [];
  /**
   * Producer id -> first offset of its open transaction: the entries' currentTxnFirstOffset,
   * indexed so the LSO (asked on every fetch) costs the open transactions, not every producer.
   */
  private readonly open = new Map<bigint, number>();
  /** Bumped on every change, so snapshots are skipped when nothing moved. */
  version = 0;

  get size(): number {
    return this.producers.size;
  }

  /**
   * Decides what to do with a batch from `producerId` before it is appended. A plain batch from
   * a producer with a transaction open here is refused (INVALID_TXN_STATE), as Kafka does.
   */
  check(producerId: bigint, epoch: number, firstSeq: number, lastSeq: number, transactional = false, validateSequence = true): SequenceCheck {
    const entry = this.producers.get(producerId);
    if (!entry) return APPEND;
    if (!transactional && entry.currentTxnFirstOffset >= 0 && epoch >= entry.epoch) {
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_TXN_STATE,
        message: `producer ${producerId} has a transaction open since offset ${entry.currentTxnFirstOffset} and sent a non-transactional batch`,
      };
    }
    if (epoch < entry.epoch) {
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
        message: `producer ${producerId} epoch ${epoch} is older than the current epoch ${entry.epoch}`,
      };
    }
    // A coordinator's batch (transactional offsets on __consumer_offsets) carries no sequence:
    // only its epoch is checked, as Kafka checks sequences for client appends only.
    if (!validateSequence) return APPEND;
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

  /** Records an appended batch (also used when rebuilding the state from the log); a transactional one may open a transaction. */
  update(producerId: bigint, epoch: number, batch: BatchMetadata, transactional = false): void {
    const entry = this.entryAt(producerId, epoch, batch.timestamp);
    entry.batches.push(batch);
    if (entry.batches.length > MAX_CACHED_BATCHES) entry.batches.shift();
    entry.lastTimestamp = Math.max(entry.lastTimestamp, batch.timestamp);
    if (transactional && entry.currentTxnFirstOffset < 0) this.setOpen(entry, batch.firstOffset);
    this.version++;
  }

  /**
   * Whether a marker from the coordinator may be written (Kafka's appendEndTxnMarker checks): not
   * from an older producer epoch (INVALID_PRODUCER_EPOCH), not from an older coordinator
   * (TRANSACTION_COORDINATOR_FENCED).
   */
  checkMarker(producerId: bigint, epoch: number, coordinatorEpoch: number): { errorCode: number; message: string } | undefined {
    const entry = this.producers.get(producerId);
    if (!entry) return undefined;
    if (epoch < entry.epoch)
      return { errorCode: ErrorCode.INVALID_PRODUCER_EPOCH, message: `marker from producer ${producerId} epoch ${epoch}, older than ${entry.epoch}` };
    if (coordinatorEpoch < entry.coordinatorEpoch) {
      return {
        errorCode: ErrorCode.TRANSACTION_COORDINATOR_FENCED,
        message: `marker from coordinator epoch ${coordinatorEpoch}, older than ${entry.coordinatorEpoch}`,
      };
    }
    return undefined;
  }

  /** A commit or abort marker at `offset` closes the producer's transaction (also on replay). */
  completeTxn(producerId: bigint, epoch: number, offset: number, aborted: boolean, coordinatorEpoch: number, timestamp: number): CompletedTxn {
    const entry = this.entryAt(producerId, epoch, timestamp);
    const firstOffset = entry.currentTxnFirstOffset >= 0 ? entry.currentTxnFirstOffset : offset;
    this.setOpen(entry, -1);
    entry.coordinatorEpoch = Math.max(entry.coordinatorEpoch, coordinatorEpoch);
    entry.lastTimestamp = Math.max(entry.lastTimestamp, timestamp);
    let lastStableOffset = offset + 1;
    for (const first of this.open.values()) lastStableOffset = Math.min(lastStableOffset, first);
    const done: CompletedTxn = { producerId, firstOffset, lastOffset: offset, aborted, lastStableOffset };
    this.unreplicated.push(done);
    this.version++;
    return done;
  }

  /** The first offset a read_committed reader may not pass yet, or undefined when nothing is unstable. */
  firstUnstableOffset(): number | undefined {
    let first: number | undefined;
    for (const o of this.open.values()) if (first === undefined || o < first) first = o;
    for (const t of this.unreplicated) if (first === undefined || t.firstOffset < first) first = t.firstOffset;
    return first;
  }

  /** The high watermark passed some markers: their transactions are stable. */
  onHighWatermark(hw: number): void {
    if (this.unreplicated.length > 0) this.unreplicated = this.unreplicated.filter((t) => t.lastOffset >= hw);
  }

  /** Kafka's lastRecordsOfActiveProducers: each producer's last data offset (-1: none) and epoch, for the cleaner. */
  lastRecordsOfActiveProducers(): Map<bigint, { lastDataOffset: number; epoch: number }> {
    const out = new Map<bigint, { lastDataOffset: number; epoch: number }>();
    for (const [id, e] of this.producers) out.set(id, { lastDataOffset: e.batches.at(-1)?.lastOffset ?? -1, epoch: e.epoch });
    return out;
  }

  /** Adds an entry read from a snapshot (its open transaction included). */
  restore(entry: ProducerEntry): void {
    this.producers.set(entry.producerId, entry);
    this.setOpen(entry, entry.currentTxnFirstOffset);
  }

  /** Opens (offset >= 0) or closes (-1) `entry`'s transaction, keeping the index in step. */
  private setOpen(entry: ProducerEntry, firstOffset: number): void {
    entry.currentTxnFirstOffset = firstOffset;
    if (firstOffset >= 0) this.open.set(entry.producerId, firstOffset);
    else this.open.delete(entry.producerId);
  }

  private entryAt(producerId: bigint, epoch: number, timestamp: number): ProducerEntry {
    let entry = this.producers.get(producerId);
    if (!entry) {
      entry = newProducerEntry(producerId, epoch, timestamp);
      this.producers.set(producerId, entry);
    }
    if (epoch !== entry.epoch) {
      entry.epoch = epoch;
      entry.batches = [];
    }
    return entry;
  }

  /** Forgets producers idle for longer than producer.id.expiration.ms. */
  expire(now: number, expirationMs: number): number {
    let removed = 0;
    for (const [id, e] of this.producers) {
      // A producer with a transaction open stays: its first offset bounds the LSO (as Kafka).
      if (now - e.lastTimestamp > expirationMs && e.currentTxnFirstOffset < 0) {
        this.producers.delete(id);
        removed++;
      }
    }
    if (removed > 0) this.version++;
    return removed;
  }

  /**
   * Drops batches at or beyond `offset` (the log was truncated there). A transaction whose
   * marker was cut (markers above the high watermark are the only ones a truncation reaches) is
   * open again if its first record survived; one that began at or after `offset` is gone.
   */
  truncateFrom(offset: number): void {
    const reopened = new Map<bigint, number>();
    this.unreplicated = this.unreplicated.filter((t) => {
      if (t.lastOffset < offset) return true;
      if (t.firstOffset < offset) reopened.set(t.producerId, t.firstOffset);
      return false;
    });
    for (const [id, e] of this.producers) {
      e.batches = e.batches.filter((b) => b.lastOffset < offset);
      if (e.currentTxnFirstOffset >= offset) this.setOpen(e, -1);
      const first = reopened.get(id);
      if (first !== undefined) this.setOpen(e, first);
      if (e.batches.length === 0 && e.currentTxnFirstOffset < 0) this.producers.delete(id);
    }
    this.version++;
  }

  clear(): void {
    this.producers.clear();
    this.open.clear();
    this.unreplicated = [];
    this.version++;
  }
}
