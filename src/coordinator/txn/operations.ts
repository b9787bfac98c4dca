/**
 * The transaction coordinator's operations, as Kafka's TransactionCoordinator: each reads the
 * shard, does no I/O and returns the records to write with the response. What must happen once
 * a prepare record is durable (the markers) is hooked to `onDurable`.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { OperationResult } from '../runtime/types.js';
import type { TxnRecord } from './records.js';
import type { TxnShard } from './txn-shard.js';
import {
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  TxnState,
  hasPartition,
  isEpochExhausted,
  partitionList,
  transition,
  txnStateName,
  withPartitions,
  type TxnMetadata,
  type TxnStateValue,
} from './txn-state.js';

type Result<T> = OperationResult<T, TxnRecord>;
const answer = <T>(response: T): Result<T> => ({ records: [], response });
const write = (m: TxnMetadata): TxnRecord => ({ transactionalId: m.transactionalId, metadata: m });

export interface TopicPartition {
  topic: string;
  partition: number;
}

// ---- InitProducerId ----

export interface InitProducerIdRequest {
  transactionalId: string;
  transactionTimeoutMs: number;
  /** KIP-360: the producer id and epoch the client has (-1 when it has none). */
  producerId: bigint;
  producerEpoch: number;
}

export type InitProducerIdOutcome = { errorCode: number; producerId: bigint; producerEpoch: number } | { needProducerId: true };

const initError = (errorCode: number): InitProducerIdOutcome => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });

/**
 * InitProducerId with a transactional id. A new id, or an epoch that would overflow, needs a
 * fresh producer id: without `freshProducerId` the operation answers `needProducerId` (and
 * writes nothing); the caller allocates one and runs it again.
 */
export function initProducerId(shard: TxnShard, req: InitProducerIdRequest, now: number, freshProducerId?: bigint): Result<InitProducerIdOutcome> {
  if (req.transactionalId === '') return answer(initError(ErrorCode.INVALID_REQUEST));
  if (req.transactionTimeoutMs <= 0 || req.transactionTimeoutMs > shard.config.transactionMaxTimeoutMs)
    return answer(initError(ErrorCode.INVALID_TRANSACTION_TIMEOUT));
  const m = shard.txns.get(req.transactionalId);
  if (m === undefined) {
    if (freshProducerId === undefined) return answer({ needProducerId: true });
    const created: TxnMetadata = {
      transactionalId: req.transactionalId,
      producerId: freshProducerId,
      lastProducerId: NO_PRODUCER_ID,
      producerEpoch: 0,
      lastProducerEpoch: NO_PRODUCER_EPOCH,
      txnTimeoutMs: req.transactionTimeoutMs,
      state: TxnState.Empty,
      topicPartitions: new Map(),
      txnStartTimestamp: -1,
      txnLastUpdateTimestamp: now,
    };
    return { records: [write(created)], response: { errorCode: ErrorCode.NONE, producerId: created.producerId, producerEpoch: 0 } };
  }
  const expected = req.producerId !== NO_PRODUCER_ID || req.producerEpoch !== NO_PRODUCER_EPOCH;
  let isRetry = false;
  if (expected) {
    const current = req.producerId === m.producerId && req.producerEpoch === m.producerEpoch;
    // The answer of an earlier bump was lost: the client still has the epoch before it.
    isRetry =
      m.lastProducerEpoch !== NO_PRODUCER_EPOCH &&
      req.producerEpoch === m.lastProducerEpoch &&
      (req.producerId === m.producerId || (m.lastProducerId !== NO_PRODUCER_ID && req.producerId === m.lastProducerId));
    if (!current && !isRetry) return answer(initError(ErrorCode.PRODUCER_FENCED));
  }
  switch (m.state) {
    case TxnState.PrepareCommit:
    case TxnState.PrepareAbort:
    case TxnState.PrepareEpochFence:
    case TxnState.Dead:
      return answer(initError(ErrorCode.CONCURRENT_TRANSACTIONS));
    case TxnState.Ongoing: {
      // A new producer (or a restarted one) takes the id over: the open transaction is aborted
      // under a bumped epoch, which fences the old producer; the caller retries until it is done.
      const aborting = fenceAndAbort(m, now);
      return { records: [write(aborting)], response: initError(ErrorCode.CONCURRENT_TRANSACTIONS), onDurable: () => shard.prepared(aborting) };
    }
    default: {
      if (isRetry) return answer({ errorCode: ErrorCode.NONE, producerId: m.producerId, producerEpoch: m.producerEpoch });
      let next: TxnMetadata;
      const reset = { txnTimeoutMs: req.transactionTimeoutMs, topicPartitions: new Map(), txnStartTimestamp: -1, txnLastUpdateTimestamp: now };
      if (isEpochExhausted(m.producerEpoch)) {
        if (freshProducerId === undefined) return answer({ needProducerId: true });
        next = transition(m, TxnState.Empty, {
          ...reset,
          producerId: freshProducerId,
          producerEpoch: 0,
          lastProducerId: m.producerId,
          lastProducerEpoch: m.producerEpoch,
        });
      } else {
        next = transition(m, TxnState.Empty, { ...reset, producerEpoch: m.producerEpoch + 1, lastProducerEpoch: m.producerEpoch });
      }
      return { records: [write(next)], response: { errorCode: ErrorCode.NONE, producerId: next.producerId, producerEpoch: next.producerEpoch } };
    }
  }
}

