/**
 * The leader's append path (Kafka's ReplicaManager.appendRecords): produced batches are checked
 * (acks, internal topics, leadership, min.insync.replicas), validated off the partition's lock,
 * appended in arrival order, and with acks=all answered once the ISR holds them; the
 * coordinator's transaction markers take the same road. ReplicaManager hands in what it owns
 * through AppendContext.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { ReplicationConfig } from '../replication-config.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { INTERNAL_TOPICS } from '../../metadata/cluster-model.js';
import { topicMinInsync } from '../log-config.js';
import type { LeaderAppendResult, Partition } from '../partition/partition.js';
import { DelayedProduce } from '../delayed/delayed-produce.js';
import {
  prepareProducedRecords,
  prepareTrustedRecords,
  prepareUncompressedRecords,
  type ProduceLimits,
  type RecordError,
} from '../../storage/append/produce-validation.js';
import { errorCodeOf } from '../errors.js';
import { messageOf } from '../../common/errors.js';
import type { TxnVerificationGuards, VerifiedTxnProducer } from './txn-verification-guards.js';

export type AppendOrigin = 'client' | 'coordinator';

export interface AppendRequest {
  /** 0, 1 or -1 (all in-sync replicas). */
  requiredAcks: number;
  origin: AppendOrigin;
  /** Produce API version (enables v3+ checks); omit for internal writers. */
  produceVersion?: number;
  /**
   * acks=all: how long to wait for the in-sync replicas (the Produce request's timeout_ms);
   * after it the partition is answered REQUEST_TIMED_OUT. Default: offsets.commit.timeout.ms
   * (internal writers are the coordinators).
   */
  timeoutMs?: number;
  /** KIP-890: a transactional batch admitted by verification; appended only if its guard still holds at its turn. */
  verifiedTxn?: VerifiedTxnProducer;
  /** A client's Produce to an internal topic: only with Kafka's admin client id (a broker forwarding the offset history). */
  internalTopicsAllowed?: boolean;
}

export interface AppendOutcome {
  errorCode: number;
  errorMessage: string | null;
  baseOffset: number;
  logAppendTime: number;
  logStartOffset: number;
  recordErrors: RecordError[];
}

/** A transaction marker the coordinator asks a leader to write (WriteTxnMarkers). */
export interface TxnMarker {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  commit: boolean;
}

/** Told when a marker was written and replicated (the group coordinator's transactional offsets). */
export type TxnMarkerListener = (w: { topic: string; partition: number; producerId: bigint; commit: boolean; offset: number }) => void;

export interface AppendContext {
  brokerId: number;
  config: ReplicationConfig;
  metadata: MetadataStore;
  partition(topic: string, partition: number): Partition | undefined;
  /** Opens the logs of a topic the metadata already has (embedded mode's sync). */
  syncTopic(topic: string): Promise<void>;
  /** Whether the broker is shutting down: asked when an append is done, as a shutdown may have begun meanwhile. */
  isStopped(): boolean;
  waitingProduces: Set<DelayedProduce>;
  txnMarkerListeners: ReadonlySet<TxnMarkerListener>;
  txnGuards: TxnVerificationGuards;
}

/** Largest single Buffer the decompressors are asked for (2 GiB - 1). */
const MAX_BUFFER_BYTES = 0x7fffffff;
/** How long a produce waits for the logs of a just-created topic before a retriable error. */
const LOG_OPEN_WAIT_MS = 1000;

/** message.timestamp.difference.max.ms of a topic (its override, else the broker's); Long.MAX becomes unbounded. */
function timestampDifferenceMaxMs(cfg: ReplicationConfig, overrides: Record<string, string>): number | undefined {
  const raw = overrides['message.timestamp.difference.max.ms'];
  const value = raw === undefined ? cfg.logMessageTimestampDifferenceMaxMs : Number(raw);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** Whether `p` settles (either way) within `ms`; a later rejection is not left unhandled. */
function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    p.then(done, done);
  });
}

function outcome(errorCode: number, errorMessage: string | null = null, recordErrors: RecordError[] = []): AppendOutcome {
  return { errorCode, errorMessage, baseOffset: -1, logAppendTime: -1, logStartOffset: -1, recordErrors };
}

