/**
 * The main thread's client of N shard workers (docs/threads.md step 1, embedded mode: one
 * broker, every partition led here, ISR [self]). Each partition belongs to one worker
 * (shard-of.ts); `produce` splits a request's parts by shard, sends each shard one message with
 * its parts' records as windows of shared or moved memory (records-handover.ts), and gathers the
 * outcomes in the caller's order; `fetch` likewise, the records coming back in moved buffers.
 * The main thread keeps each log directory's shared files (shared-dir-files.ts). A worker that
 * exits or throws fails only its own calls: its pending and later parts are answered
 * NOT_LEADER_OR_FOLLOWER, and `exits` says which shard ended and why.
 */
import { Worker } from 'node:worker_threads';
import { ErrorCode } from '../../../protocol/errors.js';
import type { TopicInfo } from '../../../metadata/cluster-model.js';
import type { ReplicationConfig } from '../../replication-config.js';
import type { AppendOutcome, AppendRequest } from '../../append/leader-appends.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';
import type { VerifiedTxnProducer } from '../../append/txn-verification-guards.js';
import { silentLogger, type StorageLogger } from '../../../storage/logger.js';
import { shardOf } from './shard-of.js';
import { SharedDirFiles } from './shared-dir-files.js';
import { bufferOf, newHandoverStats, planHandover, type HandoverStats } from './records-handover.js';
import type { FromShard, ShardInit, ToShard } from './shard-protocol.js';
import { cloneableReplicationConfig } from './cloneable-config.js';

export interface WorkerShardsOptions {
  config: ReplicationConfig;
  /** Worker threads (num.io.threads). */
  shards: number;
  /** The topics known at start (the metadata store's). */
  topics: readonly TopicInfo[];
  logger?: StorageLogger;
  /** The workers' log level (pino); default warn. */
  workerLogLevel?: string;
  checkpointIntervalMs?: number;
  retentionCheckIntervalMs?: number;
  cleanerEnabled?: boolean;
  maintenanceIntervalMs?: number;
}

export interface ProducePartInput {
  topic: string;
  partition: number;
  records: Buffer | null;
  verifiedTxn?: VerifiedTxnProducer;
}

/** Why a shard ended (an uncaught error's message, or its exit code). */
export interface ShardExit {
  shard: number;
  reason: string;
}

interface Shard {
  index: number;
  worker: Worker;
  /** Calls waiting for an answer, by id: resolved with the answer, or undefined once the worker has ended. */
  pending: Map<number, (m: FromShard | undefined) => void>;
  alive: boolean;
  ended: Promise<void>;
}

const NOT_LEADER: AppendOutcome = {
  errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  errorMessage: null,
  baseOffset: -1,
  logAppendTime: -1,
  logStartOffset: -1,
  recordErrors: [],
};

function spawnShard(init: ShardInit & { logLevel?: string }): Worker {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    // Under tsx (tests, benches) the worker is TypeScript too and Node 20 does not give a worker
    // its parent's `--import tsx` hooks: register them there first (as zk-worker-backend.ts does).
    const entry = new URL('./shard-worker.ts', here).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(boot, { eval: true, workerData: init });
  }
  return new Worker(new URL('./shard-worker.js', here), { workerData: init });
}

export class WorkerShards {
  readonly stats: HandoverStats = newHandoverStats();
  readonly exits: ShardExit[] = [];
  private nextId = 1;
  private closing = false;

  private constructor(
    private readonly shards: Shard[],
    readonly files: SharedDirFiles,
    private readonly logger: StorageLogger,
  ) {}

