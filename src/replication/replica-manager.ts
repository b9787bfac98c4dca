/**
 * The data plane's owner: one Partition per (topic, partition) this broker hosts. In embedded
 * mode it is kept in step with the metadata store (logs are created for new topics and
 * partitions, reconfigured when topic configs change, deleted with their topic) and every
 * partition is led here. In cluster mode the controller decides, as in Kafka: LeaderAndIsr opens
 * the log of every partition whose replicas include this broker, as leader or follower;
 * StopReplica closes (and deletes) them; metadata changes only reconfigure open logs. Produce
 * appends (leader-appends.ts) and Fetch reads (fetch-reader.ts) go through here; so do the admin
 * APIs that need a log (DeleteRecords, DescribeLogDirs...).
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/primitives/index.js';
import type { BrokerConfig } from '../server/config/index.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { PartitionState, TopicInfo } from '../metadata/cluster-model.js';
import { forEachConcurrently, type LogManager } from '../storage/log-manager.js';
import type { LogConfig } from '../storage/config.js';
import { tpKey } from '../storage/checkpoints.js';
import { brokerLogDefaults, topicLogConfig } from './log-config.js';
import { Partition, type IsrWriter } from './partition.js';
import { DelayedProduce } from './delayed-produce.js';
import { appendRecords, appendTxnMarker, type AppendContext, type AppendOutcome, type AppendRequest, type TxnMarker, type TxnMarkerListener } from './leader-appends.js';
import { DelayedDeleteRecords } from './delayed-delete-records.js';
import { messageOf } from './errors.js';
import { fetchRecords, type FetchParams, type FetchTarget, type PartitionFetchResult } from './fetch-reader.js';
import type { DelayedFetch } from './delayed-fetch.js';
import { ProducerIdManager } from './producer-id-manager.js';
import { FetchSessionCache } from './fetch-session.js';
import type { ReplicaFetcherManager } from './fetcher/manager.js';
import type { InterBrokerInterceptor } from '../client/inter-broker-interceptor.js';

export type { AppendOrigin, AppendRequest, AppendOutcome, TxnMarker, TxnMarkerListener } from './leader-appends.js';

export interface ReplicaManagerOptions {
  config: BrokerConfig;
  metadata: MetadataStore;
  logManager: LogManager;
  logger: Logger;
  /** How often producer state snapshots and producer expiry run (ms). */
  maintenanceIntervalMs?: number;
  /**
   * The effective log config of a topic (topic overrides over dynamic and static broker
   * configs), when an admin service knows more than the static defaults.
   */
  logConfigFor?: (topic: string) => LogConfig | undefined;
  /**
   * Cluster mode: logs are opened and closed by the controller's LeaderAndIsr/StopReplica
   * (becomeLeaderOrFollower, stopReplicas), never because a topic appeared in or left the image.
   */
  controllerManaged?: boolean;
  /**
   * Cluster mode: where the leaders' ISR changes are written (ZooKeeper). Without one (embedded
   * mode) the ISR never changes: it is [self].
   */
  isrWriter?: IsrWriter;
  /** Test seam on the replica fetchers' requests to leaders (see InterBrokerInterceptor). */
  interBrokerInterceptor?: InterBrokerInterceptor;
  /**
   * Cluster mode: the inter-broker endpoint of a live broker (from the metadata image). With it,
   * followers fetch from their leaders (replica fetchers, loaded only then).
   */
  brokerEndpoint?: (brokerId: number) => { host: string; port: number } | undefined;
}

/** One partition of a LeaderAndIsr request, every version normalised. */
export interface LeaderAndIsrPartition {
  topic: string;
  /** undefined when the request carried none (before v5). */
  topicId: string | undefined;
  partition: number;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  replicas: number[];
  /** zkVersion of the partition state znode (LeaderAndIsr's partition_epoch / zkVersion); -1 when unknown. */
  partitionEpoch?: number;
  /** The controller epoch that wrote the state. */
  controllerEpoch?: number;
}

