/**
 * The transaction coordinator service the handlers call, built as the group coordinator: finds
 * the shard (`__transaction_state` partition) of a transactional id, runs the operation through
 * the coordinator runtime (answers once the records are durable), follows the leadership of the
 * partitions, and drives each prepared transaction's markers until it can be completed.
 */
import { countTxns, type TxnCounts } from './txn-counts.js';
import type { Logger } from 'pino';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import { ErrorCode, KafkaError, errorName } from '../../protocol/errors.js';
import { messageOf } from '../../common/errors.js';
import type { CoordinatorRuntime } from '../runtime/runtime.js';
import { CoordinatorShell, type CoordinatorReplicas } from '../runtime/coordinator-shell.js';
import type { CoordinatorLog } from '../runtime/types.js';
import { txnConfigFrom, type TxnCoordinatorBrokerConfig, type TxnCoordinatorConfig } from './config.js';
import { decodeTxnRecord, encodeTxnRecord, type TxnRecord } from './records.js';
import { TxnShard } from './txn-shard.js';
import { TxnState, partitionList, type TxnMetadata } from './txn-state.js';
import { markerErrorAction, type TxnMarkerWriter } from './markers.js';
import type { ProducerIdSource } from './producer-ids.js';
import {
  abortTimedOut,
  addPartitions,
  completeTxn,
  describeTxn,
  endTxn,
  expireTransactionalIds,
  initProducerId,
  listTxns,
  verifyPartitions,
  type DescribedTxn,
  type EndTxnOutcome,
  type InitProducerIdRequest,
  type ListTxnFilters,
  type ListedTxn,
  type TopicPartition,
  type TxnProducer,
} from './operations.js';

export const TRANSACTION_STATE_TOPIC = '__transaction_state';

const codeOf = (err: unknown): number => (err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR);

export interface TxnCoordinatorOptions {
  config: TxnCoordinatorBrokerConfig;
  metadata: MetadataStore;
  replicaManager: CoordinatorReplicas;
  logger: Logger;
  /** Fresh producer ids: the broker's ProducerIdManager (embedded), ZooKeeper blocks (cluster mode). */
  producerIds: ProducerIdSource;
  markers: TxnMarkerWriter;
  /** Tests may substitute the log, the clock and the settings. */
  log?: CoordinatorLog;
  clock?: () => number;
  txnConfig?: Partial<TxnCoordinatorConfig>;
  /** First retry delay of a marker write (doubling up to 1 s); default 50 ms. */
  markerRetryBackoffMs?: number;
}

export interface AddPartitionsOutcome {
  errorCode: number;
  partitions: { topic: string; partition: number; errorCode: number }[];
}

