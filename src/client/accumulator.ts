/**
 * Collects records into one open batch per partition. A batch closes when the next record
 * would take it past `batchSize` or when it has waited `lingerMs`; closed batches queue per
 * partition, in order, for the sender.
 */
import { CompressionType, encodeBatch, type KafkaRecord, type RecordHeader } from '../protocol/records/index.js';

export interface RecordMetadata {
  topic: string;
  partition: number;
  /** -1 when acks=0 (the broker does not say). */
  offset: bigint;
  timestamp: bigint;
}

export interface PendingRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
  timestamp: bigint;
  resolve: (m: RecordMetadata) => void;
  reject: (err: Error) => void;
}

let nextBatchId = 0;

export class ProducerBatch {
  /** Creation order: retried batches go back in this order, ahead of newer ones. */
  readonly id = nextBatchId++;
  readonly records: PendingRecord[] = [];
  bytes = 0;
  readonly createdAt = Date.now();
  attempts = 0;
  /** Assigned when first sent; kept for retries so the broker can de-duplicate. */
  baseSequence = -1;
  private encoded: Buffer | null = null;

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  add(r: PendingRecord): void {
    this.records.push(r);
    this.bytes += estimateSize(r);
  }

  encode(compression: CompressionType, producerId: bigint, producerEpoch: number): Buffer {
    if (this.encoded) return this.encoded;
    const baseTimestamp = this.records.reduce((min, r) => (r.timestamp < min ? r.timestamp : min), this.records[0]!.timestamp);
    const records: KafkaRecord[] = this.records.map((r, i) => ({
      attributes: 0,
      timestampDelta: Number(r.timestamp - baseTimestamp),
      offsetDelta: i,
      key: r.key,
      value: r.value,
      headers: r.headers,
    }));
    this.encoded = encodeBatch({ records, baseTimestamp, compression, producerId, producerEpoch, baseSequence: this.baseSequence });
    return this.encoded;
  }

  succeed(baseOffset: bigint, logAppendTime: bigint): void {
    this.records.forEach((r, i) => {
      r.resolve({
        topic: this.topic,
        partition: this.partition,
        offset: baseOffset < 0n ? -1n : baseOffset + BigInt(i),
        timestamp: logAppendTime >= 0n ? logAppendTime : r.timestamp,
      });
    });
  }

  fail(err: Error): void {
    for (const r of this.records) r.reject(err);
  }
}

function estimateSize(r: PendingRecord): number {
  let n = 16 + (r.key?.length ?? 0) + (r.value?.length ?? 0);
  for (const h of r.headers) n += 4 + Buffer.byteLength(h.key) + (h.value?.length ?? 0);
  return n;
}

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export class RecordAccumulator {
  private readonly open = new Map<string, ProducerBatch>();
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

  append(topic: string, partition: number, record: PendingRecord): void {
    const k = key(topic, partition);
    let batch = this.open.get(k);
    if (batch && batch.records.length > 0 && batch.bytes + estimateSize(record) > this.batchSize) {
      this.close(k, batch);
      batch = undefined;
    }
    if (!batch) {
      batch = new ProducerBatch(topic, partition);
      this.open.set(k, batch);
      const b = batch;
      if (this.lingerMs > 0) this.lingerTimers.set(b, setTimeout(() => this.close(k, b), this.lingerMs));
    }
    batch.add(record);
    if (this.lingerMs <= 0 || batch.bytes >= this.batchSize) this.close(k, batch);
  }

  /** Closes every open batch now (flush/close). */
  closeAll(): void {
    for (const [k, b] of [...this.open]) this.close(k, b);
  }

  /** Puts a batch back at the head of its partition's queue (retry keeps ordering). */
  requeue(batch: ProducerBatch): void {
    const k = key(batch.topic, batch.partition);
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
    return this.open.size > 0 || this.ready.size > 0;
  }

  failAll(err: Error): void {
    for (const b of this.open.values()) b.fail(err);
    for (const q of this.ready.values()) for (const b of q) b.fail(err);
    for (const t of this.lingerTimers.values()) clearTimeout(t);
    this.open.clear();
    this.ready.clear();
    this.lingerTimers.clear();
  }

  private close(k: string, batch: ProducerBatch): void {
    if (this.open.get(k) !== batch) return;
    this.open.delete(k);
    const t = this.lingerTimers.get(batch);
    if (t) clearTimeout(t);
    this.lingerTimers.delete(batch);
    const q = this.ready.get(k) ?? [];
    q.push(batch);
    this.ready.set(k, q);
    this.onClosed(batch.topic);
    this.onReady();
  }
}

export function partitionKey(topic: string, partition: number): string {
  return key(topic, partition);
}