  /** Locks the log directories, starts the workers and waits until each has opened its partitions' logs. */
  static async open(opts: WorkerShardsOptions): Promise<WorkerShards> {
    const logger = opts.logger ?? silentLogger;
    const count = Math.max(1, Math.floor(opts.shards));
    const files = await SharedDirFiles.open(opts.config.logDirs, count, logger);
    const config = { ...cloneableReplicationConfig(opts.config), logDirs: files.logDirs };
    const that = new WorkerShards([], files, logger);
    const shards = that.shards;
    const ready: Promise<void>[] = [];
    for (let index = 0; index < count; index++) {
      const worker = spawnShard({
        index,
        shards: count,
        config,
        hadCleanShutdown: files.cleanShutdowns(),
        topics: [...opts.topics],
        ...(opts.checkpointIntervalMs !== undefined ? { checkpointIntervalMs: opts.checkpointIntervalMs } : {}),
        ...(opts.retentionCheckIntervalMs !== undefined ? { retentionCheckIntervalMs: opts.retentionCheckIntervalMs } : {}),
        ...(opts.cleanerEnabled !== undefined ? { cleanerEnabled: opts.cleanerEnabled } : {}),
        ...(opts.maintenanceIntervalMs !== undefined ? { maintenanceIntervalMs: opts.maintenanceIntervalMs } : {}),
        ...(opts.workerLogLevel !== undefined ? { logLevel: opts.workerLogLevel } : {}),
      });
      let markReady!: () => void;
      let failStart!: (err: Error) => void;
      ready.push(
        new Promise<void>((resolve, reject) => {
          markReady = resolve;
          failStart = reject;
        }),
      );
      const shard: Shard = { index, worker, pending: new Map(), alive: true, ended: new Promise((r) => worker.once('exit', () => r())) };
      worker.on('message', (m: FromShard) => {
        if (m.type === 'ready') return markReady();
        if (m.type === 'checkpoints') return void files.report(index, m.dir, m.entries);
        if (m.type === 'closed') return files.closed(index, m.dir, m.unclean, m.checkpointed);
        const answer = shard.pending.get(m.id);
        shard.pending.delete(m.id);
        answer?.(m);
      });
      let reason = '';
      worker.on('error', (err) => (reason = err.message));
      worker.once('exit', (code) => {
        shard.alive = false;
        failStart(new Error(`shard worker ${index} ended while opening its logs: ${reason || `exit code ${code}`}`));
        for (const answer of shard.pending.values()) answer(undefined);
        shard.pending.clear();
        if (!that.closing) {
          that.exits.push({ shard: index, reason: reason || `exit code ${code}` });
          logger.error(`shard worker ${index} ended (${reason || `exit code ${code}`}): its partitions are offline`);
        }
      });
      shards.push(shard);
    }
    try {
      await Promise.all(ready);
    } catch (err) {
      that.closing = true;
      await Promise.all(shards.map((s) => s.worker.terminate()));
      await files.shutdown();
      throw err;
    }
    await files.loaded();
    return that;
  }

  get count(): number {
    return this.shards.length;
  }

  /** The shard that owns the partition. */
  shardOf(topic: string, partition: number): number {
    return shardOf(topic, partition, this.shards.length);
  }

  /** The worker of a shard (tests: terminate it). */
  workerOf(shard: number): Worker {
    return this.shards[shard]!.worker;
  }

  /** Whether a shard's worker is running. */
  isAlive(shard: number): boolean {
    return this.shards[shard]!.alive;
  }

  /** Sends one message to a shard; resolves with its answer, or undefined when the worker has ended (or ends first). */
  private call(shard: Shard, message: ToShard, transfer: ArrayBuffer[] = []): Promise<FromShard | undefined> {
    if (!shard.alive) return Promise.resolve(undefined);
    this.stats.messages++;
    return new Promise((resolve) => {
      shard.pending.set((message as { id: number }).id, resolve);
      shard.worker.postMessage(message, transfer);
    });
  }

  /** Topics created or changed (configs, partitions): every live shard opens or reconfigures its partitions' logs before this resolves. */
  async topicsChanged(topics: readonly TopicInfo[]): Promise<void> {
    await Promise.all(this.shards.map((s) => this.call(s, { type: 'topics', id: this.nextId++, topics: [...topics] }).then(failedAs)));
  }

  /** A topic deleted: its logs are closed and deleted by their shards. */
  async topicDeleted(topic: string): Promise<void> {
    await Promise.all(this.shards.map((s) => this.call(s, { type: 'deleteTopic', id: this.nextId++, topic }).then(failedAs)));
  }

