/**
 * The main thread's client of the shards (docs/threads.md step 1, embedded mode: one broker,
 * every partition led here, ISR [self]): PartitionShards (the seam, ../partition-shards.ts) over
 * shard 0 on this thread (the internal topics) and N worker threads. Each partition belongs to
 * one shard (`shardOf`); every call splits its parts by shard, sends each shard one message
 * (posted before the call returns: the seam's arrival-turn contract) and gathers the answers in
 * the caller's order. Produce records cross as windows of shared or moved memory
 * (records-handover.ts), fetched records come back moved. The main thread keeps each log
 * directory's shared files (shared-dir-files.ts). A worker that exits or throws fails only its
 * own calls: its pending parts, and later ones until a new worker for the same shard has opened
 * its logs, are answered NOT_LEADER_OR_FOLLOWER; `exits` says which shard ended and why. The new
 * worker starts as restart-policy.ts says (at once, backed off, or never: then its partitions
 * stay offline), recovers the logs as after an unclean shutdown, and starts from the topics and
 * configs as they are now (every post since the start), not as they were at the broker's start.
 */
import { ErrorCode } from '../../../protocol/errors.js';
import type { TopicInfo } from '../../../metadata/cluster-model.js';
import type { AppendOutcome } from '../../append/leader-appends.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';
import type { LogDirState, LogManager } from '../../../storage/manager/log-manager.js';
import type { ReplicaManager } from '../../replica-manager.js';
import type { LogConfig } from '../../../storage/config.js';
import { silentLogger, type StorageLogger } from '../../../storage/logger.js';
import {
  shardOf,
  type DeleteRecordsPart,
  type DeleteRecordsResult,
  type DescribeProducersResult,
  type EpochEndPart,
  type EpochEndResult,
  type ListOffsetsOptions,
  type ListOffsetsPart,
  type ListOffsetsResult,
  type LogManagerStats,
  type PartitionShards,
  type PartitionState,
  type PartitionStatesOptions,
  type ProduceOptions,
  type ProducePart,
  type TopicPartitionRef,
  type TxnGuardPart,
  type TxnGuardState,
  type TxnMarkerPart,
} from '../partition-shards.js';
import { SharedDirFiles } from './shared-dir-files.js';
import { logManagerSettings } from '../log-manager-options.js';
import { releaseSlotOf } from '../../../storage/cleaner/cleaner-slots.js';
import { newHandoverStats, planHandover, type HandoverStats, type SharedRecordsLender } from './records-handover.js';
import type { ForwardedMethod, FromShard, ToShard } from './shard-protocol.js';
import { cloneableReplicationConfig } from './cloneable-config.js';
import { byShard, failedAs, failedOutcome, logConfigsOf, mergedLogDirs } from './shard-parts.js';
import { fetchAcrossShards, type FetchShardsAccess } from './cross-shard-fetch.js';
import { workerFetchAccess } from './worker-fetch-access.js';
import { localChannel, workerChannel, type ChannelInit, type ShardChannel } from './shard-channels.js';
import { WorkerRestarts, type ShardExit } from './worker-restarts.js';
import { LogManagerStatsSums } from './log-manager-stats-sums.js';
import type { WorkerShardsCluster, WorkerShardsOptions } from './worker-shards-options.js';
import type { RoleMessage } from './shard-roles.js';

export type { WorkerShardsOptions } from './worker-shards-options.js';

/** What every worker of the broker starts from; a restarted one gets the topics and configs of its moment. */
type BaseInit = Omit<ChannelInit, 'index' | 'topics' | 'logConfigs' | 'hadCleanShutdown'>;

/** The messages a worker opening its logs takes (queued until it has): the metadata posts and shutdown; any other call is answered as offline. */
const TAKEN_WHILE_OPENING: ReadonlySet<ToShard['type']> = new Set(['topics', 'deleteTopic', 'shutdown']);

export class WorkerShards implements PartitionShards {
  readonly stats: HandoverStats = newHandoverStats();
  private readonly shards: ShardChannel[] = [];
  private nextId = 1;
  private closing = false;
  private readonly logStats = new LogManagerStatsSums();
  /** The topics as last posted (the store's, since the start): what a restarted worker starts from. */
  private readonly topics = new Map<string, TopicInfo>();
  private restarter!: WorkerRestarts;

