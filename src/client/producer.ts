/**
 * The producer: `send()` puts a record in a batch and returns a promise of where it landed.
 * A sender drains closed batches, up to `maxInFlight` per partition (retries go back in
 * creation order), many partitions per Produce request, one request per leader. With idempotence (the default
 * for acks=all, as in Java) batches carry producer id, epoch and sequence, so a retried batch
 * the broker already wrote is not written twice.
 */
import { Api } from './apis.js';
import { Cluster, sleep, type ClientOptions } from './cluster.js';
import { KafkaError, isRetriableError } from './errors.js';
import { ErrorCode, isRetriable } from '../protocol/errors.js';
import { CompressionType, type RecordHeader } from '../protocol/records/index.js';
import { RecordAccumulator, partitionKey, type PendingRecord, type ProducerBatch, type RecordMetadata } from './accumulator.js';
import { StickyPartitioner, partitionForKey } from './partitioner.js';

export type { RecordMetadata };
export type CompressionName = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

export interface ProducerOptions extends ClientOptions {
  /** 0, 1 or -1/'all' (default 'all'). */
  acks?: 0 | 1 | -1 | 'all';
  lingerMs?: number;
  batchSize?: number;
  compression?: CompressionName;
  /** Retries per batch for retriable errors (default: unlimited within deliveryTimeoutMs). */
  retries?: number;
  deliveryTimeoutMs?: number;
  /** Default: true when acks is all. */
  enableIdempotence?: boolean;
  /** Batches in flight per partition (max.in.flight.requests.per.connection, default 5). */
  maxInFlight?: number;
  /** Custom partitioner; default murmur2 for keys, sticky otherwise. */
  partitioner?: (topic: string, key: Buffer | null, numPartitions: number) => number;
}

export interface ProducerRecord {
  topic: string;
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number;
  headers?: Record<string, Buffer | string | null> | RecordHeader[];
  timestamp?: number | bigint;
}

const COMPRESSION: Record<CompressionName, CompressionType> = {
  none: CompressionType.None,
  gzip: CompressionType.Gzip,
  snappy: CompressionType.Snappy,
  lz4: CompressionType.Lz4,
  zstd: CompressionType.Zstd,
};

export function compressionByName(name: string): CompressionType {
  const c = COMPRESSION[name.toLowerCase() as CompressionName];
  if (c === undefined) throw new Error(`unknown compression type "${name}" (none, gzip, snappy, lz4, zstd)`);
  return c;
}

const toBuf = (v: Buffer | string | null | undefined): Buffer | null => (v == null ? null : typeof v === 'string' ? Buffer.from(v) : v);

export class Producer {
  readonly cluster: Cluster;
  private readonly acks: number;
  private readonly compression: CompressionType;
  private readonly retries: number;
  private readonly deliveryTimeoutMs: number;
  private idempotent: boolean;
  private readonly accumulator: RecordAccumulator;
  private readonly sticky = new StickyPartitioner();
  private readonly inFlight = new Map<string, number>();
  private readonly nextSequence = new Map<string, number>();
  private producerId = -1n;
  private producerEpoch = -1;
  private idInit: Promise<void> | null = null;
  private outstanding = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  private draining = false;

  constructor(private readonly options: ProducerOptions) {
    this.cluster = new Cluster(options);
    this.acks = options.acks === 'all' || options.acks === undefined ? -1 : options.acks;
    this.compression = COMPRESSION[options.compression ?? 'none'];
    if (this.compression === undefined) throw new Error(`unknown compression type "${options.compression}"`);
    this.retries = options.retries ?? Number.MAX_SAFE_INTEGER;
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 120000;
    this.idempotent = options.enableIdempotence ?? this.acks === -1;
    if (this.idempotent && this.acks !== -1) throw new Error('idempotence requires acks=all');
    this.accumulator = new RecordAccumulator(
      options.batchSize ?? 16384,
      options.lingerMs ?? 5,
      () => this.scheduleDrain(),
      (topic) => {
        const tm = this.cluster.current.topics.get(topic);
        if (tm) this.sticky.onBatchClosed(topic, tm.partitions.length);
      },
    );
  }

  /** Checks the bootstrap servers answer (optional: send() connects lazily). */
  async connect(): Promise<void> {
    await this.cluster.refreshMetadata([]);
  }