  /**
   * Appends produced batches (the PartitionShards seam's produce). The records are handed over
   * as records-handover.ts says: a Buffer that owns its ArrayBuffer is moved, so the caller must
   * not read it again. Outcomes are in `parts` order.
   */
  async produce(parts: readonly ProducePartInput[], req: AppendRequest): Promise<AppendOutcome[]> {
    const shardOfPart = parts.map((p) => this.shardOf(p.topic, p.partition));
    const { windows, transfers } = planHandover(
      parts.map((p) => p.records),
      shardOfPart,
      this.stats,
    );
    const byShard = new Map<number, number[]>();
    shardOfPart.forEach((s, i) => {
      let list = byShard.get(s);
      if (!list) byShard.set(s, (list = []));
      list.push(i);
    });
    const out = new Array<AppendOutcome>(parts.length);
    await Promise.all(
      [...byShard].map(async ([s, indexes]) => {
        const answer = await this.call(
          this.shards[s]!,
          {
            type: 'produce',
            id: this.nextId++,
            requiredAcks: req.requiredAcks,
            origin: req.origin,
            ...(req.produceVersion !== undefined ? { produceVersion: req.produceVersion } : {}),
            ...(req.timeoutMs !== undefined ? { timeoutMs: req.timeoutMs } : {}),
            ...(req.internalTopicsAllowed ? { internalTopicsAllowed: true } : {}),
            parts: indexes.map((i) => {
              const p = parts[i]!;
              return {
                topic: p.topic,
                partition: p.partition,
                records: windows[i]!,
                ...((p.verifiedTxn ?? req.verifiedTxn) ? { verifiedTxn: p.verifiedTxn ?? req.verifiedTxn } : {}),
              };
            }),
          },
          transfers.get(s),
        );
        indexes.forEach((i, k) => (out[i] = answer?.type === 'produced' ? answer.outcomes[k]! : failedOutcome(answer)));
      }),
    );
    return out;
  }

  /** Reads for Fetch (the seam's fetch): each shard reads (and long-polls) its partitions; results in `targets` order. */
  async fetch(targets: readonly FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]> {
    const byShard = new Map<number, number[]>();
    targets.forEach((t, i) => {
      const s = this.shardOf(t.topic, t.partition);
      let list = byShard.get(s);
      if (!list) byShard.set(s, (list = []));
      list.push(i);
    });
    const out = new Array<PartitionFetchResult>(targets.length);
    await Promise.all(
      [...byShard].map(async ([s, indexes]) => {
        const answer = await this.call(this.shards[s]!, { type: 'fetch', id: this.nextId++, targets: indexes.map((i) => targets[i]!), params });
        indexes.forEach((i, k) => {
          const r = answer?.type === 'fetched' ? answer.results[k] : undefined;
          out[i] = r
            ? { ...r, records: bufferOf(r.records) }
            : { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, records: null };
        });
      }),
    );
    return out;
  }

  /** Clean shutdown: each worker snapshots producer state and closes its logs, then the checkpoint files, the marker, the locks. */
  async shutdown(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await Promise.all(
      this.shards.map(async (s) => {
        const answer = await this.call(s, { type: 'shutdown', id: this.nextId++ });
        if (answer?.type === 'failed') this.logger.warn(`shard worker ${s.index} did not shut down cleanly: ${answer.message}`);
        await s.worker.terminate();
        await s.ended;
      }),
    );
    await this.files.shutdown();
  }

  /** Tests: makes a shard's worker throw an uncaught error. */
  crash(shard: number): void {
    this.shards[shard]!.worker.postMessage({ type: 'crash' } satisfies ToShard);
  }
}

function failedAs(m: FromShard | undefined): void {
  if (m?.type === 'failed') throw new Error(m.message);
}

function failedOutcome(m: FromShard | undefined): AppendOutcome {
  return m?.type === 'failed' ? { ...NOT_LEADER, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: m.message } : NOT_LEADER;
}