  private constructor(
    readonly files: SharedDirFiles,
    private readonly logger: StorageLogger,
    private readonly moveProduceBuffers: boolean,
    private readonly logConfigFor: ((topic: string) => LogConfig | undefined) | undefined,
    private readonly sharedRecords: SharedRecordsLender | undefined,
    private readonly base: BaseInit,
    private readonly cluster: WorkerShardsCluster | undefined,
  ) {}

  /** Locks the log directories, starts shard 0 and the workers, and waits until each has opened its partitions' logs. */
  static async open(opts: WorkerShardsOptions): Promise<WorkerShards> {
    const logger = opts.logger ?? silentLogger;
    const count = 1 + Math.max(1, Math.floor(opts.workers));
    const files = await SharedDirFiles.open(opts.config.logDirs, count, logger);
    const config = { ...cloneableReplicationConfig(opts.config), logDirs: files.logDirs };
    // Each shard cleans, checkpoints and expires its own logs; log.segment.max.open.files is split evenly.
    const logs = opts.logs ? logManagerSettings(opts.logs, count) : undefined;
    const base: BaseInit = {
      shards: count,
      config,
      ...(logs ? { logs } : {}),
      ...(opts.maintenanceIntervalMs !== undefined ? { maintenanceIntervalMs: opts.maintenanceIntervalMs } : {}),
      ...(opts.workerLogLevel !== undefined ? { logLevel: opts.workerLogLevel } : {}),
      ...(opts.workerHeapMb !== undefined ? { heapMb: opts.workerHeapMb } : {}),
      ...(opts.cluster ? { cluster: opts.cluster.init } : {}),
    };
    const slots = logs?.cleanerSlots;
    const that = new WorkerShards(files, logger, opts.moveProduceBuffers ?? true, opts.logConfigFor, opts.sharedRecords, base, opts.cluster);
    for (const t of opts.topics) that.topics.set(t.name, t);
    const ended = (index: number, reason: string): void => {
      // A worker that died while cleaning cannot give its cleaner slot back: the others would wait for it forever.
      if (slots) releaseSlotOf(slots, index);
      that.restarter.ended(index, reason);
    };
    that.restarter = new WorkerRestarts({
      count,
      logger,
      ...(opts.restart ? { timings: opts.restart } : {}),
      start: (index, deleteLogsOf, deletePartitions) => that.startAgain(index, deleteLogsOf, deletePartitions, ended),
      closing: () => that.closing,
      ...(opts.cluster?.restarted ? { restarted: opts.cluster.restarted } : {}),
    });
    for (let index = 0; index < count; index++) {
      const init = that.initFor(index, files.cleanShutdowns());
      that.shards.push(index === 0 ? localChannel(init, files, opts.cluster?.local) : workerChannel(init, files, ended, that.stats, opts.cluster?.main));
    }
    try {
      await Promise.all(that.shards.map((s) => s.ready));
    } catch (err) {
      that.closing = true;
      await that.stopAll();
      throw err;
    }
    // From here a worker that ends is restarted (one that ended before failed the start above).
    that.restarter.markOpened();
    await files.loaded();
    return that;
  }

  /** What shard `index` starts from: the topics as posted so far and their effective configs now. */
  private initFor(index: number, hadCleanShutdown: Record<string, boolean>): ChannelInit {
    const topics = [...this.topics.values()];
    return {
      ...this.base,
      index,
      hadCleanShutdown,
      topics,
      ...(this.logConfigFor ? { logConfigs: logConfigsOf(topics, this.logConfigFor) } : {}),
    };
  }

  /**
   * A new worker for shard `index` (WorkerRestarts decides when), from the topics and configs of
   * this moment and every directory marked unclean: it recovers its logs (recovery points and
   * producer state snapshots from the shared files, then the log) and deletes `deleteLogsOf`'s.
   */
  private startAgain(
    index: number,
    deleteLogsOf: string[],
    deletePartitions: [string, number][],
    ended: (index: number, reason: string) => void,
  ): ShardChannel {
    const unclean = Object.fromEntries(this.files.logDirs.map((d) => [d, false]));
    const init = { ...this.initFor(index, unclean), deleteLogsOf, ...(deletePartitions.length > 0 ? { deletePartitions } : {}) };
    const ch = workerChannel(init, this.files, ended, this.stats, this.cluster?.main);
    // The worker that ended counted flushes the new one starts again from 0: they stay in the sum.
    this.logStats.retire(index);
    this.shards[index] = ch;
    return ch;
  }

  /** Why each shard that ended ended, in order. */
  get exits(): readonly ShardExit[] {
    return this.restarter.exits;
  }