/** One partition of a StopReplica request; leaderEpoch -1 (none given) or -2 (topic being deleted) always applies. */
export interface StopReplicaPartition {
  topic: string;
  partition: number;
  leaderEpoch: number;
  deletePartition: boolean;
}

/** Kafka's LeaderAndIsr.NoEpoch and EpochDuringDelete. */
const NO_EPOCH = -1;
const EPOCH_DURING_DELETE = -2;

/** Partitions of one topic whose logs are opened at the same time. */
const OPEN_CONCURRENCY = 8;
/** How long a follower's fetch parks while a partition it has not fetched yet was just led here. */
const JOIN_POLL_MS = 20;
/** Recently led partitions are forgotten after this long, whatever their followers do. */
const JOIN_WINDOW_MAX_MS = 60_000;

export class ReplicaManager {
  private readonly partitions = new Map<string, Partition>();
  private readonly byTopic = new Map<string, Set<Partition>>();
  /**
   * Partitions this broker took the lead of recently (when), while some follower has not fetched
   * them yet: that follower's fetches do not park for long (see replicaWaitMs).
   */
  private joining: { p: Partition; at: number }[] = [];
  /** Topic id -> name of the topics with a partition hosted here (LeaderAndIsr's ids). */
  private readonly hostedTopicIds = new Map<string, string>();
  private readonly waitingFetches = new Set<DelayedFetch>();
  private readonly waitingProduces = new Set<DelayedProduce>();
  private isrTimer: NodeJS.Timeout | undefined;
  /** KIP-227 incremental fetch sessions of consumers on this broker. */
  readonly fetchSessions = new FetchSessionCache();
  private syncChain: Promise<unknown> = Promise.resolve();
  /** Syncs queued on the chain and not started, by topic. */
  private readonly queuedSyncs = new Map<string, Promise<void>>();
  private readonly logDefaults: LogConfig;
  private readonly brokerId: number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Cluster mode's replica fetchers (undefined in embedded mode, which never follows). */
  private fetchers: ReplicaFetcherManager | undefined;

  private constructor(
    private readonly opts: ReplicaManagerOptions,
    readonly producerIds: ProducerIdManager,
  ) {
    this.logDefaults = brokerLogDefaults(opts.config);
    this.brokerId = opts.config.brokerId;
  }

  get logManager(): LogManager {
    return this.opts.logManager;
  }

  /** Opens partitions for every topic led here and follows metadata changes from then on. */
  static async start(opts: ReplicaManagerOptions): Promise<ReplicaManager> {
    const ids = await ProducerIdManager.open(opts.config.logDirs[0]!);
    const rm = new ReplicaManager(opts, ids);
    if (opts.controllerManaged && opts.brokerEndpoint) rm.fetchers = await ReplicaManager.createFetchers(opts, opts.brokerEndpoint);
    for (const t of opts.metadata.topics()) await rm.syncTopic(t.name);
    // Cluster mode starts with an empty image: the controller's LeaderAndIsr brings the logs back.
    for (const log of opts.controllerManaged ? [] : opts.logManager.allLogs()) {
      if (!opts.metadata.topic(log.topic)) opts.logger.warn({ log: log.name }, 'log of a topic unknown to metadata is left untouched');
    }
    opts.metadata.onChange((topic) => void rm.syncTopic(topic).catch((err) => opts.logger.error({ err, topic }, 'syncing logs with metadata failed')));
    const every = opts.maintenanceIntervalMs ?? 60_000;
    rm.timer = setInterval(() => void rm.maintain(), every);
    rm.timer.unref();
    if (opts.isrWriter) {
      // Kafka's isr-expiration task: every replica.lag.time.max.ms / 2.
      rm.isrTimer = setInterval(() => rm.maybeShrinkIsr(Date.now()), Math.max(10, Math.floor(opts.config.replicaLagTimeMaxMs / 2)));
      rm.isrTimer.unref();
    }
    return rm;
  }

