/**
 * Collects records into one open batch per partition. A batch closes when the next record
 * would take it past `batchSize` or when it has waited `lingerMs`; closed batches queue per
 * partition, in order, for the sender.
 *
 * Records are encoded into the batch's buffer as they arrive (as Java's MemoryRecordsBuilder
 * does): no per-record objects survive `append`, only the delivery callback and the timestamp
 * (for the metadata handed back). That keeps the garbage collector out of the hot path.
 */
import {
  ATTR_COMPRESSION_MASK,
  CompressionType,
  RECORD_BATCH_OVERHEAD,
  compress,
  sizeOfVarInt,
  sizeOfVarLongNumber,
  writeVarInt,
  writeVarLongNumber,
  type RecordHeader,
  writeBatchHeader,
} from '../protocol/records/index.js';

export interface RecordMetadata {
  topic: string;
  partition: number;
  /** -1 when acks=0 (the broker does not say). */
  offset: bigint;
  timestamp: bigint;
}

/** Hears the outcome of one record: an error, or where it landed. */
export type DeliveryCallback = (err: Error | null, metadata: RecordMetadata | null) => void;

/** The parts of a record the accumulator encodes. */
export interface RecordToAppend {
  key: Buffer | null;
  value: Buffer | null;
  headers: readonly RecordHeader[] | null;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

let nextBatchId = 0;
/** First allocation of a batch buffer; it doubles up to batchSize as records come. */
const INITIAL_BATCH_BUFFER = 4096;

const nullableSize = (b: Buffer | null): number => (b === null ? 1 : sizeOfVarInt(b.length) + b.length);

function writeNullable(buf: Buffer, at: number, b: Buffer | null): number {
  if (b === null) return writeVarInt(buf, at, -1);
  at = writeVarInt(buf, at, b.length);
  return at + b.copy(buf, at);
}

export class ProducerBatch {
  /** Creation order: retried batches go back in this order, ahead of newer ones. */
  readonly id = nextBatchId++;
  readonly createdAt = Date.now();
  attempts = 0;
  /** Assigned when first sent; kept for retries so the broker can de-duplicate. */
  baseSequence = -1;
  /** Records in the batch. */
  count = 0;
  private buf: Buffer;
  /** End of the encoded records in `buf` (the header takes the first 61 bytes). */
  private end = RECORD_BATCH_OVERHEAD;
  private baseTimestamp = 0;
  private maxTimestamp = 0;
  private readonly timestamps: number[] = [];
  private readonly callbacks: DeliveryCallback[] = [];
  private encoded: Buffer | null = null;

  constructor(
    readonly topic: string,
    readonly partition: number,
    initialCapacity: number,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(RECORD_BATCH_OVERHEAD + 64, initialCapacity));
  }

  /** Bytes the batch would take now (header + records, uncompressed). */
  get sizeInBytes(): number {
    return this.end;
  }

  /** Encoded size of `r` as the next record of this batch, without its length prefix. */
  bodySizeOf(r: RecordToAppend): number {
    const tsDelta = this.count === 0 ? 0 : r.timestamp - this.baseTimestamp;
    let body = 1 + sizeOfVarLongNumber(tsDelta) + sizeOfVarInt(this.count) + nullableSize(r.key) + nullableSize(r.value);
    const headers = r.headers;
    body += sizeOfVarInt(headers === null ? 0 : headers.length);
    if (headers !== null) {
      for (const h of headers) {
        const k = Buffer.byteLength(h.key, 'utf8');
        body += sizeOfVarInt(k) + k + nullableSize(h.value);
      }
    }
    return body;
  }