export class TxnCoordinator {
  private readonly shell: CoordinatorShell<TxnShard, TxnRecord>;
  private readonly txnConfig: TxnCoordinatorConfig;
  /** Marker loops in flight (tests wait for them; shutdown lets them end). */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly sleepers = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: TxnCoordinatorOptions) {
    this.txnConfig = { ...txnConfigFrom(opts.config), ...opts.txnConfig };
    const cfg = opts.config;
    this.shell = new CoordinatorShell<TxnShard, TxnRecord>({
      // Compacted, its replication factor and min ISR from the transaction.state.log.* settings
      // (capped to the live brokers in embedded mode; in cluster mode it waits for enough brokers).
      topic: {
        name: TRANSACTION_STATE_TOPIC,
        numPartitions: cfg.transactionStateLogNumPartitions,
        replicationFactor: cfg.transactionStateLogReplicationFactor,
        description: 'the transactions state topic',
        replicationFactorSetting: 'transaction.state.log.replication.factor',
        configs: (rf) => ({
          'cleanup.policy': 'compact',
          'compression.type': 'uncompressed',
          'min.insync.replicas': String(Math.max(1, Math.min(cfg.transactionStateLogMinIsr, rf))),
          'segment.bytes': String(cfg.transactionStateLogSegmentBytes),
          'unclean.leader.election.enable': 'false',
        }),
      },
      config: cfg,
      metadata: opts.metadata,
      replicaManager: opts.replicaManager,
      logger: opts.logger,
      log: opts.log,
      runtime: {
        serde: { encode: encodeTxnRecord, decode: decodeTxnRecord },
        newShard: (ctx) =>
          new TxnShard(
            ctx,
            this.txnConfig,
            { onPrepared: (shard, m) => this.sendMarkers(shard, m), onLoaded: (shard) => this.schedulePeriodic(shard) },
            opts.replicaManager.getPartition(TRANSACTION_STATE_TOPIC, ctx.partition)?.leaderEpoch ?? 0,
          ),
        ...(opts.clock ? { clock: opts.clock } : {}),
      },
    });
  }

  get runtime(): CoordinatorRuntime<TxnShard, TxnRecord> {
    return this.shell.runtime;
  }

  /** Loads the partitions led here and follows leadership changes. */
  start(): void {
    this.shell.start();
  }

  shutdown(): void {
    this.shell.close();
    for (const t of this.sleepers) clearTimeout(t);
    this.sleepers.clear();
    this.opts.markers.close();
  }

  /** Where every producer id of this broker comes from (idempotent producers too). */
  get producerIds(): ProducerIdSource {
    return this.opts.producerIds;
  }

  partitionFor(transactionalId: string): number {
    return this.shell.partitionFor(transactionalId);
  }

  /** Loads partitions that became led here, unloads the ones that moved away (loading ones too). */
  syncLeadership(): Promise<void> {
    return this.shell.syncLeadership();
  }

  /** Waits until every led partition is loaded (tests, start-up). */
  async loaded(): Promise<void> {
    await this.syncLeadership();
  }

  /** Creates `__transaction_state` on first use (FindCoordinator), as Kafka does. */
  ensureTopic(): Promise<TopicInfo> {
    return this.shell.ensureTopic();
  }

  // ---- operations ----

  async initProducerId(req: InitProducerIdRequest): Promise<{ errorCode: number; producerId: bigint; producerEpoch: number }> {
    const fail = (errorCode: number) => ({ errorCode, producerId: -1n, producerEpoch: -1 });
    if (req.transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    try {
      const partition = this.partitionFor(req.transactionalId);
      let res = await this.runtime.write(partition, (s, now) => initProducerId(s, req, now));
      if ('needProducerId' in res) {
        let fresh: bigint;
        try {
          fresh = await this.opts.producerIds.generate();
        } catch (err) {
          this.shell.failures.failed('producer-id-block', 'allocations', 'error', () => `cannot allocate a producer id block: ${messageOf(err)}`);
          return fail(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
        }
        res = await this.runtime.write(partition, (s, now) => initProducerId(s, req, now, fresh));
        // Needing yet another one means the state changed under us: the client retries.
        if ('needProducerId' in res) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      }
      return res;
    } catch (err) {
      return fail(codeOf(err));
    }
  }

  /** AddPartitionsToTxn (client form, or the v4+ broker form without verify_only). */
  async addPartitions(req: TxnProducer & { partitions: TopicPartition[] }): Promise<number> {
    try {
      return await this.runtime.write(this.partitionFor(req.transactionalId), (s, now) => addPartitions(s, req, now));
    } catch (err) {
      return codeOf(err);
    }
  }

  /** AddPartitionsToTxn v4+ verify_only: reads committed state, writes nothing. */
  async verifyPartitions(req: TxnProducer & { partitions: TopicPartition[] }): Promise<AddPartitionsOutcome> {
    try {
      return await this.runtime.read(this.partitionFor(req.transactionalId), (s) => verifyPartitions(s, req));
    } catch (err) {
      const errorCode = codeOf(err);
      return { errorCode, partitions: req.partitions.map((p) => ({ ...p, errorCode })) };
    }
  }

  /** The `__consumer_offsets` partition of the group joins the transaction (AddOffsetsToTxn). */
  async addOffsets(req: TxnProducer & { groupId: string; offsetsPartition: number }): Promise<number> {
    return this.addPartitions({ ...req, partitions: [{ topic: '__consumer_offsets', partition: req.offsetsPartition }] });
  }

  async endTxn(req: TxnProducer & { commit: boolean }): Promise<EndTxnOutcome> {
    try {
      return await this.runtime.write(this.partitionFor(req.transactionalId), (s, now) => endTxn(s, req, now));
    } catch (err) {
      return { errorCode: codeOf(err), producerId: -1n, producerEpoch: -1 };
    }
  }

  async describe(transactionalId: string): Promise<DescribedTxn> {
    try {
      return await this.runtime.read(this.partitionFor(transactionalId), (s) => describeTxn(s, transactionalId));
    } catch (err) {
      return {
        errorCode: codeOf(err),
        transactionalId,
        transactionState: '',
        transactionTimeoutMs: 0,
        transactionStartTimeMs: -1n,
        producerId: -1n,
        producerEpoch: -1,
        topics: [],
      };
    }
  }

  /** Transactional ids by state and partitions loading (txn-counts.ts), for the metrics scrape. */
  txnCounts(out: TxnCounts): TxnCounts {
    out.loadingPartitions = this.runtime.loadingCount();
    return countTxns(this.runtime.activeShards(), out);
  }

  list(filters: ListTxnFilters): { errorCode: number; transactions: ListedTxn[] } {
    const now = (this.opts.clock ?? Date.now)();
    const transactions = this.runtime.activeShards().flatMap((s) => listTxns(s, filters, now));
    return { errorCode: this.runtime.anyLoading() ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE, transactions };
  }

  /** Aborts timed-out transactions on every loaded partition now (tests; the timer does it too). */
  async abortTimedOutNow(): Promise<string[]> {
    const out: string[] = [];
    for (const p of this.runtime.activePartitions()) out.push(...(await this.runtime.write(p, (s, now) => abortTimedOut(s, now))));
    return out;
  }

  /** Removes expired transactional ids on every loaded partition now (tests; the timer does it too). */
  async expireNow(): Promise<string[]> {
    const out: string[] = [];
    for (const p of this.runtime.activePartitions()) out.push(...(await this.runtime.write(p, (s, now) => expireTransactionalIds(s, now))));
    return out;
  }

  /** Resolves once every marker loop started so far has ended (tests). */
  async markersSettled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  // ---- periodic work ----

  private schedulePeriodic(shard: TxnShard): void {
    const { ctx, config } = shard;
    const abortTick = (now: number) => {
      ctx.scheduleTimer('abort-timed-out', config.abortTimedOutTransactionsIntervalMs, abortTick);
      const res = abortTimedOut(shard, now);
      if (res.response.length > 0) this.opts.logger.info({ transactionalIds: res.response }, 'aborting transactions past their timeout');
      return { ...res, response: undefined };
    };
    const expireTick = (now: number) => {
      ctx.scheduleTimer('expire-ids', config.removeExpiredTransactionalIdsIntervalMs, expireTick);
      const res = expireTransactionalIds(shard, now);
      if (res.response.length > 0) this.opts.logger.info({ transactionalIds: res.response }, 'removing expired transactional ids');
      return { ...res, response: undefined };
    };
    ctx.scheduleTimer('abort-timed-out', config.abortTimedOutTransactionsIntervalMs, abortTick);
    ctx.scheduleTimer('expire-ids', config.removeExpiredTransactionalIdsIntervalMs, expireTick);
  }

  // ---- markers ----

  private sendMarkers(shard: TxnShard, m: TxnMetadata): void {
    const run = this.markerLoop(shard, m).catch((err: unknown) =>
      this.opts.logger.error({ err, transactionalId: m.transactionalId }, 'writing transaction markers failed'),
    );
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  /**
   * Writes the markers of a prepared transaction until every partition has them (retriable
   * errors are retried with a backoff; a deleted partition is dropped), then writes the Complete
   * state. Stops when the partition is unloaded: its next coordinator resumes from the log.
   */
  private async markerLoop(shard: TxnShard, m: TxnMetadata): Promise<void> {
    const commit = m.state === TxnState.PrepareCommit;
    let pending = partitionList(m);
    let backoff = this.opts.markerRetryBackoffMs ?? 50;
    let attempts = 0;
    while (pending.length > 0) {
      if (shard.unloaded || this.shell.isClosed) return;
      const results = await this.opts.markers.writeMarkers({
        producerId: m.producerId,
        producerEpoch: m.producerEpoch,
        coordinatorEpoch: shard.coordinatorEpoch,
        commit,
        partitions: pending,
      });
      const next: TopicPartition[] = [];
      for (const r of results) {
        const action = markerErrorAction(r.errorCode);
        if (action === 'done') continue;
        if (action === 'fenced') {
          this.opts.logger.warn(
            { transactionalId: m.transactionalId, topic: r.topic, partition: r.partition, errorCode: r.errorCode },
            'transaction marker fenced; this coordinator stops sending them',
          );
          return;
        }
        if (action === 'drop-if-deleted' && (this.opts.metadata.topic(r.topic)?.partitions.length ?? 0) <= r.partition) continue;
        next.push({ topic: r.topic, partition: r.partition });
      }
      pending = next;
      // Said once per transaction: a leader that keeps refusing (one without WriteTxnMarkers, a
      // partition without a leader) holds the transaction in its Prepare state meanwhile.
      if (++attempts === 20 && pending.length > 0) {
        const codes = results
          .filter((r) => pending.some((p) => p.topic === r.topic && p.partition === r.partition))
          .map((r) => `${r.topic}-${r.partition}: ${errorName(r.errorCode)}`);
        this.opts.logger.warn(
          { transactionalId: m.transactionalId, producerId: String(m.producerId) },
          `transaction markers still not written after ${attempts} attempts (${codes.join(', ')}); retrying`,
        );
      }
      if (pending.length > 0) {
        await this.sleep(backoff);
        backoff = Math.min(1000, backoff * 2);
      }
    }
    if (shard.unloaded || this.shell.isClosed) return;
    try {
      await this.runtime.write(shard.ctx.partition, (s, now) => (s === shard ? completeTxn(s, m, now) : { records: [], response: false }));
    } catch (err) {
      // Not the coordinator any more (its successor completes it) or the append failed: a later
      // load of the partition finds the Prepare state and sends the markers again.
      this.opts.logger.warn({ err: messageOf(err), transactionalId: m.transactionalId }, 'could not write the completion of a transaction');
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.sleepers.delete(t);
        resolve();
      }, ms);
      this.sleepers.add(t);
    });
  }
}