  /** Queues one record; resolves when the broker acknowledged it (per `acks`). */
  async send(record: ProducerRecord): Promise<RecordMetadata> {
    if (this.closed) throw new Error('producer is closed');
    const key = toBuf(record.key);
    const value = toBuf(record.value);
    const headers: RecordHeader[] = Array.isArray(record.headers)
      ? record.headers
      : Object.entries(record.headers ?? {}).map(([k, v]) => ({ key: k, value: toBuf(v) }));
    const timestamp = record.timestamp === undefined ? BigInt(Date.now()) : BigInt(record.timestamp);
    this.outstanding++;
    try {
      const tm = await this.cluster.partitionsFor(record.topic, true);
      const n = tm.partitions.length;
      let partition = record.partition;
      if (partition === undefined) {
        if (this.options.partitioner) partition = this.options.partitioner(record.topic, key, n);
        else if (key !== null) partition = partitionForKey(key, n);
        else partition = this.sticky.partition(record.topic, n, tm.partitions.filter((p) => p.leader >= 0).map((p) => p.partition));
      }
      if (partition < 0 || partition >= n) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `partition ${partition} of ${record.topic} does not exist`);
      const p = partition;
      return await new Promise<RecordMetadata>((resolve, reject) => {
        const pending: PendingRecord = { key, value, headers, timestamp, resolve, reject };
        this.accumulator.append(record.topic, p, pending);
      });
    } finally {
      this.outstanding--;
      if (this.outstanding === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** Sends everything queued now and resolves when all of it is acknowledged or failed. */
  async flush(): Promise<void> {
    this.accumulator.closeAll();
    if (this.outstanding === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    await this.cluster.close();
  }

  private scheduleDrain(): void {
    if (this.draining) return;
    this.draining = true;
    queueMicrotask(() => {
      this.draining = false;
      this.drain().catch(() => undefined);
    });
  }

  private async ensureProducerId(): Promise<void> {
    if (!this.idempotent || this.producerId >= 0n) return;
    this.idInit ??= (async () => {
      const conn = await this.cluster.anyConnection();
      if (!conn.supports(Api.InitProducerId)) {
        this.idempotent = false; // kinder than failing: an older broker gets plain at-least-once
        return;
      }
      const resp = await conn.send(Api.InitProducerId, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
      if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, 'InitProducerId failed');
      this.producerId = resp.producerId;
      this.producerEpoch = resp.producerEpoch;
    })().finally(() => {
      this.idInit = null;
    });
    await this.idInit;
  }

  private async drain(): Promise<void> {
    try {
      await this.ensureProducerId();
    } catch (err) {
      if (!isRetriableError(err)) {
        this.accumulator.failAll(err as Error);
        return;
      }
      await sleep(this.cluster.retryBackoffMs);
      this.scheduleDrain();
      return;
    }
    const maxInFlight = this.options.maxInFlight ?? 5;
    for (;;) {
      const batches = this.accumulator.drain((k) => (this.inFlight.get(k) ?? 0) < maxInFlight);
      if (batches.length === 0) return;
      const byLeader = new Map<number, ProducerBatch[]>();
      for (const b of batches) {
        const leader = this.cluster.leaderFor(b.topic, b.partition);
        const k = partitionKey(b.topic, b.partition);
        this.inFlight.set(k, (this.inFlight.get(k) ?? 0) + 1);
        const list = byLeader.get(leader) ?? [];
        list.push(b);
        byLeader.set(leader, list);
      }
      for (const [leader, list] of byLeader) void this.sendTo(leader, list);
    }
  }

  private releaseInFlight(b: ProducerBatch): void {
    const k = partitionKey(b.topic, b.partition);
    const n = (this.inFlight.get(k) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(k);
    else this.inFlight.set(k, n);
  }

  private async sendTo(leader: number, batches: ProducerBatch[]): Promise<void> {
    const byTopic = new Map<string, ProducerBatch[]>();
    for (const b of batches) {
      b.attempts++;
      if (this.idempotent && b.baseSequence < 0) {
        const k = partitionKey(b.topic, b.partition);
        const seq = this.nextSequence.get(k) ?? 0;
        b.baseSequence = seq;
        this.nextSequence.set(k, (seq + b.records.length) & 0x7fffffff);
      }
      byTopic.set(b.topic, [...(byTopic.get(b.topic) ?? []), b]);
    }
    const request = {
      transactionalId: null,
      acks: this.acks,
      timeoutMs: this.cluster.requestTimeoutMs,
      topicData: [...byTopic].map(([name, list]) => ({
        name,
        partitionData: list.map((b) => ({ index: b.partition, records: b.encode(this.compression, this.producerId, this.producerEpoch) })),
      })),
    };
    try {
      if (leader < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, 'no leader known');
      const conn = await this.cluster.brokerConnection(leader);
      if (this.acks === 0) {
        await conn.send(Api.Produce, request, { noResponse: true });
        for (const b of batches) this.complete(b, () => b.succeed(-1n, -1n));
        return;
      }
      const resp = await conn.send(Api.Produce, request);
      for (const b of batches) {
        const pr = resp.responses.find((t) => t.name === b.topic)?.partitionResponses.find((p) => p.index === b.partition);
        const code = pr ? pr.errorCode : ErrorCode.UNKNOWN_SERVER_ERROR;
        if (code === 0 || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
          this.complete(b, () => b.succeed(pr!.baseOffset, pr!.logAppendTimeMs));
        } else {
          // With several batches in flight, one failing makes the next ones arrive out of
          // sequence; they are retried in order behind it.
          const retriable = isRetriable(code) || (this.idempotent && code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
          this.retryOrFail(b, new KafkaError(code, `${pr?.errorMessage ?? ''} producing to ${b.topic}-${b.partition}`.trim()), retriable);
        }
      }
    } catch (err) {
      for (const b of batches) this.retryOrFail(b, err as Error, isRetriableError(err));
    }
  }

  private complete(b: ProducerBatch, settle: () => void): void {
    this.releaseInFlight(b);
    settle();
    this.scheduleDrain();
  }

  private retryOrFail(b: ProducerBatch, err: Error, retriable: boolean): void {
    const expired = Date.now() - b.createdAt > this.deliveryTimeoutMs;
    if (!retriable || expired || b.attempts > this.retries || this.closed) {
      this.complete(b, () => b.fail(err));
      return;
    }
    this.cluster.invalidate();
    setTimeout(() => {
      this.cluster
        .refreshMetadata([b.topic])
        .catch(() => undefined)
        .finally(() => {
          this.accumulator.requeue(b);
          this.releaseInFlight(b);
          this.scheduleDrain();
        });
    }, this.cluster.retryBackoffMs);
  }
}