/** Ongoing → PrepareEpochFence (epoch + 1, in memory) → PrepareAbort, which is what is written. */
function fenceAndAbort(m: TxnMetadata, now: number): TxnMetadata {
  const epoch = isEpochExhausted(m.producerEpoch) ? m.producerEpoch : m.producerEpoch + 1;
  const fenced = transition(m, TxnState.PrepareEpochFence, { producerEpoch: epoch, lastProducerEpoch: m.producerEpoch });
  return transition(fenced, TxnState.PrepareAbort, { txnLastUpdateTimestamp: now });
}

// ---- AddPartitionsToTxn / AddOffsetsToTxn ----

export interface TxnProducer {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

/** The checks every producer request makes of its id and epoch; NONE when it may go on. */
function checkProducer(m: TxnMetadata | undefined, req: TxnProducer): number {
  if (m === undefined || m.producerId !== req.producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
  if (m.producerEpoch !== req.producerEpoch) return ErrorCode.PRODUCER_FENCED;
  return ErrorCode.NONE;
}

/** Adds partitions to the transaction (starting it when none is open); one error for all. */
export function addPartitions(shard: TxnShard, req: TxnProducer & { partitions: TopicPartition[] }, now: number): Result<number> {
  const m = shard.txns.get(req.transactionalId);
  const err = checkProducer(m, req);
  if (err !== ErrorCode.NONE || m === undefined) return answer(err);
  switch (m.state) {
    case TxnState.PrepareCommit:
    case TxnState.PrepareAbort:
    case TxnState.PrepareEpochFence:
    case TxnState.Dead:
      return answer(ErrorCode.CONCURRENT_TRANSACTIONS);
    default:
  }
  if (m.state === TxnState.Ongoing && req.partitions.every((p) => hasPartition(m, p.topic, p.partition))) return answer(ErrorCode.NONE);
  const next = transition(m, TxnState.Ongoing, {
    topicPartitions: withPartitions(m, req.partitions),
    txnStartTimestamp: m.state === TxnState.Ongoing ? m.txnStartTimestamp : now,
    txnLastUpdateTimestamp: now,
  });
  return { records: [write(next)], response: ErrorCode.NONE };
}

/** AddPartitionsToTxn v4+ with verify_only (a partition leader asking): an error per partition. */
export function verifyPartitions(
  shard: TxnShard,
  req: TxnProducer & { partitions: TopicPartition[] },
): { errorCode: number; partitions: { topic: string; partition: number; errorCode: number }[] } {
  const m = shard.txns.get(req.transactionalId);
  const err = checkProducer(m, req);
  if (err !== ErrorCode.NONE || m === undefined) return { errorCode: err, partitions: req.partitions.map((p) => ({ ...p, errorCode: err })) };
  return {
    errorCode: ErrorCode.NONE,
    partitions: req.partitions.map((p) => ({
      ...p,
      errorCode: m.state === TxnState.Ongoing && hasPartition(m, p.topic, p.partition) ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE,
    })),
  };
}

// ---- EndTxn ----

export interface EndTxnOutcome {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

/** Writes PrepareCommit/PrepareAbort; once durable the markers go out (`onDurable`), then Complete. */
export function endTxn(shard: TxnShard, req: TxnProducer & { commit: boolean }, now: number): Result<EndTxnOutcome> {
  const m = shard.txns.get(req.transactionalId);
  const fail = (errorCode: number): Result<EndTxnOutcome> => answer({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
  const err = checkProducer(m, req);
  if (err !== ErrorCode.NONE || m === undefined) return fail(err);
  const ok = (): Result<EndTxnOutcome> => answer({ errorCode: ErrorCode.NONE, producerId: m.producerId, producerEpoch: m.producerEpoch });
  switch (m.state) {
    case TxnState.Ongoing: {
      const next = transition(m, req.commit ? TxnState.PrepareCommit : TxnState.PrepareAbort, { txnLastUpdateTimestamp: now });
      return {
        records: [write(next)],
        response: { errorCode: ErrorCode.NONE, producerId: m.producerId, producerEpoch: m.producerEpoch },
        onDurable: () => shard.prepared(next),
      };
    }
    // A retry of an EndTxn that completed: the same outcome is fine, the other one is not.
    case TxnState.CompleteCommit:
      return req.commit ? ok() : fail(ErrorCode.INVALID_TXN_STATE);
    case TxnState.CompleteAbort:
      return req.commit ? fail(ErrorCode.INVALID_TXN_STATE) : ok();
    case TxnState.PrepareCommit:
      return fail(req.commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
    case TxnState.PrepareAbort:
      return fail(req.commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS);
    case TxnState.PrepareEpochFence:
      return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    default:
      return fail(ErrorCode.INVALID_TXN_STATE);
  }
}

/**
 * Every marker of a prepared transaction is written: CompleteCommit/CompleteAbort. Nothing when
 * the transaction moved on meanwhile (another coordinator completed it, the id expired).
 */
export function completeTxn(shard: TxnShard, prepared: TxnMetadata, now: number): Result<boolean> {
  const m = shard.txns.get(prepared.transactionalId);
  if (m === undefined || m.state !== prepared.state || m.producerId !== prepared.producerId || m.producerEpoch !== prepared.producerEpoch) return answer(false);
  const to: TxnStateValue = m.state === TxnState.PrepareCommit ? TxnState.CompleteCommit : TxnState.CompleteAbort;
  return { records: [write(transition(m, to, { topicPartitions: new Map(), txnLastUpdateTimestamp: now }))], response: true };
}

// ---- timeouts and expiry ----

/** Ongoing transactions past their timeout are aborted under a bumped epoch (the producer is fenced). */
export function abortTimedOut(shard: TxnShard, now: number): Result<string[]> {
  const records: TxnRecord[] = [];
  const aborting: TxnMetadata[] = [];
  for (const m of shard.txns.values()) {
    if (m.state !== TxnState.Ongoing || m.txnStartTimestamp + m.txnTimeoutMs >= now) continue;
    const next = fenceAndAbort(m, now);
    records.push(write(next));
    aborting.push(next);
  }
  return { records, response: aborting.map((m) => m.transactionalId), onDurable: () => aborting.forEach((m) => shard.prepared(m)) };
}

/** Ids idle (no transaction open) for transactional.id.expiration.ms: tombstones. */
export function expireTransactionalIds(shard: TxnShard, now: number): Result<string[]> {
  const expired: string[] = [];
  for (const m of shard.txns.values()) {
    if (m.state !== TxnState.Empty && m.state !== TxnState.CompleteCommit && m.state !== TxnState.CompleteAbort) continue;
    if (m.txnLastUpdateTimestamp + shard.config.transactionalIdExpirationMs > now) continue;
    transition(m, TxnState.Dead, {}); // checked against the table; Dead is never written, the tombstone is
    expired.push(m.transactionalId);
  }
  return { records: expired.map((transactionalId) => ({ transactionalId, metadata: null })), response: expired };
}

// ---- reads ----

export interface DescribedTxn {
  errorCode: number;
  transactionalId: string;
  transactionState: string;
  transactionTimeoutMs: number;
  transactionStartTimeMs: bigint;
  producerId: bigint;
  producerEpoch: number;
  topics: { topic: string; partitions: number[] }[];
}

export function describeTxn(shard: TxnShard, transactionalId: string): DescribedTxn {
  const m = shard.txns.get(transactionalId);
  if (m === undefined || m.state === TxnState.Dead) {
    return {
      errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
      transactionalId,
      transactionState: '',
      transactionTimeoutMs: 0,
      transactionStartTimeMs: -1n,
      producerId: -1n,
      producerEpoch: -1,
      topics: [],
    };
  }
  const topics = new Map<string, number[]>();
  for (const { topic, partition } of partitionList(m)) {
    const list = topics.get(topic); // appended in place, not copied per partition
    if (list) list.push(partition);
    else topics.set(topic, [partition]);
  }
  return {
    errorCode: ErrorCode.NONE,
    transactionalId,
    transactionState: txnStateName(m.state),
    transactionTimeoutMs: m.txnTimeoutMs,
    transactionStartTimeMs: BigInt(m.txnStartTimestamp),
    producerId: m.producerId,
    producerEpoch: m.producerEpoch,
    topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
  };
}

export interface ListedTxn {
  transactionalId: string;
  producerId: bigint;
  transactionState: string;
}

export interface ListTxnFilters {
  states: ReadonlySet<TxnStateValue>;
  producerIds: ReadonlySet<bigint>;
  /** Only transactions running longer than this (ms); -1: any. */
  minDurationMs: number;
}

export function listTxns(shard: TxnShard, f: ListTxnFilters, now: number): ListedTxn[] {
  const out: ListedTxn[] = [];
  for (const m of shard.txns.values()) {
    if (m.state === TxnState.Dead) continue;
    if (f.states.size > 0 && !f.states.has(m.state)) continue;
    if (f.producerIds.size > 0 && !f.producerIds.has(m.producerId)) continue;
    if (f.minDurationMs >= 0 && (m.txnStartTimestamp < 0 || now - m.txnStartTimestamp <= f.minDurationMs)) continue;
    out.push({ transactionalId: m.transactionalId, producerId: m.producerId, transactionState: txnStateName(m.state) });
  }
  return out;
}
