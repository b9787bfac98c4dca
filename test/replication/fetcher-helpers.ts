/**
 * Helpers of the replica fetcher tests: batches with chosen offsets and epochs, logs and
 * partitions in temp dirs, a fake leader served from a real Log (so its epochs, reads and
 * diverging-epoch answers are the storage layer's), and polling with a deadline.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeBatch, type KafkaRecord } from '../../src/protocol/records/index.js';
import { Partition } from '../../src/replication/partition/partition.js';
import { UnifiedLog } from '../../src/storage/log/unified-log.js';
import type {
  EpochEndOffsetResult,
  FetcherConfig,
  FetchParams,
  LeaderEndpoint,
  ReplicaFetchData,
  ReplicaFetchPartition,
} from '../../src/replication/fetcher/types.js';
import { defaultLogConfig } from '../../src/storage/config.js';
import { LocalLog } from '../../src/storage/log/local-log.js';
import { tpKey } from '../../src/common/partition-keys.js';
import { CapturingLogger } from '../storage/helpers.js';

export function epochBatch(base: number, count: number, epoch: number, tag = 'v'): Buffer {
  const records: KafkaRecord[] = Array.from({ length: count }, (_, i) => ({
    attributes: 0,
    timestampDelta: i,
    offsetDelta: i,
    key: null,
    value: Buffer.from(`${tag}${base + i}`),
    headers: [],
  }));
  return encodeBatch({ records, baseOffset: BigInt(base), partitionLeaderEpoch: epoch, baseTimestamp: BigInt(1_700_000_000_000 + base) });
}

export async function tempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function openPartition(root: string, topic = 't', partition = 0, segmentBytes?: number): Promise<Partition> {
  const dir = path.join(root, `${topic}-${partition}`);
  await mkdir(dir, { recursive: true });
  const log = await LocalLog.open({
    dir,
    topic,
    partition,
    config: { ...defaultLogConfig(), fileDeleteDelayMs: 0, ...(segmentBytes ? { segmentBytes } : {}) },
    logger: new CapturingLogger(),
  });
  return Partition.open(await UnifiedLog.open(log), 'AAAAAAAAAAAAAAAAAAAAAQ', 0, () => undefined);
}

/** The whole log's bytes from its start. */
export async function logBytes(log: LocalLog | UnifiedLog): Promise<Buffer> {
  const parts: Buffer[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const { records } = await log.read(next, 1 << 22);
    if (records.length === 0) break;
    parts.push(records);
    let pos = 0;
    while (pos < records.length) {
      next = Number(records.readBigInt64BE(pos)) + records.readInt32BE(pos + 23) + 1;
      pos += records.readInt32BE(pos + 8) + 12;
    }
  }
  return Buffer.concat(parts);
}

export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10)); // poll interval, bounded by the deadline
  }
}

export const TEST_FETCHER_CONFIG: FetcherConfig = {
  brokerId: 2,
  numFetchers: 1,
  fetchMaxBytes: 1 << 20,
  fetchResponseMaxBytes: 10 << 20,
  fetchMinBytes: 1,
  fetchWaitMaxMs: 50,
  fetchBackoffMs: 20,
  socketTimeoutMs: 5000,
};

/**
 * A leader served from real Partitions: Kafka's leader rules for replica fetches (epoch checks,
 * diverging_epoch from last_fetched_epoch, out of range, reading up to the log end), plus
 * scripted faults: connection failures, per-partition error codes, and an old-version mode that
 * answers no diverging epochs (the follower must use OffsetForLeaderEpoch).
 */
export class FakeLeader implements LeaderEndpoint {
  readonly leaderId = 1;
  truncationOnFetch = true;
  leaderEpoch = 0;
  /** Leader high watermark per partition; defaults to the log end. */
  readonly hw = new Map<string, number>();
  connectFailures = 0;
  connects = 0;
  readonly scriptedErrors = new Map<string, number[]>();
  readonly fetches: ReplicaFetchPartition[][] = [];
  readonly epochRequests: { partition: number; leaderEpoch: number }[] = [];
  closed = false;

  constructor(readonly partitions: Map<string, Partition>) {}

