/**
 * The producer: `send()` puts a record in a batch and returns a promise of where it landed.
 * A sender drains closed batches, up to `maxInFlight` per partition (retries go back in
 * creation order), many partitions per Produce request, one request per leader. With idempotence (the default
 * for acks=all, as in Java) batches carry producer id, epoch and sequence, so a retried batch
 * the broker already wrote is not written twice.
 */
import { Api } from './apis.js';
import { Cluster, sleep, type ClientOptions, type TopicMetadata } from './cluster.js';
import { KafkaError, isRetriableError } from './errors.js';
import { ErrorCode, isRetriable } from '../protocol/errors.js';
import { CompressionType, type RecordHeader } from '../protocol/records/index.js';
import { RecordAccumulator, partitionKey, type DeliveryCallback, type ProducerBatch, type RecordMetadata } from './accumulator.js';
import { StickyPartitioner, partitionForKey } from './partitioner.js';
import { startClientTelemetry, type ClientTelemetry } from './telemetry/client-telemetry.js';

export type { RecordMetadata, DeliveryCallback };
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

/**
 * Kafka's Java client defaults to 16 KiB, librdkafka to 1 MB. Fjord takes 256 KiB: large enough
 * that one partition is not capped by requests per second (each batch is one request per
 * partition), small enough that a batch waits only lingerMs at modest rates.
 */
export const DEFAULT_BATCH_SIZE = 262144;

const toBuf = (v: Buffer | string | null | undefined): Buffer | null => (v == null ? null : typeof v === 'string' ? Buffer.from(v) : v);

function toHeaders(h: ProducerRecord['headers']): RecordHeader[] | null {
  if (h === undefined) return null;
  if (Array.isArray(h)) return h;
  const entries = Object.entries(h);
  return entries.length === 0 ? null : entries.map(([k, v]) => ({ key: k, value: toBuf(v) }));
}

interface AwaitingMetadata {
  record: ProducerRecord;
  callback: DeliveryCallback;
}

export class Producer {
  readonly cluster: Cluster;
  private readonly acks: number;
  private readonly compression: CompressionType;
  private readonly retries: number;
  private readonly deliveryTimeoutMs: number;
  private readonly metadataMaxAgeMs: number;
  private idempotent: boolean;
  private readonly accumulator: RecordAccumulator;
  private readonly sticky = new StickyPartitioner();
  private readonly inFlight = new Map<string, number>();
  private readonly nextSequence = new Map<string, number>();
  /** Records of topics whose metadata is being fetched, in send order, per topic. */
  private readonly awaitingMetadata = new Map<string, AwaitingMetadata[]>();
  private backgroundRefresh: Promise<unknown> | null = null;
  private producerId = -1n;
  private producerEpoch = -1;
  private idInit: Promise<void> | null = null;
  /** Records accepted and not yet acknowledged or failed. */
  private outstanding = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  private draining = false;
  /** KIP-714 telemetry (null with enable.metrics.push=false). */
  readonly telemetry: ClientTelemetry | null;

  constructor(private readonly options: ProducerOptions) {
    this.cluster = new Cluster(options);
    this.acks = options.acks === 'all' || options.acks === undefined ? -1 : options.acks;
    this.compression = COMPRESSION[options.compression ?? 'none'];
    if (this.compression === undefined) throw new Error(`unknown compression type "${options.compression}"`);
    this.retries = options.retries ?? Number.MAX_SAFE_INTEGER;
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 120000;
    this.metadataMaxAgeMs = options.metadataMaxAgeMs ?? 300000;
    this.idempotent = options.enableIdempotence ?? this.acks === -1;
    if (this.idempotent && this.acks !== -1) throw new Error('idempotence requires acks=all');
    this.accumulator = new RecordAccumulator(
      options.batchSize ?? DEFAULT_BATCH_SIZE,
      options.lingerMs ?? 5,
      () => this.scheduleDrain(),
      (topic) => {
        const tm = this.cluster.current.topics.get(topic);
        if (tm) this.sticky.onBatchClosed(topic, tm.partitions.length);
      },
    );
    this.telemetry = startClientTelemetry('producer', this.cluster, options);
  }

  /** Checks the bootstrap servers answer (optional: send() connects lazily). */
  async connect(): Promise<void> {
    await this.cluster.refreshMetadata([]);
  }

  /** Queues one record; resolves when the broker acknowledged it (per `acks`). */
  send(record: ProducerRecord): Promise<RecordMetadata> {
    return new Promise<RecordMetadata>((resolve, reject) => {
      this.produce(record, (err, metadata) => (err ? reject(err) : resolve(metadata!)));
    });
  }

