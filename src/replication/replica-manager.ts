/**
 * The data plane's owner: one Partition per (topic, partition) this broker hosts
 * (hosting/hosted-partitions.ts: in embedded mode kept in step with the metadata store, every
 * partition led here). In cluster mode the controller decides, as in Kafka: LeaderAndIsr opens
 * the log of every partition whose replicas include this broker, as leader or follower;
 * StopReplica closes (and deletes) them (hosting/role-changes.ts); metadata changes only
 * reconfigure open logs. Metadata syncs and role changes run one at a time, in call order.
 * Produce appends (append/leader-appends.ts) and Fetch reads (fetch/fetch-reader.ts) go through
 * here; so do the admin APIs that need a log (DeleteRecords, DescribeLogDirs...), the ISR
 * expiration task and producer state maintenance.
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../protocol/errors.js';
import type { ReplicationConfig } from './replication-config.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import { forEachConcurrently } from '../common/concurrency.js';
import type { LogManager } from '../storage/manager/log-manager.js';
import type { LogConfig } from '../storage/config.js';
import type { IsrChangeCounts, IsrWriter, Partition } from './partition/partition.js';
import { countReplicaStates, type ReplicaStateCounts } from './replica-state-stats.js';
import { topicMinInsync } from './log-config.js';
import { HostedPartitions } from './hosting/hosted-partitions.js';
import { becomeLeaderOrFollower, stopReplicas, type LeaderAndIsrPartition, type RoleChangeContext, type StopReplicaPartition } from './hosting/role-changes.js';
import type { DelayedProduce } from './delayed/delayed-produce.js';
import {
  appendRecords,
  appendTxnMarker,
  type AppendContext,
  type AppendOutcome,
  type AppendRequest,
  type TxnMarker,
  type TxnMarkerListener,
} from './append/leader-appends.js';
import { TxnVerificationGuards } from './append/txn-verification-guards.js';
import { DelayedDeleteRecords } from './delayed/delayed-delete-records.js';
import { messageOf } from '../common/errors.js';
import { DEBUGGING_CONSUMER_ID, fetchRecords, type FetchParams, type FetchTarget, type PartitionFetchResult } from './fetch/fetch-reader.js';
import type { DelayedFetch } from './fetch/delayed-fetch.js';
import { ProducerIdManager } from './producer-id-manager.js';
import { FetchService } from './fetch/fetch-service.js';
import { FirstFetchWindow } from './fetch/first-fetch-window.js';
import type { ReplicaFetcherManager } from './fetcher/manager.js';
import type { InterBrokerInterceptor } from '../client/inter-broker-interceptor.js';

export type { AppendOrigin, AppendRequest, AppendOutcome, TxnMarker, TxnMarkerListener } from './append/leader-appends.js';

export interface ReplicaManagerOptions {
  config: ReplicationConfig;
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

export class ReplicaManager {
  /** The partitions whose logs are open here. */
  private readonly hosted: HostedPartitions;
  /** Partitions led here lately that some follower has not fetched yet: its fetches park briefly (fetch/first-fetch-window.ts). */
  private readonly firstFetches = new FirstFetchWindow((p) => this.hosted.get(p.topic, p.partition) === p);
  private readonly waitingFetches = new Set<DelayedFetch>();
  private readonly waitingProduces = new Set<DelayedProduce>();
  private isrTimer: NodeJS.Timeout | undefined;
  /** Fetch requests (sessions, throttling, down-conversion) over this manager's reads: fetch/fetch-service.ts. */
  readonly fetchService: FetchService;
  private syncChain: Promise<unknown> = Promise.resolve();
  /** Syncs queued on the chain and not started, by topic. */
  private readonly queuedSyncs = new Map<string, Promise<void>>();
  /** What syncTopic waits for besides this manager's logs (alsoAwaitOnSync). */
  private syncElsewhere: ((topic: string) => Promise<void> | undefined) | undefined;
  private readonly brokerId: number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Cluster mode's replica fetchers (undefined in embedded mode, which never follows). */
  private fetchers: ReplicaFetcherManager | undefined;
  /** What the append path (leader-appends.ts) needs of this manager: made once, not per append. */
  private readonly appendContext: AppendContext;

  private constructor(
    private readonly opts: ReplicaManagerOptions,
    readonly producerIds: ProducerIdManager,
  ) {
    this.hosted = new HostedPartitions(opts, () => this.stopped);
    this.brokerId = opts.config.brokerId;
    this.fetchService = new FetchService(this, opts.metadata);
    this.appendContext = {
      brokerId: this.brokerId,
      config: opts.config,
      metadata: opts.metadata,
      partition: (t, p) => this.getPartition(t, p),
      syncTopic: (t) => this.syncLocalLogs(t),
      isStopped: () => this.stopped,
      waitingProduces: this.waitingProduces,
      txnMarkerListeners: this.txnMarkerListeners,
      txnGuards: this.txnGuards,
    };
  }

  get logManager(): LogManager {
    return this.opts.logManager;
  }

  /** Opens partitions for every topic led here and follows metadata changes from then on. */
  static async start(opts: ReplicaManagerOptions): Promise<ReplicaManager> {
    const ids = await ProducerIdManager.open(opts.config.logDirs[0]!);
    const rm = new ReplicaManager(opts, ids);
    if (opts.controllerManaged && opts.brokerEndpoint) rm.fetchers = await ReplicaManager.createFetchers(opts, opts.brokerEndpoint);
    for (const t of opts.metadata.topics()) await rm.syncLocalLogs(t.name);
    // Cluster mode starts with an empty image: the controller's LeaderAndIsr brings the logs back.
    for (const log of opts.controllerManaged ? [] : opts.logManager.allLogs()) {
      if (!opts.metadata.topic(log.topic)) opts.logger.warn({ log: log.name }, 'log of a topic unknown to metadata is left untouched');
    }
    opts.metadata.onChange((topic) => void rm.syncLocalLogs(topic).catch((err) => opts.logger.error({ err, topic }, 'syncing logs with metadata failed')));
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

  private static async createFetchers(
    opts: ReplicaManagerOptions,
    endpointOf: (brokerId: number) => { host: string; port: number } | undefined,
  ): Promise<ReplicaFetcherManager> {
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
    return this.hosted.get(topic, partition);
  }

  /** The topic a hosted partition's id names, known from LeaderAndIsr before UpdateMetadata brings it (see HostedPartitions.topicName). */
  hostedTopicName(topicId: string): string | undefined {
    return this.hosted.topicName(topicId);
  }

  partitionsOf(topic: string): Partition[] {
    return this.hosted.ofTopic(topic);
  }

  /** The hosted partitions by state, counted into `out` in one pass (the metrics scrape: replica-state-stats.ts). */
  stateCounts(out: ReplicaStateCounts): ReplicaStateCounts {
    const { config, metadata } = this.opts;
    return countReplicaStates(this.hosted.values(), (t) => topicMinInsync(config, metadata.topic(t)?.configs ?? {}), out);
  }

  /** The hosted partitions, without a copy (a scrape walks them once). */
  hostedPartitions(): IterableIterator<Partition> {
    return this.hosted.values();
  }

  /** Record bytes appended here as a follower (cluster mode; 0 in embedded mode, which never follows). */
  get replicationBytesIn(): number {
    return this.fetchers?.traffic.bytesIn ?? 0;
  }

  /** Accepted ISR shrinks and expands (cluster mode; undefined in embedded mode, where the ISR never changes). */
  get isrChangeCounts(): IsrChangeCounts | undefined {
    return this.opts.isrWriter?.counts;
  }

  allPartitions(): Partition[] {
    return [...this.hosted.values()];
  }

  /**
   * Brings the logs of `topic` in line with metadata: creates/opens the logs of partitions led
   * here (topic config over broker defaults), applies config changes, deletes logs of a deleted
   * (or deleted and re-created) topic. Admin handlers await this after changing a topic so the
   * logs exist before they answer. Calls are serialised. With shard workers it also waits for
   * what `alsoAwaitOnSync` names: the workers' logs of the topic.
   */
  syncTopic(topic: string): Promise<void> {
    const local = this.syncLocalLogs(topic);
    const elsewhere = this.syncElsewhere?.(topic);
    return elsewhere ? Promise.all([local, elsewhere]).then(() => undefined) : local;
  }

  /**
   * Shard workers (server/shard-wiring.ts): this manager is shard 0's, and whoever syncs a topic
   * through it waits also for `hook(topic)` (the post that makes the workers open, reconfigure or
   * delete its logs; undefined when none is under way). Set once, before the broker serves.
   */
  alsoAwaitOnSync(hook: (topic: string) => Promise<void> | undefined): void {
    this.syncElsewhere = hook;
  }

  /** syncTopic for this manager's own logs only (its metadata listener, its appends, a shard's handling of a post). */
  syncLocalLogs(topic: string): Promise<void> {
    // A sync of this topic queued and not started yet will read metadata when it runs: callers
    // share it (produces to a topic whose logs are being opened would otherwise queue one each).
    const queued = this.queuedSyncs.get(topic);
    if (queued) return queued;
    const run = () => {
      this.queuedSyncs.delete(topic);
      return this.hosted.syncWithMetadata(topic);
    };
    const p = this.syncChain.then(run, run);
    this.queuedSyncs.set(topic, p);
    this.syncChain = p.catch(() => undefined);
    return p;
  }

  /**
   * LeaderAndIsr (Kafka's ReplicaManager.becomeLeaderOrFollower), the controller epoch already
   * checked: per partition, a leader epoch lower than the local one is fenced
   * (FENCED_LEADER_EPOCH, nothing applied; an equal one is a re-send and applied again); a
   * partition whose replicas do not include this broker is UNKNOWN_TOPIC_OR_PARTITION; otherwise
   * its log is opened (created when missing) and it becomes leader or follower. Returns the error
   * per partition, keyed by tpKey. Serialised with the metadata syncs. role-changes.ts.
   */
  becomeLeaderOrFollower(states: readonly LeaderAndIsrPartition[], configsOf: (topic: string) => Record<string, string>): Promise<Map<string, number>> {
    const run = () => becomeLeaderOrFollower(this.roleContext, states, configsOf);
    const p = this.syncChain.then(run, run);
    this.syncChain = p.catch(() => undefined);
    return p;
  }

  /**
   * StopReplica (Kafka's ReplicaManager.stopReplicas), the controller epoch already checked: a
   * lower leader epoch than the local one is FENCED_LEADER_EPOCH; otherwise the partition stops
   * being served here, and with deletePartition its log is deleted, even when neither the image
   * nor the open partitions know it (a topic deleted while this broker was away). Without
   * delete the log stays open as a follower (issue 12: its fetcher stops here). role-changes.ts.
   */
  stopReplicas(parts: readonly StopReplicaPartition[]): Promise<Map<string, number>> {
    const run = () => stopReplicas(this.roleContext, parts);
    const p = this.syncChain.then(run, run);
    this.syncChain = p.catch(() => undefined);
    return p;
  }

  /** What the role changes need of this manager. */
  private get roleContext(): RoleChangeContext {
    return {
      brokerId: this.brokerId,
      logger: this.opts.logger,
      logManager: this.opts.logManager,
      hosted: this.hosted,
      fetchers: this.fetchers,
      isStopped: () => this.stopped,
      noteNewLeadership: (p) => this.firstFetches.noteNewLeadership(p, this.waitingFetches),
    };
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

  /** Like lookup, but a follower serves too (Kafka's debugging consumer, replica id -2). */
  private lookupAnyReplica(topic: string, partition: number): { partition?: Partition; errorCode: number } {
    const p = this.getPartition(topic, partition);
    return p ? { partition: p, errorCode: ErrorCode.NONE } : this.lookup(topic, partition);
  }

  /** Appends produced batches to a partition led here (Produce, and internal writers): leader-appends.ts. */
  appendRecords(topic: string, partition: number, records: Buffer | null, req: AppendRequest): Promise<AppendOutcome> {
    return appendRecords(this.appendContext, topic, partition, records, req);
  }

  /** WriteTxnMarkers for one partition: leader-appends.ts. */
  appendTxnMarker(topic: string, partition: number, m: TxnMarker): Promise<number> {
    return appendTxnMarker(this.appendContext, topic, partition, m);
  }

  /** KIP-890 part 1: which producers' transactional batches a coordinator verified, per partition. */
  readonly txnGuards = new TxnVerificationGuards();

  /** Told of every marker written and replicated here (Kafka's onTransactionCompleted for __consumer_offsets). */
  readonly txnMarkerListeners = new Set<TxnMarkerListener>();

  /** Kafka's isr-expiration task: each leader drops followers not caught up within replica.lag.time.max.ms. */
  maybeShrinkIsr(nowMs: number): void {
    const maxLag = this.opts.config.replicaLagTimeMaxMs;
    for (const p of this.hosted.values()) {
      if (!p.isLeader) continue;
      const out = p.maybeShrinkIsr(nowMs, maxLag);
      if (out.length > 0) {
        this.opts.logger.info(
          { topic: p.topic, partition: p.partition, isr: p.isr, outOfSync: out, maxLagMs: maxLag },
          'shrinking the ISR: followers not caught up in time',
        );
      }
    }
  }

  /** Reads for Fetch, long-polling for min.bytes. Results are in `targets` order. */
  fetch(targets: readonly FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]> {
    return fetchRecords(
      targets,
      params,
      params.replicaId === DEBUGGING_CONSUMER_ID ? (t, p) => this.lookupAnyReplica(t, p) : (t, p) => this.lookup(t, p),
      this.waitingFetches,
      (id, ms) => this.firstFetches.replicaWaitMs(id, ms),
    );
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
    for (const p of this.hosted.values()) {
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
    for (const p of this.hosted.values())
      for (const w of [...p.stateWaiters]) if (w instanceof DelayedDeleteRecords) w.complete(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    await this.syncChain;
    // Concurrently, as the log manager closes logs: each snapshot is two fsyncs.
    await forEachConcurrently([...this.hosted.values()], 16, (p) =>
      p.snapshotProducerState(true).catch((err) => this.opts.logger.warn({ err: messageOf(err), partition: p.log.name }, 'producer snapshot failed')),
    );
  }
}