  private static async createFetchers(opts: ReplicaManagerOptions, endpointOf: (brokerId: number) => { host: string; port: number } | undefined): Promise<ReplicaFetcherManager> {
    const { ReplicaFetcherManager } = await import('./fetcher/manager.js');
    const c = opts.config;
    return new ReplicaFetcherManager({
      config: {
        brokerId: c.brokerId,
        numFetchers: c.numReplicaFetchers,
        fetchMaxBytes: c.replicaFetchMaxBytes,
        fetchResponseMaxBytes: c.replicaFetchResponseMaxBytes,
        fetchMinBytes: c.replicaFetchMinBytes,
        fetchWaitMaxMs: c.replicaFetchWaitMaxMs,
        fetchBackoffMs: c.replicaFetchBackoffMs,
        socketTimeoutMs: c.replicaSocketTimeoutMs,
      },
      logger: opts.logger.child({ component: 'replica-fetcher' }),
      endpointOf,
      ...(c.interBrokerSecurity ? { security: c.interBrokerSecurity } : {}),
      ...(opts.interBrokerInterceptor ? { interceptor: opts.interBrokerInterceptor } : {}),
    });
  }

  /** The replica fetchers (cluster mode), for tests and diagnostics. */
  get replicaFetchers(): ReplicaFetcherManager | undefined {
    return this.fetchers;
  }

  /** The partition of `topic` hosted here (leader, or follower in cluster mode), if its log is open. */
  getPartition(topic: string, partition: number): Partition | undefined {
    return this.partitions.get(tpKey(topic, partition));
  }

  /**
   * The topic a hosted partition's id names. Replica fetches name topics by id, and a follower
   * fetches as soon as its LeaderAndIsr is processed, usually before the controller's
   * UpdateMetadata (sent after LeaderAndIsr) has given the leader's metadata image the new topic's
   * id: the leader knows it from its own LeaderAndIsr already. Without this the follower's first
   * fetch is answered UNKNOWN_TOPIC_ID and it backs off replica.fetch.backoff.ms (1 s), which
   * stalls every acks=all produce to a new topic for that long.
   */
  hostedTopicName(topicId: string): string | undefined {
    const name = this.hostedTopicIds.get(topicId);
    // Only while a partition of that name still has that id (not a deleted and re-created topic's).
    for (const p of this.byTopic.get(name ?? '') ?? []) if (p.topicId === topicId) return name;
    return undefined;
  }

  private noteTopicId(p: Partition): void {
    if (p.topicId && p.topicId !== ZERO_UUID) this.hostedTopicIds.set(p.topicId, p.topic);
  }

  partitionsOf(topic: string): Partition[] {
    return [...(this.byTopic.get(topic) ?? [])];
  }

  allPartitions(): Partition[] {
    return [...this.partitions.values()];
  }

  /**
   * Brings the logs of `topic` in line with metadata: creates/opens the logs of partitions led
   * here (topic config over broker defaults), applies config changes, deletes logs of a deleted
   * (or deleted and re-created) topic. Admin handlers await this after changing a topic so the
   * logs exist before they answer. Calls are serialised.
   */
  syncTopic(topic: string): Promise<void> {
    // A sync of this topic queued and not started yet will read metadata when it runs: callers
    // share it (produces to a topic whose logs are being opened would otherwise queue one each).
    const queued = this.queuedSyncs.get(topic);
    if (queued) return queued;
    const run = () => {
      this.queuedSyncs.delete(topic);
      return this.syncTopicNow(topic);
    };
    const p = this.syncChain.then(run, run);
    this.queuedSyncs.set(topic, p);
    this.syncChain = p.catch(() => undefined);
    return p;
  }