  /**
   * Queues one record and calls `callback` once with its outcome (Java's `send(record,
   * callback)`): no promise per record, for callers that send many.
   */
  produce(record: ProducerRecord, callback: DeliveryCallback): void {
    if (this.closed) {
      process.nextTick(callback, new Error('producer is closed'), null);
      return;
    }
    this.outstanding++;
    const topic = record.topic;
    const waiting = this.awaitingMetadata.get(topic);
    const tm = waiting === undefined ? this.cluster.current.topics.get(topic) : undefined;
    if (tm !== undefined && tm.errorCode === 0 && tm.partitions.length > 0) {
      this.enqueue(tm, record, callback); // metadata age is checked per batch, in sendTo
      return;
    }
    // No usable metadata yet: queue behind one lookup for the topic, keeping send order.
    if (waiting !== undefined) {
      waiting.push({ record, callback });
      return;
    }
    const queue: AwaitingMetadata[] = [{ record, callback }];
    this.awaitingMetadata.set(topic, queue);
    this.cluster.partitionsFor(topic, true).then(
      (fresh) => {
        this.awaitingMetadata.delete(topic);
        for (const q of queue) this.enqueue(fresh, q.record, q.callback);
        if (this.idleWaiters.length > 0) this.accumulator.closeAll(); // a flush is waiting
      },
      (err: Error) => {
        this.awaitingMetadata.delete(topic);
        for (const q of queue) this.settleEarly(q.callback, err);
      },
    );
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
    await this.telemetry?.close();
    await this.cluster.close();
  }

  /** Picks the partition and hands the record to the accumulator; metadata is at hand. */
  private enqueue(tm: TopicMetadata, record: ProducerRecord, callback: DeliveryCallback): void {
    try {
      const key = toBuf(record.key);
      const n = tm.partitions.length;
      let partition = record.partition;
      if (partition === undefined) {
        if (this.options.partitioner) partition = this.options.partitioner(record.topic, key, n);
        else if (key !== null) partition = partitionForKey(key, n);
        else partition = this.sticky.partition(record.topic, n, () => tm.partitions.filter((p) => p.leader >= 0).map((p) => p.partition));
      }
      if (!(partition >= 0 && partition < n))
        throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `partition ${partition} of ${record.topic} does not exist`);
      const timestamp = record.timestamp === undefined ? Date.now() : Number(record.timestamp);
      this.accumulator.append(record.topic, partition, { key, value: toBuf(record.value), headers: toHeaders(record.headers), timestamp }, callback);
    } catch (err) {
      this.settleEarly(callback, err as Error);
    }
  }

  /**
   * Fails a record that never reached a batch. The callback runs on the next tick (never inside
   * produce()) and before the record counts as settled: flush() and close() resolve only after
   * every callback ran, as Java's do.
   */
  private settleEarly(callback: DeliveryCallback, err: Error): void {
    process.nextTick(() => {
      try {
        callback(err, null);
      } finally {
        this.settled(1);
      }
    });
  }

  private settled(records: number): void {
    this.outstanding -= records;
    if (this.outstanding === 0 && this.idleWaiters.length > 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private refreshInBackground(topic: string): void {
    if (this.backgroundRefresh) return;
    this.backgroundRefresh = this.cluster
      .refreshMetadata([topic])
      .catch(() => undefined)
      .finally(() => (this.backgroundRefresh = null));
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
        this.settled(this.accumulator.failAll(err as Error));
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
    if (this.cluster.metadataAgeMs() > this.metadataMaxAgeMs) this.refreshInBackground(batches[0]!.topic);
    const byTopic = new Map<string, ProducerBatch[]>();
    const now = Date.now();
    for (const b of batches) {
      b.attempts++;
      if (this.telemetry !== null) this.cluster.stats.recordQueueTime.record(now - b.createdAt);
      if (this.idempotent && b.baseSequence < 0) {
        const k = partitionKey(b.topic, b.partition);
        const seq = this.nextSequence.get(k) ?? 0;
        b.baseSequence = seq;
        this.nextSequence.set(k, (seq + b.count) & 0x7fffffff);
      }
      byTopic.set(b.topic, [...(byTopic.get(b.topic) ?? []), b]);
    }
    let bytes = 512;
    const request = {
      transactionalId: null,
      acks: this.acks,
      timeoutMs: this.cluster.requestTimeoutMs,
      topicData: [...byTopic].map(([name, list]) => ({
        name,
        partitionData: list.map((b) => {
          const records = b.encode(this.compression, this.producerId, this.producerEpoch);
          bytes += records.length + 64;
          return { index: b.partition, records };
        }),
      })),
    };
    try {
      if (leader < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, 'no leader known');
      const conn = await this.cluster.brokerConnection(leader);
      if (this.acks === 0) {
        await conn.send(Api.Produce, request, { noResponse: true, sizeHint: bytes });
        for (const b of batches) this.complete(b, () => b.succeed(-1n, -1n));
        return;
      }
      // The size hint lets the request be encoded into one buffer, with no regrowth copies.
      const resp = await conn.send(Api.Produce, request, { sizeHint: bytes });
      if (this.telemetry !== null) this.cluster.stats.produceThrottleTime.record(resp.throttleTimeMs);
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
    this.settled(b.count);
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
