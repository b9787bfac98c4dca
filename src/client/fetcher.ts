/**
 * Fetching for the consumer: per assigned partition a position (next offset the application
 * will see) and a buffer of fetched records. One Fetch in flight per leader, sent while the
 * previous answer is still being consumed (prefetch); records before the
 * position are dropped (a batch can start before it), control batches and (read_committed)
 * aborted transactions are skipped, legacy magic 0/1 data is converted on the way in.
 */
import { Api } from './apis.js';
import type { Cluster } from './cluster.js';
import { KafkaError } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';
import {
  ControlRecordType,
  TimestampType,
  convertLegacyToV2,
  decodeBatch,
  MAX_READ_DECOMPRESSED_BYTES,
  decodeControlRecordKey,
  iterateBatches,
  recordTimestamp,
  type RecordHeader,
} from '../protocol/records/index.js';
import type { PartitionData } from '../protocol/messages/01-fetch.js';
import { tpKey } from '../common/partition-keys.js';
import type { TopicPartition } from './group/offsets.js';

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: bigint;
  timestamp: bigint;
  timestampType: 'CreateTime' | 'LogAppendTime';
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
  leaderEpoch: number;
}

export interface FetcherOptions {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  maxPartitionBytes: number;
  /** 0 read_uncommitted, 1 read_committed. */
  isolationLevel: number;
}

export class PartitionState {
  /** Next offset to hand to the application; null until initialised (committed or reset). */
  position: bigint | null = null;
  paused = false;
  /**
   * Fetched records not yet handed out: one array per fetch response, consumed through
   * `head` (no Array.shift, which copies the rest of a large array every time).
   */
  private chunks: ConsumerRecord[][] = [];
  private head = 0;
  /** Offset after the last fetched batch: where the next fetch starts once `buffer` is drained. */
  fetchedUpTo: bigint | null = null;
  highWatermark = -1n;
  logStartOffset = -1n;
  /** Set when the broker says the position is out of range. */
  outOfRange = false;

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  seek(offset: bigint): void {
    this.position = offset;
    this.chunks = [];
    this.head = 0;
    this.fetchedUpTo = null;
    this.outOfRange = false;
  }

  /** Where the next fetch should start. */
  get fetchOffset(): bigint | null {
    return this.fetchedUpTo ?? this.position;
  }

  get hasBuffered(): boolean {
    return this.chunks.length > 0;
  }

  /**
   * Whether another fetch may start: while the application works through one fetched chunk the
   * next one is on its way (as Java's fetcher does), but no more are piled up.
   */
  get wantsFetch(): boolean {
    return !this.paused && this.position !== null && !this.outOfRange && this.chunks.length <= 1;
  }

  addChunk(records: ConsumerRecord[]): void {
    if (records.length > 0) this.chunks.push(records);
  }

  /** Moves up to `max` records at or after the position into `out`. */
  takeInto(out: ConsumerRecord[], max: number): void {
    if (this.position === null) return;
    let position = this.position;
    while (this.chunks.length > 0 && out.length < max) {
      const chunk = this.chunks[0]!;
      let i = this.head;
      while (i < chunk.length && out.length < max) {
        const r = chunk[i++]!;
        if (r.offset < position) continue;
        out.push(r);
        position = r.offset + 1n;
      }
      if (i >= chunk.length) {
        this.chunks.shift();
        this.head = 0;
      } else this.head = i;
    }
    if (this.chunks.length === 0 && this.fetchedUpTo !== null && this.fetchedUpTo > position) position = this.fetchedUpTo;
    this.position = position;
  }
}

const REFRESH_METADATA: ReadonlySet<number> = new Set([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.UNKNOWN_TOPIC_ID,
]);