  /** Workers started in place of one that ended (fjord_shard_worker_restarts_total). */
  get restarts(): number {
    return this.restarter.count;
  }

  /** Every shard, shard 0 (this thread's) included. */
  get count(): number {
    return this.shards.length;
  }

  /** The shard that owns the partition (the seam's rule: internal topics on shard 0). */
  shardOf(topic: string, partition: number): number {
    return shardOf(topic, partition, this.shards.length);
  }

  /** Shard 0's logs and partitions, on this thread: the broker's own LogManager and ReplicaManager when it runs on shards. */
  get local(): { logManager: LogManager; replicaManager: ReplicaManager } {
    const host = this.shards[0]!.host!;
    return { logManager: host.logs, replicaManager: host.replicas };
  }

  /** Whether a shard is running (shard 0 always is); a restarted worker still opening its logs is. */
  isAlive(shard: number): boolean {
    return this.shards[shard]!.alive;
  }

  /** Whether a shard serves its partitions now: running and not opening its logs after a restart. */
  isServing(shard: number): boolean {
    return this.shards[shard]!.alive && !this.restarter.isOpening(shard);
  }

  /** Whether a shard's partitions are hosted here: serving, or to be served again once its worker restarts (not given up on). */
  isHosting(shard: number): boolean {
    return this.restarter.isHosting(shard);
  }

  /** Restarts waiting for their backoff (diagnostics, tests: a shutdown cancels them). */
  get restartsWaiting(): number {
    return this.restarter.waiting;
  }

  /** Workers not serving now: ended (waiting for a restart, or given up on) or opening their logs after a restart. */
  get offlineWorkers(): number {
    let n = 0;
    for (let s = 1; s < this.shards.length; s++) if (!this.isServing(s)) n++;
    return n;
  }

  /** Sends one message to a shard; resolves with its answer, or undefined when the shard has ended (or ends first). */
  private call(shard: ShardChannel, message: Exclude<ToShard, { type: 'crash' | 'stall' }>, transfer: ArrayBuffer[] = []): Promise<FromShard | undefined> {
    if (!shard.alive || (this.restarter.isOpening(shard.index) && !TAKEN_WHILE_OPENING.has(message.type))) return Promise.resolve(undefined);
    this.stats.messages++;
    return new Promise((resolve) => {
      shard.pending.set(message.id, resolve);
      shard.send(message, transfer);
    });
  }