  async connect(): Promise<{ truncationOnFetch: boolean }> {
    if (this.closed) throw new Error('closed');
    this.connects++;
    if (this.connectFailures > 0) {
      this.connectFailures--;
      throw new Error('connection refused (scripted)');
    }
    return { truncationOnFetch: this.truncationOnFetch };
  }

  /** Runs once before the next fetch is answered (a write racing the fetch). */
  beforeAnswer: (() => Promise<void>) | undefined;

  async fetch(parts: readonly ReplicaFetchPartition[], params: FetchParams): Promise<Map<string, ReplicaFetchData>> {
    this.fetches.push([...parts]);
    const hook = this.beforeAnswer;
    this.beforeAnswer = undefined;
    await hook?.();
    const out = new Map<string, ReplicaFetchData>();
    let bytes = 0;
    for (const p of parts) {
      const key = tpKey(p.topic, p.partition);
      const leader = this.partitions.get(key);
      const base = { highWatermark: -1, logStartOffset: -1, divergingEpoch: undefined, records: Buffer.alloc(0) };
      const scripted = this.scriptedErrors.get(key)?.shift();
      if (scripted !== undefined) {
        out.set(key, { ...base, errorCode: scripted });
        continue;
      }
      if (!leader) {
        out.set(key, { ...base, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
        continue;
      }
      const log = leader.log;
      const info = {
        highWatermark: this.hw.get(key) ?? log.logEndOffset,
        logStartOffset: log.logStartOffset,
        divergingEpoch: undefined,
        records: Buffer.alloc(0),
      };
      if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch !== this.leaderEpoch) {
        out.set(key, { ...info, errorCode: p.currentLeaderEpoch < this.leaderEpoch ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH });
        continue;
      }
      if (this.truncationOnFetch && p.lastFetchedEpoch >= 0) {
        const e = log.epochs.endOffsetFor(p.lastFetchedEpoch, log.logEndOffset);
        // As Kafka's Partition.fetchRecords: an epoch the leader cannot place, or an offset before
        // its log start, is out of range whatever the epochs say.
        if (e.epoch < 0 || e.endOffset < 0 || p.fetchOffset < log.logStartOffset) {
          out.set(key, { ...info, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE });
          continue;
        }
        if (e.epoch < p.lastFetchedEpoch || e.endOffset < p.fetchOffset) {
          out.set(key, { ...info, errorCode: ErrorCode.NONE, divergingEpoch: { epoch: e.epoch, endOffset: e.endOffset } });
          continue;
        }
      }
      if (p.fetchOffset < log.logStartOffset || p.fetchOffset > log.logEndOffset) {
        out.set(key, { ...info, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE });
        continue;
      }
      const { records } = await log.read(p.fetchOffset, Math.min(p.maxBytes, params.maxBytes - bytes));
      bytes += records.length;
      out.set(key, { ...info, errorCode: ErrorCode.NONE, records });
    }
    // The leader's long poll: nothing to send waits a little (max.wait.ms), as a real leader would.
    if (bytes === 0) await new Promise((r) => setTimeout(r, Math.min(params.maxWaitMs, 10)));
    return out;
  }

  async fetchEpochEndOffsets(
    parts: readonly { topic: string; partition: number; currentLeaderEpoch: number; leaderEpoch: number }[],
  ): Promise<Map<string, EpochEndOffsetResult>> {
    const out = new Map<string, EpochEndOffsetResult>();
    for (const p of parts) {
      this.epochRequests.push({ partition: p.partition, leaderEpoch: p.leaderEpoch });
      const log = this.partitions.get(tpKey(p.topic, p.partition))!.log;
      const e = log.epochs.endOffsetFor(p.leaderEpoch, log.logEndOffset);
      out.set(tpKey(p.topic, p.partition), { errorCode: ErrorCode.NONE, leaderEpoch: e.epoch, endOffset: e.endOffset });
    }
    return out;
  }

  async fetchOffset(topic: string, partition: number, _epoch: number, which: 'earliest' | 'latest'): Promise<number> {
    const log = this.partitions.get(tpKey(topic, partition))!.log;
    return which === 'earliest' ? log.logStartOffset : log.logEndOffset;
  }

  close(): void {
    this.closed = true;
  }
}