export class Fetcher {
  readonly states = new Map<string, PartitionState>();
  private readonly inFlight = new Map<number, Promise<void>>();
  private failure: Error | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: FetcherOptions,
  ) {}

  setAssignment(tps: readonly TopicPartition[]): void {
    const keep = new Set(tps.map((tp) => tpKey(tp.topic, tp.partition)));
    for (const k of this.states.keys()) if (!keep.has(k)) this.states.delete(k);
    for (const tp of tps) {
      const k = tpKey(tp.topic, tp.partition);
      if (!this.states.has(k)) this.states.set(k, new PartitionState(tp.topic, tp.partition));
    }
  }

  state(topic: string, partition: number): PartitionState | undefined {
    return this.states.get(tpKey(topic, partition));
  }

  /** Takes up to `max` buffered records, advancing positions. */
  take(max: number): ConsumerRecord[] {
    const out: ConsumerRecord[] = [];
    for (const s of this.states.values()) {
      if (s.paused || s.position === null) continue;
      s.takeInto(out, max);
      if (out.length >= max) break;
    }
    return out;
  }

  hasBuffered(): boolean {
    for (const s of this.states.values()) if (!s.paused && s.hasBuffered) return true;
    return false;
  }

  /** Starts fetches for fetchable partitions and waits until one finishes or `timeoutMs`. */
  async fetch(timeoutMs: number): Promise<void> {
    if (this.failure) {
      const f = this.failure;
      this.failure = null;
      throw f;
    }
    await this.cluster.topicsMetadata([...new Set([...this.states.values()].map((s) => s.topic))]).catch(() => undefined);
    this.sendFetches(timeoutMs);
    const waiting = [...this.inFlight.values()];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(1, timeoutMs))));
    await Promise.race(waiting.length > 0 ? [Promise.race(waiting), timeout] : [timeout]);
    clearTimeout(timer);
  }

  /**
   * Starts a fetch from every leader with none in flight, for its partitions that want more,
   * without waiting: called while records are still buffered, it overlaps the next round trip
   * with the application's processing.
   */
  sendFetches(timeoutMs = this.options.maxWaitMs): void {
    if (this.failure) return;
    const byLeader = new Map<number, PartitionState[]>();
    for (const s of this.states.values()) {
      if (!s.wantsFetch) continue;
      const leader = this.cluster.leaderFor(s.topic, s.partition);
      if (leader < 0 || this.inFlight.has(leader)) continue;
      const list = byLeader.get(leader);
      if (list) list.push(s);
      else byLeader.set(leader, [s]);
    }
    for (const [leader, list] of byLeader) {
      const p = this.fetchFrom(leader, list, Math.max(0, Math.min(timeoutMs, this.options.maxWaitMs)))
        .catch((err: Error) => {
          if (err instanceof KafkaError || !('retriable' in err)) this.failure = err;
          this.cluster.invalidate();
        })
        .finally(() => this.inFlight.delete(leader));
      this.inFlight.set(leader, p);
    }
  }

  private async fetchFrom(leader: number, parts: PartitionState[], maxWaitMs: number): Promise<void> {
    const conn = await this.cluster.brokerConnection(leader);
    const byTopic = new Map<string, PartitionState[]>();
    for (const s of parts) byTopic.set(s.topic, [...(byTopic.get(s.topic) ?? []), s]);
    const requested = new Map(parts.map((s) => [tpKey(s.topic, s.partition), s.fetchOffset!]));
    const sentAt = performance.now();
    const resp = await conn.send(
      Api.Fetch,
      {
        replicaId: -1,
        maxWaitMs,
        minBytes: this.options.minBytes,
        maxBytes: this.options.maxBytes,
        isolationLevel: this.options.isolationLevel,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [...byTopic].map(([topic, ss]) => ({
          topic,
          topicId: this.cluster.current.topics.get(topic)?.topicId,
          partitions: ss.map((s) => ({
            partition: s.partition,
            currentLeaderEpoch: -1,
            fetchOffset: s.fetchOffset!,
            logStartOffset: -1n,
            partitionMaxBytes: this.options.maxPartitionBytes,
          })),
        })),
        forgottenTopicsData: [],
        rackId: '',
      },
      { timeoutMs: maxWaitMs + this.cluster.requestTimeoutMs },
    );
    this.cluster.stats.fetchLatency.record(performance.now() - sentAt); // KIP-714's fetch.manager.fetch.latency

    if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, 'fetch failed');
    for (const t of resp.responses) {
      for (const p of t.partitions) {
        const s = this.state(t.topic, p.partitionIndex);
        // Ignore answers for partitions we no longer own or that were sought meanwhile.
        if (!s || s.fetchOffset !== requested.get(tpKey(t.topic, p.partitionIndex))) continue;
        this.absorb(s, p);
      }
    }
  }

  private absorb(s: PartitionState, p: PartitionData): void {
    if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      s.outOfRange = true;
      return;
    }
    if (REFRESH_METADATA.has(p.errorCode)) {
      this.cluster.invalidate();
      return;
    }
    if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `fetching ${s.topic}-${s.partition} failed`);
    s.highWatermark = p.highWatermark;
    s.logStartOffset = p.logStartOffset;
    if (!p.records || p.records.length === 0) return;
    const from = s.fetchOffset!;
    const aborted = [...(p.abortedTransactions ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
    const abortedProducers = new Set<bigint>();
    const records: ConsumerRecord[] = [];
    let end: bigint | null = null;
    for (const entry of iterateBatches(p.records)) {
      const raw = entry.buf.subarray(entry.start, entry.start + entry.size);
      const v2 = entry.magic === 2 ? raw : convertLegacyToV2(raw, { preserveOffsets: true });
      for (const inner of iterateBatches(v2)) {
        // The broker is trusted, but no batch may inflate past 1 GiB in the client either.
        const batch = decodeBatch(inner.buf, inner.start, { maxBytes: MAX_READ_DECOMPRESSED_BYTES });
        const last = batch.baseOffset + BigInt(batch.lastOffsetDelta);
        if (end === null || last + 1n > end) end = last + 1n;
        while (aborted.length > 0 && aborted[0]!.firstOffset <= last) abortedProducers.add(aborted.shift()!.producerId);
        if (batch.isControl) {
          const key = batch.records[0] ? decodeControlRecordKey(batch.records[0].key) : null;
          if (key && key.type === ControlRecordType.Abort) abortedProducers.delete(batch.producerId);
          continue;
        }
        if (this.options.isolationLevel === 1 && batch.isTransactional && abortedProducers.has(batch.producerId)) continue;
        for (const r of batch.records) {
          const offset = batch.baseOffset + BigInt(r.offsetDelta);
          if (offset < from) continue;
          records.push({
            topic: s.topic,
            partition: s.partition,
            offset,
            timestamp: recordTimestamp(batch, r),
            timestampType: batch.timestampType === TimestampType.LogAppendTime ? 'LogAppendTime' : 'CreateTime',
            key: r.key,
            value: r.value,
            headers: r.headers,
            leaderEpoch: batch.partitionLeaderEpoch,
          });
        }
      }
    }
    s.addChunk(records);
    if (end !== null && end > from) s.fetchedUpTo = end;
  }
}