  /** Appends `r`, whose body size `bodySizeOf` just computed. */
  append(r: RecordToAppend, body: number, callback: DeliveryCallback): void {
    const total = sizeOfVarInt(body) + body;
    if (this.count === 0) {
      this.baseTimestamp = r.timestamp;
      this.maxTimestamp = r.timestamp;
    } else if (r.timestamp > this.maxTimestamp) this.maxTimestamp = r.timestamp;
    if (this.end + total > this.buf.length) this.grow(this.end + total);
    const buf = this.buf;
    let at = writeVarInt(buf, this.end, body);
    buf[at++] = 0; // attributes
    at = writeVarLongNumber(buf, at, r.timestamp - this.baseTimestamp);
    at = writeVarInt(buf, at, this.count);
    at = writeNullable(buf, at, r.key);
    at = writeNullable(buf, at, r.value);
    const headers = r.headers;
    at = writeVarInt(buf, at, headers === null ? 0 : headers.length);
    if (headers !== null) {
      for (const h of headers) {
        const k = Buffer.byteLength(h.key, 'utf8');
        at = writeVarInt(buf, at, k);
        at += buf.write(h.key, at, k, 'utf8');
        at = writeNullable(buf, at, h.value);
      }
    }
    this.end = at;
    this.timestamps.push(r.timestamp);
    this.callbacks.push(callback);
    this.count++;
  }

  /** The wire form (header filled in, CRC computed, compressed if asked); computed once. */
  encode(compression: CompressionType, producerId: bigint, producerEpoch: number): Buffer {
    if (this.encoded) return this.encoded;
    let out: Buffer;
    if (compression === CompressionType.None) {
      out = this.buf.subarray(0, this.end);
    } else {
      const section = compress(compression, this.buf.subarray(RECORD_BATCH_OVERHEAD, this.end));
      out = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + section.length);
      section.copy(out, RECORD_BATCH_OVERHEAD);
    }
    writeBatchHeader(out, {
      baseOffset: 0n,
      partitionLeaderEpoch: -1,
      attributes: compression & ATTR_COMPRESSION_MASK,
      lastOffsetDelta: Math.max(0, this.count - 1),
      baseTimestamp: BigInt(this.baseTimestamp),
      maxTimestamp: BigInt(this.maxTimestamp),
      producerId,
      producerEpoch,
      baseSequence: this.baseSequence,
      recordsCount: this.count,
    });
    this.encoded = out;
    return out;
  }

  succeed(baseOffset: bigint, logAppendTime: bigint): void {
    const appendTime = logAppendTime >= 0n ? logAppendTime : null;
    const known = baseOffset >= 0n;
    for (let i = 0; i < this.count; i++) {
      const metadata: RecordMetadata = {
        topic: this.topic,
        partition: this.partition,
        offset: known ? baseOffset + BigInt(i) : -1n,
        timestamp: appendTime ?? BigInt(this.timestamps[i]!),
      };
      deliver(this.callbacks[i]!, null, metadata);
    }
  }

  fail(err: Error): void {
    for (let i = 0; i < this.count; i++) deliver(this.callbacks[i]!, err, null);
  }

  private grow(needed: number): void {
    let size = this.buf.length * 2;
    while (size < needed) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.end);
    this.buf = next;
  }
}

/** A throwing callback must not stop the others of the batch from hearing their outcome. */
function deliver(cb: DeliveryCallback, err: Error | null, m: RecordMetadata | null): void {
  try {
    cb(err, m);
  } catch (e) {
    queueMicrotask(() => {
      throw e;
    });
  }
}

export class RecordAccumulator {
  /** Open batch per topic, indexed by partition (no string key built per record). */
  private readonly open = new Map<string, (ProducerBatch | undefined)[]>();
  private openCount = 0;
  private lastBatchBytes = 0;
  private readonly lingerTimers = new Map<ProducerBatch, NodeJS.Timeout>();
  /** Closed batches waiting to be sent, per partition, oldest first. */
  readonly ready = new Map<string, ProducerBatch[]>();