/** Appends produced batches to a partition led here (Produce, and internal writers). */
export async function appendRecords(ctx: AppendContext, topic: string, partition: number, records: Buffer | null, req: AppendRequest): Promise<AppendOutcome> {
  if (req.requiredAcks !== 0 && req.requiredAcks !== 1 && req.requiredAcks !== -1) return outcome(ErrorCode.INVALID_REQUIRED_ACKS);
  if (req.origin === 'client' && !req.internalTopicsAllowed && INTERNAL_TOPICS.has(topic)) {
    return outcome(ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot append to internal topic ${topic}`);
  }
  const info = ctx.metadata.topic(topic);
  const ps = info?.partitions.find((x) => x.partition === partition);
  if (!info || !ps) return outcome(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (ps.leader !== ctx.brokerId) return outcome(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  let p = ctx.partition(topic, partition);
  if (!p) {
    // Metadata moved ahead of the logs (topic just created): wait for the sync, but not for
    // long. Syncs run one topic at a time, so this one may be queued behind another client's
    // thousands of partitions; the connection's later requests would wait with it. After the
    // wait the client gets what Kafka answers for a partition whose log is not there yet, and
    // retries.
    if (!(await settlesWithin(ctx.syncTopic(topic), LOG_OPEN_WAIT_MS))) {
      return outcome(ErrorCode.NOT_LEADER_OR_FOLLOWER, `the log of ${topic}-${partition} is still being opened`);
    }
    p = ctx.partition(topic, partition);
    if (!p) return outcome(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  }
  if (!p.isLeader) return outcome(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  const turn = p.takeArrivalTurn();
  let appending: Promise<LeaderAppendResult>;
  const minIsr = req.requiredAcks === -1 ? topicMinInsync(ctx.config, info.configs) : 0;
  try {
    if (req.requiredAcks === -1 && p.isr.length < minIsr) {
      // Kafka's appendRecordsToLeader: refused before the append (the ISR of the leader's own view).
      return outcome(
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `The size of the current ISR [${p.isr.join(',')}] is insufficient to satisfy the min.isr requirement of ${minIsr} for partition ${topic}-${partition}`,
      );
    }
    const cfg = p.log.config;
    const limits: ProduceLimits = {
      maxMessageBytes: cfg.maxMessageBytes,
      maxUncompressedBytes: Math.min(cfg.maxMessageBytes * ctx.config.messageMaxDecompressionRatio, MAX_BUFFER_BYTES),
      compacted: cfg.cleanupPolicy.includes('compact'),
      topicPartition: `${topic}-${partition}`,
      timestampDifferenceMaxMs: cfg.messageTimestampType === 'CreateTime' ? timestampDifferenceMaxMs(ctx.config, info.configs) : undefined,
    };
    // A coordinator's own batches are trusted: not validated again as if a client had sent them.
    // A client's uncompressed v2 batches are checked without a promise (one await fewer per partition).
    const validation = { fromClient: true, produceVersion: req.produceVersion, limits };
    const prepared =
      req.origin === 'coordinator'
        ? await prepareTrustedRecords(records, limits)
        : (prepareUncompressedRecords(records, validation) ?? (await prepareProducedRecords(records, validation)));
    if (!prepared.ok) return { ...outcome(prepared.errorCode, prepared.message, prepared.recordErrors), logStartOffset: p.logStartOffset };
    // Validation may finish out of order; the log takes the batches in arrival order.
    if (!turn.readyNow) await turn.ready;
    // A marker that had its turn since the verification ended the transaction (txn-verification-guards.ts).
    if (req.verifiedTxn && !ctx.txnGuards.holds(p, req.verifiedTxn)) {
      return { ...outcome(ErrorCode.INVALID_TXN_STATE, 'Partition was not added to the transaction'), logStartOffset: p.logStartOffset };
    }
    appending = p.appendAsLeader(prepared.batches, req.origin === 'client');
  } finally {
    turn.done();
  }
  try {
    const res = await appending;
    if (req.requiredAcks === -1 && res.errorCode === ErrorCode.NONE) {
      const errorCode = await awaitReplication(ctx, p, res.lastOffset + 1, minIsr, req.timeoutMs ?? ctx.config.offsetsCommitTimeoutMs);
      if (errorCode !== ErrorCode.NONE) return { ...outcome(errorCode), logStartOffset: p.logStartOffset };
    }
    return {
      errorCode: res.errorCode,
      errorMessage: res.errorMessage ?? null,
      baseOffset: res.baseOffset,
      logAppendTime: res.logAppendTime,
      logStartOffset: res.logStartOffset,
      recordErrors: [],
    };
  } catch (err) {
    return { ...outcome(errorCodeOf(err), messageOf(err)), logStartOffset: p.logStartOffset };
  }
}

/**
 * WriteTxnMarkers for one partition (Kafka's appendRecords with origin Coordinator and acks=all):
 * the leader appends the marker in arrival order with produce requests, then waits for the ISR
 * up to request.timeout.ms. Per-partition error codes as Kafka answers them.
 */
export async function appendTxnMarker(ctx: AppendContext, topic: string, partition: number, m: TxnMarker): Promise<number> {
  const info = ctx.metadata.topic(topic);
  if (!info?.partitions.some((x) => x.partition === partition)) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  const p = ctx.partition(topic, partition);
  if (!p || !p.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
  const turn = p.takeArrivalTurn();
  let appending: Promise<LeaderAppendResult>;
  try {
    await turn.ready;
    ctx.txnGuards.endTransaction(p, m.producerId);
    appending = p.appendTxnMarker({ ...m, timestamp: Date.now() });
  } finally {
    turn.done();
  }
  try {
    const res = await appending;
    if (res.errorCode !== ErrorCode.NONE) return res.errorCode;
    const code = await awaitReplication(ctx, p, res.lastOffset + 1, 1, ctx.config.requestTimeoutMs);
    // The group coordinator makes a transaction's offset commits visible (or drops them) here.
    if (code === ErrorCode.NONE)
      for (const l of ctx.txnMarkerListeners) l({ topic, partition, producerId: m.producerId, commit: m.commit, offset: res.baseOffset });
    return code;
  } catch (err) {
    return errorCodeOf(err);
  }
}

/**
 * acks=all: NONE once the high watermark passes `requiredOffset` (at once when the leader is
 * alone in the ISR, as in embedded mode), else a delayed produce woken by the partition's
 * state changes.
 */
function awaitReplication(ctx: AppendContext, p: Partition, requiredOffset: number, minIsr: number, timeoutMs: number): Promise<number> | number {
  const check = p.checkEnoughReplicasReachOffset(requiredOffset, minIsr);
  if (check.done) return check.errorCode;
  if (ctx.isStopped()) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
  return new DelayedProduce(p, requiredOffset, minIsr, timeoutMs, ctx.waitingProduces).completed;
}