  private async syncTopicNow(name: string): Promise<void> {
    if (this.stopped) return;
    if (this.opts.controllerManaged) return this.reconfigureTopic(name);
    const info = this.opts.metadata.topic(name);
    const current = this.byTopic.get(name) ?? new Set<Partition>();
    const stale = [...current].filter((p) => !info || p.topicId !== info.topicId);
    for (const p of stale) await this.dropPartition(p, true);
    if (!info) return;
    let cfg: LogConfig;
    try {
      cfg = this.opts.logConfigFor?.(name) ?? topicLogConfig(this.logDefaults, info.configs);
    } catch (err) {
      this.opts.logger.warn({ topic: name, err: messageOf(err) }, 'invalid topic config; using broker defaults');
      cfg = this.logDefaults;
    }
    const toOpen: PartitionState[] = [];
    for (const ps of info.partitions) {
      const existing = this.getPartition(name, ps.partition);
      if (ps.leader !== this.brokerId) {
        if (existing) await this.dropPartition(existing, false);
        continue;
      }
      if (existing) {
        existing.leaderEpoch = ps.leaderEpoch;
        existing.log.updateConfig(cfg);
        continue;
      }
      toOpen.push(ps);
    }
    // A few at once: opening a log is a handful of small file operations, bound by their latency.
    // The first failure stops taking new ones and is thrown once those in flight are done.
    let failure: { err: unknown } | undefined;
    await forEachConcurrently(toOpen, OPEN_CONCURRENCY, async (ps) => {
      // Shutting down: stop opening logs (a topic may have thousands), SIGTERM must not wait for them.
      if (failure || this.stopped) return;
      try {
        await this.openPartition(info, ps.partition, ps.leaderEpoch, cfg);
      } catch (err) {
        failure ??= { err };
      }
    });
    if (failure) throw failure.err;
    if (this.stopped) return;
    // Partitions removed from metadata: only the undo of a CreatePartitions that failed part-way
    // does that (Kafka never shrinks a topic), so their logs go too.
    const count = info.partitions.length;
    for (const p of this.byTopic.get(name) ?? []) {
      if (p.partition >= count) await this.dropPartition(p, true);
    }
  }

  private logConfigOf(topic: string, overrides: Record<string, string>): LogConfig {
    try {
      return this.opts.logConfigFor?.(topic) ?? topicLogConfig(this.logDefaults, overrides);
    } catch (err) {
      this.opts.logger.warn({ topic, err: messageOf(err) }, 'invalid topic config; using broker defaults');
      return this.logDefaults;
    }
  }

  /** Cluster mode's sync: the image only changes the configs of the logs open here. */
  private reconfigureTopic(name: string): void {
    const info = this.opts.metadata.topic(name);
    const open = this.byTopic.get(name);
    if (!info || !open) return;
    const cfg = this.logConfigOf(name, info.configs);
    for (const p of open) p.log.updateConfig(cfg);
  }

  private async openPartition(info: Pick<TopicInfo, 'name' | 'topicId'>, partition: number, leaderEpoch: number, cfg: LogConfig): Promise<Partition> {
    const lm = this.opts.logManager;
    let log = lm.getLog(info.name, partition);
    const created = !log;
    if (log) log.updateConfig(cfg);
    else log = await lm.createLog(info.name, partition, cfg);
    let p: Partition;
    // Cluster mode: only what the checkpoint says was replicated is committed; a single broker's whole log is.
    const initialHw = this.opts.controllerManaged ? (lm.checkpointedHighWatermark(info.name, partition) ?? 0) : undefined;
    try {
      p = await Partition.open(log, info.topicId, leaderEpoch, (part) => lm.updateHighWatermark(part.topic, part.partition, part.highWatermark), initialHw);
    } catch (err) {
      // A log created just now for nothing: remove it rather than leave a half-made partition behind.
      if (created) await lm.deleteLog(info.name, partition).catch(() => undefined);
      throw err;
    }
    p.isrWriter = this.opts.isrWriter;
    // Embedded: led here, ISR = replicas = [self]. Cluster mode: LeaderAndIsr says next (makeLeader/makeFollower).
    if (this.opts.controllerManaged) p.leaderId = this.brokerId;
    else await p.makeLeader(this.brokerId, leaderEpoch);
    lm.updateHighWatermark(info.name, partition, p.highWatermark);
    this.partitions.set(tpKey(info.name, partition), p);
    let set = this.byTopic.get(info.name);
    if (!set) this.byTopic.set(info.name, (set = new Set()));
    set.add(p);
    this.noteTopicId(p);
    return p;
  }