  constructor(
    private readonly batchSize: number,
    private readonly lingerMs: number,
    /** Called whenever a batch becomes ready. */
    private readonly onReady: () => void,
    /** Called when a partition's open batch was closed (the sticky partitioner moves on). */
    private readonly onClosed: (topic: string) => void,
  ) {}

  append(topic: string, partition: number, record: RecordToAppend, callback: DeliveryCallback): void {
    let byPartition = this.open.get(topic);
    if (byPartition === undefined) {
      byPartition = [];
      this.open.set(topic, byPartition);
    }
    let batch = byPartition[partition];
    let body = batch === undefined ? 0 : batch.bodySizeOf(record);
    if (batch !== undefined && batch.count > 0 && batch.sizeInBytes + sizeOfVarInt(body) + body > this.batchSize) {
      this.close(batch);
      batch = undefined;
    }
    if (batch === undefined) {
      // Start as big as the last batch closed: at a steady rate the buffer then never regrows.
      batch = new ProducerBatch(topic, partition, Math.min(this.batchSize, Math.max(INITIAL_BATCH_BUFFER, this.lastBatchBytes)));
      byPartition[partition] = batch;
      this.openCount++;
      body = batch.bodySizeOf(record);
      const b = batch;
      if (this.lingerMs > 0)
        this.lingerTimers.set(
          b,
          setTimeout(() => this.close(b), this.lingerMs),
        );
    }
    batch.append(record, body, callback);
    if (this.lingerMs <= 0 || batch.sizeInBytes >= this.batchSize) this.close(batch);
  }

  /** Closes every open batch now (flush/close). */
  closeAll(): void {
    for (const byPartition of [...this.open.values()]) {
      for (const b of byPartition) if (b !== undefined) this.close(b);
    }
  }

  /** Puts a batch back at the head of its partition's queue (retry keeps ordering). */
  requeue(batch: ProducerBatch): void {
    const k = partitionKey(batch.topic, batch.partition);
    const q = this.ready.get(k) ?? [];
    const at = q.findIndex((b) => b.id > batch.id);
    q.splice(at < 0 ? q.length : at, 0, batch);
    this.ready.set(k, q);
  }

  /** Removes and returns the first ready batch of every partition that `canSend` allows. */
  drain(canSend: (partitionKey: string) => boolean): ProducerBatch[] {
    const out: ProducerBatch[] = [];
    for (const [k, q] of this.ready) {
      if (!canSend(k) || q.length === 0) continue;
      out.push(q.shift()!);
      if (q.length === 0) this.ready.delete(k);
    }
    return out;
  }

  hasPending(): boolean {
    return this.openCount > 0 || this.ready.size > 0;
  }

  /** Fails every batch not yet sent; returns how many records that was. */
  failAll(err: Error): number {
    let records = 0;
    const failBatch = (b: ProducerBatch | undefined): void => {
      if (b === undefined) return;
      records += b.count;
      b.fail(err);
    };
    for (const byPartition of this.open.values()) for (const b of byPartition) failBatch(b);
    for (const q of this.ready.values()) for (const b of q) failBatch(b);
    for (const t of this.lingerTimers.values()) clearTimeout(t);
    this.open.clear();
    this.openCount = 0;
    this.ready.clear();
    this.lingerTimers.clear();
    return records;
  }

  private close(batch: ProducerBatch): void {
    const byPartition = this.open.get(batch.topic);
    if (byPartition === undefined || byPartition[batch.partition] !== batch) return;
    byPartition[batch.partition] = undefined;
    this.openCount--;
    this.lastBatchBytes = batch.sizeInBytes;
    const t = this.lingerTimers.get(batch);
    if (t) {
      clearTimeout(t);
      this.lingerTimers.delete(batch);
    }
    const k = partitionKey(batch.topic, batch.partition);
    const q = this.ready.get(k);
    if (q) q.push(batch);
    else this.ready.set(k, [batch]);
    this.onClosed(batch.topic);
    this.onReady();
  }
}

export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