  /** `call`, answered undefined (as by a shard that ended) once `deadlineMs` passed; the late answer is dropped. */
  private callWithin(
    deadlineMs: number | undefined,
    shard: ShardChannel,
    message: Exclude<ToShard, { type: 'crash' | 'stall' }>,
  ): Promise<FromShard | undefined> {
    const answer = this.call(shard, message);
    if (deadlineMs === undefined) return answer;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, deadlineMs, undefined);
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }

  /** Topics created or changed (configs, partitions): every live shard opens or reconfigures its partitions' logs before this resolves. */
  async topicsChanged(topics: readonly TopicInfo[]): Promise<void> {
    for (const t of topics) this.topics.set(t.name, t);
    const logConfigs = this.logConfigFor ? logConfigsOf(topics, this.logConfigFor) : undefined;
    await Promise.all(
      this.shards.map((s) => this.call(s, { type: 'topics', id: this.nextId++, topics: [...topics], ...(logConfigs ? { logConfigs } : {}) }).then(failedAs)),
    );
  }

  /** A topic deleted: its logs are closed and deleted by their shards. */
  async topicDeleted(topic: string): Promise<void> {
    this.topics.delete(topic);
    await Promise.all(
      this.shards.map((s, index) => {
        this.restarter.deleting(index, topic);
        return this.call(s, { type: 'deleteTopic', id: this.nextId++, topic }).then((m) => {
          if (m !== undefined) this.restarter.deleteAnswered(index, topic);
          failedAs(m);
        });
      }),
    );
  }

  /**
   * Appends produced batches. The records are handed over as records-handover.ts says: a Buffer
   * that owns its ArrayBuffer is moved to its worker, so the caller must not read it again.
   */
  async produce(parts: readonly ProducePart[], req: ProduceOptions): Promise<AppendOutcome[]> {
    const shardOfPart = parts.map((p) => this.shardOf(p.topic, p.partition));
    const { windows, transfers, shared } = planHandover(
      parts.map((p) => p.records),
      shardOfPart,
      this.stats,
      (s) => s === 0,
      this.moveProduceBuffers,
    );
    const out = new Array<AppendOutcome>(parts.length);
    await Promise.all(
      [...byShard(shardOfPart, (s) => s)].map(async ([s, indexes]) => {
        const held = this.sharedRecords ? shared.get(s) : undefined;
        if (held) for (const memory of held) this.sharedRecords!.retain(memory);
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
              return { topic: p.topic, partition: p.partition, records: windows[i]!, ...(p.verifiedTxn ? { verifiedTxn: p.verifiedTxn } : {}) };
            }),
          },
          transfers.get(s),
        ).finally(() => {
          // Answered (or failed), or the shard ended: it reads the windows no more.
          if (held) for (const memory of held) this.sharedRecords!.release(memory);
        });
        indexes.forEach((i, k) => (out[i] = answer?.type === 'produced' ? answer.outcomes[k]! : failedOutcome(answer)));
      }),
    );
    return out;
  }

  /** Reads for Fetch; results in `targets` order: across shards, within the request's limits (cross-shard-fetch.ts). */
  fetch(targets: readonly FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]> {
    return fetchAcrossShards(targets, params, this.fetchAccess);
  }

  /** What cross-shard-fetch.ts reads and parks through (worker-fetch-access.ts). */
  private readonly fetchAccess: FetchShardsAccess = workerFetchAccess({
    shards: this.shards,
    call: (shard, message) => this.call(shard, message),
    nextId: () => this.nextId++,
    isOpening: (s) => this.restarter.isOpening(s),
    shardOf: (topic, partition) => this.shardOf(topic, partition),
    stats: this.stats,
  });

  /** Cluster mode (shard-roles.ts): a StopReplica deleting a partition is being sent to `shard` (stale until it answers, as `topicDeleted`'s). */
  deletingPartition(shard: number, topic: string, partition: number): void {
    this.restarter.deletingPartition(shard, topic, partition);
  }

  /** Cluster mode: `shard` answered that deletion. */
  partitionDeleteAnswered(shard: number, topic: string, partition: number): void {
    this.restarter.partitionDeleteAnswered(shard, topic, partition);
  }

  /** Cluster mode (shard-roles.ts): one role change or broker list to shard `index`; undefined when it ended or is opening. */
  callShard(index: number, message: RoleMessage): Promise<FromShard | undefined> {
    return this.call(this.shards[index]!, { ...message, id: this.nextId++ });
  }

  /** One of the seam's other calls: split by shard, each shard's InThreadShards answers its parts, `failed` for a shard that ended. */
  private async forward<P extends { topic: string; partition: number }, R>(
    method: ForwardedMethod,
    parts: readonly P[],
    rest: unknown[],
    failed: R,
  ): Promise<R[]> {
    const out = new Array<R>(parts.length);
    await Promise.all(
      [...byShard(parts, (p) => this.shardOf(p.topic, p.partition))].map(async ([s, indexes]) => {
        const answer = await this.call(this.shards[s]!, { type: 'call', id: this.nextId++, method, args: [indexes.map((i) => parts[i]!), ...rest] });
        const results = answer?.type === 'answered' ? (answer.result as R[]) : undefined;
        indexes.forEach((i, k) => (out[i] = results ? results[k]! : failed));
      }),
    );
    return out;
  }

  listOffsets(parts: readonly ListOffsetsPart[], opts: ListOffsetsOptions): Promise<ListOffsetsResult[]> {
    return this.forward('listOffsets', parts, [opts], {
      errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
      found: false,
      offset: -1,
      timestamp: -1,
      leaderEpoch: -1,
    });
  }

  offsetsForLeaderEpoch(parts: readonly EpochEndPart[], fromReplica: boolean): Promise<EpochEndResult[]> {
    return this.forward('offsetsForLeaderEpoch', parts, [fromReplica], { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderEpoch: -1, endOffset: -1 });
  }

  deleteRecords(parts: readonly DeleteRecordsPart[], timeoutMs: number): Promise<DeleteRecordsResult[]> {
    return this.forward('deleteRecords', parts, [timeoutMs], { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1 });
  }

  writeTxnMarkers(parts: readonly TxnMarkerPart[]): Promise<number[]> {
    return this.forward('writeTxnMarkers', parts, [], ErrorCode.NOT_LEADER_OR_FOLLOWER as number);
  }

  describeProducers(parts: readonly TopicPartitionRef[]): Promise<DescribeProducersResult[]> {
    return this.forward('describeProducers', parts, [], { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, activeProducers: [] });
  }

  txnGuardStates(parts: readonly TxnGuardPart[]): Promise<TxnGuardState[]> {
    return this.forward('txnGuardStates', parts, [], { leader: false, held: false, leaderEpoch: -1 });
  }

  grantTxnGuards(parts: readonly (TxnGuardPart & { leaderEpoch: number })[]): Promise<number[]> {
    return this.forward('grantTxnGuards', parts, [], ErrorCode.NOT_LEADER_OR_FOLLOWER as number);
  }

  /** Every directory with every live shard's logs in it; a directory is online when every shard has it online. */
  async logDirs(): Promise<LogDirState[]> {
    const answers = await Promise.all(this.shards.map((s) => this.call(s, { type: 'call', id: this.nextId++, method: 'logDirs', args: [] })));
    return mergedLogDirs(answers.map((a) => (a?.type === 'answered' ? (a.result as LogDirState[]) : [])));
  }

  /**
   * One message per shard that owns a partition of `filter` (every shard without one); a shard
   * that ended answers nothing, so its partitions are left out like any partition not hosted.
   */
  async partitionStates(filter?: readonly TopicPartitionRef[], opts: PartitionStatesOptions = {}): Promise<PartitionState[]> {
    const asks = filter
      ? [...byShard(filter, (p) => this.shardOf(p.topic, p.partition))].map(([s, indexes]) => ({ shard: s, parts: indexes.map((i) => filter[i]!) }))
      : this.shards.map((_, s) => ({ shard: s, parts: undefined }));
    const { deadlineMs, ...sent } = opts;
    const answers = await Promise.all(
      asks.map(({ shard, parts }) =>
        this.callWithin(deadlineMs, this.shards[shard]!, { type: 'call', id: this.nextId++, method: 'partitionStates', args: [parts, sent] }),
      ),
    );
    const states = answers.flatMap((a) => (a?.type === 'answered' ? (a.result as PartitionState[]) : []));
    if (!filter) return states;
    const order = new Map(filter.map((p, i) => [`${p.topic}\0${p.partition}`, i]));
    return states.sort((a, b) => order.get(`${a.topic}\0${a.partition}`)! - order.get(`${b.topic}\0${b.partition}`)!);
  }

  /**
   * One message per shard; a shard that does not answer is counted by its last answer, and a
   * replaced worker's flushes stay in the sum (log-manager-stats-sums.ts: counters never go back).
   */
  async logManagerStats(opts: { deadlineMs?: number } = {}): Promise<LogManagerStats[]> {
    const asked = [...this.shards];
    const answers = await Promise.all(
      asked.map((s) => this.callWithin(opts.deadlineMs, s, { type: 'call', id: this.nextId++, method: 'logManagerStats', args: [] })),
    );
    for (const [i, a] of answers.entries()) {
      // A worker replaced while this was asked: its flushes are retired already, its answer must not stand in for the new one.
      if (a?.type === 'answered' && this.shards[i] === asked[i]) this.logStats.answered(i, a.result as LogManagerStats[]);
    }
    return this.logStats.all(this.shards.length);
  }

  /** Clean shutdown: each shard snapshots producer state and closes its logs, then the checkpoint files, the marker, the locks. */
  async shutdown(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.restarter.cancelWaiting();
    await this.stopAll();
  }

  private async stopAll(): Promise<void> {
    await Promise.all(
      this.shards.map(async (s) => {
        const answer = await this.call(s, { type: 'shutdown', id: this.nextId++ });
        if (answer?.type === 'failed') this.logger.warn(`shard ${s.index} did not shut down cleanly: ${answer.message}`);
        await s.close();
      }),
    );
    await this.files.shutdown();
  }

  /** Tests: makes a worker throw an uncaught error, or (`'heap'`) allocate until its heap is exhausted (shard 0, on this thread, ignores it). */
  crash(shard: number, how: 'throw' | 'heap' = 'throw'): void {
    this.shards[shard]!.send({ type: 'crash', how });
  }

  /** Tests: blocks a worker's event loop for `ms` (shard 0, on this thread, ignores it). */
  stall(shard: number, ms: number): void {
    this.shards[shard]!.send({ type: 'stall', ms });
  }

  /** Tests: the worker thread of a shard (undefined for shard 0). */
  workerOf(shard: number) {
    return this.shards[shard]!.worker;
  }
}