  /**
   * LeaderAndIsr (Kafka's ReplicaManager.becomeLeaderOrFollower), the controller epoch already
   * checked: per partition, a leader epoch lower than the local one is fenced
   * (FENCED_LEADER_EPOCH, nothing applied; an equal one is a re-send and applied again); a
   * partition whose replicas do not include this broker is UNKNOWN_TOPIC_OR_PARTITION; otherwise
   * its log is opened (created when missing) and it becomes leader or follower. Returns the error
   * per partition, keyed by tpKey. Serialised with the metadata syncs.
   */
  becomeLeaderOrFollower(states: readonly LeaderAndIsrPartition[], configsOf: (topic: string) => Record<string, string>): Promise<Map<string, number>> {
    const run = () => this.becomeLeaderOrFollowerNow(states, configsOf);
    const p = this.syncChain.then(run, run);
    this.syncChain = p.catch(() => undefined);
    return p;
  }

  private async becomeLeaderOrFollowerNow(states: readonly LeaderAndIsrPartition[], configsOf: (topic: string) => Record<string, string>): Promise<Map<string, number>> {
    const errors = new Map<string, number>();
    const accepted: LeaderAndIsrPartition[] = [];
    for (const s of states) {
      const key = tpKey(s.topic, s.partition);
      const existing = this.partitions.get(key);
      if (existing && s.topicId && existing.topicId && existing.topicId !== s.topicId) errors.set(key, ErrorCode.INCONSISTENT_TOPIC_ID);
      else if (existing && s.leaderEpoch < existing.leaderEpoch) errors.set(key, ErrorCode.FENCED_LEADER_EPOCH);
      else if (existing && s.leaderEpoch === existing.leaderEpoch && (s.partitionEpoch ?? -1) >= 0 && (s.partitionEpoch ?? -1) < existing.partitionEpoch) {
        // Same leader epoch, older partition state (zkVersion) than this replica knows, say its own
        // ISR change: a controller's resend read before that write. Skipped, as Kafka's
        // Partition.makeLeader/makeFollower do, or it would undo the change.
        this.opts.logger.info({ topic: s.topic, partition: s.partition, partitionEpoch: s.partitionEpoch, known: existing.partitionEpoch }, 'LeaderAndIsr skipped: older partition epoch than this replica knows');
      }
      else if (!s.replicas.includes(this.brokerId)) errors.set(key, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      else accepted.push(s);
    }
    await forEachConcurrently(accepted, OPEN_CONCURRENCY, async (s) => {
      const key = tpKey(s.topic, s.partition);
      if (this.stopped) {
        errors.set(key, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        return;
      }
      try {
        const existing = this.partitions.get(key);
        // A follower's log opened now starts from its checkpointed high watermark, as Kafka's does.
        const checkpointedHw = existing ? undefined : this.opts.logManager.checkpointedHighWatermark(s.topic, s.partition);
        const p = existing ?? (await this.openPartition({ name: s.topic, topicId: s.topicId ?? '' }, s.partition, s.leaderEpoch, this.logConfigOf(s.topic, configsOf(s.topic))));
        if (s.topicId && !p.topicId) {
          p.topicId = s.topicId;
          this.noteTopicId(p);
        }
        const partitionEpoch = s.partitionEpoch ?? -1;
        const controllerEpoch = s.controllerEpoch ?? -1;
        if (s.leader === this.brokerId) {
          // Stop fetching first: the fetcher's last append is done before this broker leads.
          await this.fetchers?.removeFetcherForPartitions([key]);
          await p.makeLeader(this.brokerId, s.leaderEpoch, s.isr, s.replicas, partitionEpoch, controllerEpoch);
          this.noteNewLeadership(p);
        } else {
          const restart = p.isLeader || p.leaderId !== s.leader || p.leaderEpoch !== s.leaderEpoch || !this.fetchers?.isFetching(s.topic, s.partition);
          if (restart) await this.fetchers?.removeFetcherForPartitions([key]);
          p.makeFollower(s.leader, s.leaderEpoch, s.isr, s.replicas, partitionEpoch, controllerEpoch);
          if (checkpointedHw !== undefined && this.fetchers) p.setFollowerHighWatermark(checkpointedHw);
          if (restart) await this.startFetching(p);
        }
        errors.set(key, ErrorCode.NONE);
      } catch (err) {
        this.opts.logger.error({ topic: s.topic, partition: s.partition, err: messageOf(err) }, 'cannot open the log of a partition LeaderAndIsr assigned here');
        errors.set(key, ErrorCode.KAFKA_STORAGE_ERROR);
      }
    });
    return errors;
  }

  /**
   * StopReplica (Kafka's ReplicaManager.stopReplicas), the controller epoch already checked: a
   * lower leader epoch than the local one is FENCED_LEADER_EPOCH; otherwise the partition stops
   * being served here, and with deletePartition its log is deleted, even when neither the image
   * nor the open partitions know it (a topic deleted while this broker was away). Without
   * delete the log stays open as a follower (issue 12: its fetcher stops here).
   */
  stopReplicas(parts: readonly StopReplicaPartition[]): Promise<Map<string, number>> {
    const run = () => this.stopReplicasNow(parts);
    const p = this.syncChain.then(run, run);
    this.syncChain = p.catch(() => undefined);
    return p;
  }

  private async stopReplicasNow(parts: readonly StopReplicaPartition[]): Promise<Map<string, number>> {
    const errors = new Map<string, number>();
    // As Kafka: the fetchers let go of every partition named before anything is stopped or deleted.
    await this.fetchers?.removeFetcherForPartitions(
      parts.filter((s) => {
        const p = this.partitions.get(tpKey(s.topic, s.partition));
        return !p || s.leaderEpoch === NO_EPOCH || s.leaderEpoch === EPOCH_DURING_DELETE || s.leaderEpoch >= p.leaderEpoch;
      }).map((s) => tpKey(s.topic, s.partition)),
    );
    for (const s of parts) {
      const key = tpKey(s.topic, s.partition);
      const p = this.partitions.get(key);
      if (p && s.leaderEpoch !== NO_EPOCH && s.leaderEpoch !== EPOCH_DURING_DELETE && s.leaderEpoch < p.leaderEpoch) {
        errors.set(key, ErrorCode.FENCED_LEADER_EPOCH);
        continue;
      }
      try {
        if (s.deletePartition) {
          if (p) await this.dropPartition(p, true);
          else if (this.opts.logManager.getLog(s.topic, s.partition)) await this.opts.logManager.deleteLog(s.topic, s.partition);
        } else if (p?.isLeader) {
          p.makeFollower(-1, p.leaderEpoch);
        }
        errors.set(key, ErrorCode.NONE);
      } catch (err) {
        this.opts.logger.error({ topic: s.topic, partition: s.partition, err: messageOf(err) }, 'stopping a replica failed');
        errors.set(key, ErrorCode.KAFKA_STORAGE_ERROR);
      }
    }
    return errors;
  }

  /**
   * A follower starts fetching from its leader, as Kafka 2.7+ (truncation on fetch): a log that
   * knows its leader epochs fetches from its log end and the leader's diverging_epoch says where
   * to cut; a log without epochs starts from its high watermark and cuts there first. No leader
   * (-1): nothing to fetch from until the next LeaderAndIsr.
   */
  private async startFetching(p: Partition): Promise<void> {
    if (!this.fetchers || this.stopped || p.leaderId < 0) return;
    const { followerReplicaOf } = await import('./fetcher/manager.js');
    // A produce accepted while this broker still led may be appending: start after it.
    await p.appendsDone();
    const knowsEpochs = p.log.epochs.latestEpoch() >= 0;
    await this.fetchers.addFetcherForPartitions([
      { replica: followerReplicaOf(p), topicId: p.topicId, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch, fetchOffset: knowsEpochs ? p.logEndOffset : p.highWatermark },
    ]);
  }

  private async dropPartition(p: Partition, deleteLog: boolean): Promise<void> {
    this.partitions.delete(tpKey(p.topic, p.partition));
    const set = this.byTopic.get(p.topic);
    set?.delete(p);
    if (set && set.size === 0) {
      this.byTopic.delete(p.topic);
      if (this.hostedTopicIds.get(p.topicId) === p.topic) this.hostedTopicIds.delete(p.topicId);
    }
    // Wake fetches parked on it; their re-read reports the partition as gone.
    for (const w of [...p.waiters, ...p.replicaWaiters]) w.onAppend(p, Number.MAX_SAFE_INTEGER, 0);
    // acks=all produces waiting on it are answered NOT_LEADER_OR_FOLLOWER.
    if (p.isLeader) p.makeFollower(-1, p.leaderEpoch);
    // The log left here is hosted no more: the cleaner leaves it alone until a partition is again.
    if (p.log.producerView) p.log.producerView = undefined;
    if (deleteLog) await this.opts.logManager.deleteLog(p.topic, p.partition);
    else await p.snapshotProducerState(true).catch(() => undefined);
  }

  /** Why a partition cannot be served here (or the partition itself). */
  lookup(topic: string, partition: number): { partition?: Partition; errorCode: number } {
    const p = this.getPartition(topic, partition);
    // A follower's log is not the client's to read (issue 12: replica fetches will be).
    if (p) return p.isLeader ? { partition: p, errorCode: ErrorCode.NONE } : { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    const info = this.opts.metadata.topic(topic);
    const ps = info?.partitions.find((x) => x.partition === partition);
    if (!ps) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
    // Led elsewhere, or led here but its log is still being opened: the client retries.
    return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
  }

  /** Appends produced batches to a partition led here (Produce, and internal writers): leader-appends.ts. */
  appendRecords(topic: string, partition: number, records: Buffer | null, req: AppendRequest): Promise<AppendOutcome> {
    return appendRecords(this.appendContext, topic, partition, records, req);
  }

  /** WriteTxnMarkers for one partition: leader-appends.ts. */
  appendTxnMarker(topic: string, partition: number, m: TxnMarker): Promise<number> {
    return appendTxnMarker(this.appendContext, topic, partition, m);
  }

  /** Told of every marker written and replicated here (Kafka's onTransactionCompleted for __consumer_offsets). */
  readonly txnMarkerListeners = new Set<TxnMarkerListener>();

  /** What the append path needs of this manager. */
  private get appendContext(): AppendContext {
    return {
      brokerId: this.brokerId,
      config: this.opts.config,
      metadata: this.opts.metadata,
      partition: (t, p) => this.getPartition(t, p),
      syncTopic: (t) => this.syncTopic(t),
      stopped: this.stopped,
      waitingProduces: this.waitingProduces,
      txnMarkerListeners: this.txnMarkerListeners,
    };
  }

  /** Kafka's isr-expiration task: each leader drops followers not caught up within replica.lag.time.max.ms. */
  maybeShrinkIsr(nowMs: number): void {
    const maxLag = this.opts.config.replicaLagTimeMaxMs;
    for (const p of this.partitions.values()) {
      if (!p.isLeader) continue;
      const out = p.maybeShrinkIsr(nowMs, maxLag);
      if (out.length > 0) {
        this.opts.logger.info({ topic: p.topic, partition: p.partition, isr: p.isr, outOfSync: out, maxLagMs: maxLag }, 'shrinking the ISR: followers not caught up in time');
      }
    }
  }

  /** Reads for Fetch, long-polling for min.bytes. Results are in `targets` order. */
  fetch(targets: readonly FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]> {
    return fetchRecords(targets, params, (t, p) => this.lookup(t, p), this.waitingFetches, (id, ms) => this.replicaWaitMs(id, ms));
  }

  /**
   * This broker took the lead of `p` (LeaderAndIsr). Its followers must add it to their fetch
   * sessions, but a follower's fetcher that already fetches other partitions from this broker has
   * a fetch parked here, and it sends the next one (the first that can name `p`) only when that
   * one is answered: after up to replica.fetch.wait.max.ms (500 ms), during which the new
   * partition is not replicated and acks=all produces to it wait (every new topic, every leader
   * change). So the parked fetches of followers that have not fetched `p` yet are answered now,
   * and until they fetch it (for at most their max wait) their fetches park only briefly
   * (replicaWaitMs): the follower may process its own LeaderAndIsr after this broker did.
   */
  private noteNewLeadership(p: Partition): void {
    if (!this.awaitingFirstFetch(p)) return;
    this.joining.push({ p, at: Date.now() });
    for (const f of [...this.waitingFetches]) if (f.replicaId >= 0 && p.followerState(f.replicaId)?.logEndOffset === -1) f.complete();
  }

  private awaitingFirstFetch(p: Partition): boolean {
    return p.isLeader && this.partitions.get(tpKey(p.topic, p.partition)) === p && p.replicas.some((id) => p.followerState(id)?.logEndOffset === -1);
  }

  /** How long a replica fetch from `replicaId` may park: briefly while a partition led here since lately awaits its first fetch. */
  private replicaWaitMs(replicaId: number, maxWaitMs: number): number {
    if (this.joining.length === 0) return maxWaitMs;
    const now = Date.now();
    this.joining = this.joining.filter((j) => now - j.at < JOIN_WINDOW_MAX_MS && this.awaitingFirstFetch(j.p));
    for (const j of this.joining) {
      if (now - j.at < maxWaitMs && j.p.followerState(replicaId)?.logEndOffset === -1) return Math.min(maxWaitMs, JOIN_POLL_MS);
    }
    return maxWaitMs;
  }

  /** DeleteRecords: moves the log start offset; returns the new low watermark. */
  async deleteRecords(topic: string, partition: number, beforeOffset: number): Promise<number> {
    const p = this.getPartition(topic, partition);
    if (!p || !p.isLeader) throw new Error(`partition ${topic}-${partition} is not led here`);
    const target = beforeOffset === -1 ? p.highWatermark : beforeOffset;
    return p.log.deleteRecordsBefore(target);
  }

  /** Periodic housekeeping: expire idle producers, snapshot changed producer state. */
  async maintain(): Promise<void> {
    const now = Date.now();
    for (const p of this.partitions.values()) {
      p.producers.expire(now, this.opts.config.producerIdExpirationMs);
      await p.snapshotProducerState().catch((err) => this.opts.logger.warn({ err: messageOf(err), partition: p.log.name }, 'producer snapshot failed'));
    }
  }

  /** Answers parked fetches, snapshots producer state. The LogManager is shut down by the caller. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    // Fetchers first (Kafka's order): no follower append runs while logs are closed.
    await this.fetchers?.shutdown();
    if (this.timer) clearInterval(this.timer);
    if (this.isrTimer) clearInterval(this.isrTimer);
    for (const f of [...this.waitingFetches]) f.complete();
    for (const d of [...this.waitingProduces]) d.complete(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    // DeleteRecords waiting for followers' log starts.
    for (const p of this.partitions.values()) for (const w of [...p.stateWaiters]) if (w instanceof DelayedDeleteRecords) w.complete(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    await this.syncChain;
    // Concurrently, as the log manager closes logs: each snapshot is two fsyncs.
    await forEachConcurrently([...this.partitions.values()], 16, (p) =>
      p.snapshotProducerState(true).catch((err) => this.opts.logger.warn({ err: messageOf(err), partition: p.log.name }, 'producer snapshot failed')),
    );
  }
}
