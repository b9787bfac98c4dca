/**
 * Admin operations on the partition side of transactions: the producers a partition's leader
 * (or a chosen replica) tracks, and aborting a transaction left open there by writing its abort
 * marker directly, as Kafka's Admin.abortTransaction does (what kafka-transactions.sh uses to
 * clear a hanging transaction).
 */
import { Api } from './apis.js';
import { sleep, type Cluster } from './cluster.js';
import { KafkaError } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ProducerState } from '../protocol/messages/61-describe-producers.js';

export interface ProducerStateDescription {
  producerId: bigint;
  producerEpoch: number;
  /** -1: no marker seen yet. */
  coordinatorEpoch: number;
  lastSequence: number;
  lastTimestamp: bigint;
  /** -1: no open transaction. */
  currentTransactionStartOffset: bigint;
}

export interface AbortTransactionSpec {
  topic: string;
  partition: number;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
}

/** A DescribeProducers answer's producer in the Admin's terms. */
function producerStateOf(x: ProducerState): ProducerStateDescription {
  return {
    producerId: x.producerId,
    producerEpoch: x.producerEpoch,
    coordinatorEpoch: x.coordinatorEpoch,
    lastSequence: x.lastSequence,
    lastTimestamp: x.lastTimestamp,
    currentTransactionStartOffset: x.currentTxnStartOffset,
  };
}

async function connectionFor(cluster: Cluster, topic: string, partition: number, brokerId?: number) {
  if (brokerId !== undefined) return cluster.brokerConnection(brokerId);
  await cluster.topicsMetadata([topic]);
  const leader = cluster.leaderFor(topic, partition);
  if (leader < 0) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `UNKNOWN_TOPIC_OR_PARTITION (topic ${topic})`);
  return cluster.brokerConnection(leader);
}

/** The active producers of one partition, from its leader or from `brokerId`. */
export async function describeProducers(cluster: Cluster, topic: string, partition: number, brokerId?: number): Promise<ProducerStateDescription[]> {
  const conn = await connectionFor(cluster, topic, partition, brokerId);
  const resp = await conn.send(Api.DescribeProducers, { topics: [{ name: topic, partitionIndexes: [partition] }] });
  const p = resp.topics.find((t) => t.name === topic)?.partitions.find((x) => x.partitionIndex === partition);
  if (!p) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `no answer for ${topic}-${partition}`);
  if (p.errorCode !== ErrorCode.NONE) throw new KafkaError(p.errorCode, p.errorMessage ?? undefined);
  return p.activeProducers.map(producerStateOf);
}

/** Writes the abort marker of `spec`'s transaction on its partition's leader. */
export async function abortTransaction(cluster: Cluster, spec: AbortTransactionSpec): Promise<void> {
  const conn = await connectionFor(cluster, spec.topic, spec.partition);
  const resp = await conn.send(Api.WriteTxnMarkers, {
    markers: [
      {
        producerId: spec.producerId,
        producerEpoch: spec.producerEpoch,
        coordinatorEpoch: spec.coordinatorEpoch,
        transactionResult: false,
        topics: [{ name: spec.topic, partitionIndexes: [spec.partition] }],
      },
    ],
  });
  const code = resp.markers[0]?.topics[0]?.partitions[0]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
  if (code !== ErrorCode.NONE) throw new KafkaError(code);
}

export interface PartitionRef {
  topic: string;
  partition: number;
}

/**
 * The active producers of many partitions in one DescribeProducers request per broker (the
 * leader of each, or `brokerId` for all); any partition's error fails the whole call, as
 * Kafka's `describeProducers(...).all()`.
 */
export async function describeProducersOf(
  cluster: Cluster,
  partitions: readonly PartitionRef[],
  brokerId?: number,
): Promise<Map<PartitionRef, ProducerStateDescription[]>> {
  const byBroker = new Map<number, PartitionRef[]>();
  if (brokerId === undefined && partitions.length > 0) await cluster.topicsMetadata([...new Set(partitions.map((p) => p.topic))]);
  for (const p of partitions) {
    const node = brokerId ?? cluster.leaderFor(p.topic, p.partition);
    if (node < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `no leader for ${p.topic}-${p.partition}`);
    const list = byBroker.get(node) ?? [];
    list.push(p);
    byBroker.set(node, list);
  }
  const out = new Map<PartitionRef, ProducerStateDescription[]>();
  for (const [node, refs] of byBroker) {
    const topics = new Map<string, number[]>();
    for (const r of refs) topics.set(r.topic, [...(topics.get(r.topic) ?? []), r.partition]);
    const conn = await cluster.brokerConnection(node);
    const resp = await conn.send(Api.DescribeProducers, { topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })) });
    for (const r of refs) {
      const p = resp.topics.find((t) => t.name === r.topic)?.partitions.find((x) => x.partitionIndex === r.partition);
      if (!p) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `no answer for ${r.topic}-${r.partition}`);
      if (p.errorCode !== ErrorCode.NONE) throw new KafkaError(p.errorCode, `${r.topic}-${r.partition}: ${p.errorMessage ?? ''}`);
      out.set(r, p.activeProducers.map(producerStateOf));
    }
  }
  return out;
}

export interface TransactionListing {
  transactionalId: string;
  producerId: bigint;
  /** Kafka's state name: Empty, Ongoing, PrepareCommit, ... */
  state: string;
}

export interface ListTransactionsOptions {
  states?: readonly string[];
  producerIds?: readonly bigint[];
  /** Only transactions running longer than this (ListTransactions v1); < 0 or absent: all. */
  durationFilterMs?: number;
}

/** ListTransactions on every broker, by broker id (Kafka's `allByBrokerId`). */
export async function listTransactions(cluster: Cluster, opts: ListTransactionsOptions = {}): Promise<Map<number, TransactionListing[]>> {
  const md = await cluster.refreshMetadata([]);
  const out = new Map<number, TransactionListing[]>();
  for (const id of [...md.brokers.keys()].sort((a, b) => a - b)) {
    const conn = await cluster.brokerConnection(id);
    const resp = await conn.send(Api.ListTransactions, {
      stateFilters: [...(opts.states ?? [])],
      producerIdFilters: [...(opts.producerIds ?? [])],
      durationFilter: BigInt(opts.durationFilterMs ?? -1),
    });
    if (resp.errorCode !== ErrorCode.NONE) throw new KafkaError(resp.errorCode, `listing transactions on broker ${id} failed`);
    out.set(
      id,
      resp.transactionStates.map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, state: t.transactionState })),
    );
  }
  return out;
}

export interface TransactionDescription {
  coordinatorId: number;
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  state: string;
  transactionTimeoutMs: number;
  /** -1: no transaction in progress. */
  transactionStartTimeMs: bigint;
  topicPartitions: PartitionRef[];
}

const COORDINATOR_MOVED: ReadonlySet<number> = new Set([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

/** The transaction coordinator of `transactionalId` (FindCoordinator key type 1), by node id. */
async function findTxnCoordinator(cluster: Cluster, transactionalId: string): Promise<number> {
  const conn = await cluster.anyConnection();
  const resp = await conn.send(Api.FindCoordinator, { key: transactionalId, keyType: 1, coordinatorKeys: [transactionalId] });
  const c = resp.coordinators.length > 0 ? resp.coordinators[0]! : resp;
  if (c.errorCode !== ErrorCode.NONE) throw new KafkaError(c.errorCode, c.errorMessage ?? undefined);
  return c.nodeId;
}

/**
 * DescribeTransactions at `transactionalId`'s coordinator, found again while it is loading or
 * has moved (until the request timeout). An unknown id fails with TRANSACTIONAL_ID_NOT_FOUND.
 */
export async function describeTransaction(cluster: Cluster, transactionalId: string): Promise<TransactionDescription> {
  const deadline = Date.now() + cluster.requestTimeoutMs;
  for (;;) {
    let code: number;
    try {
      const coordinatorId = await findTxnCoordinator(cluster, transactionalId);
      await cluster.refreshMetadata([]);
      const conn = await cluster.brokerConnection(coordinatorId);
      const resp = await conn.send(Api.DescribeTransactions, { transactionalIds: [transactionalId] });
      const t = resp.transactionStates.find((x) => x.transactionalId === transactionalId) ?? resp.transactionStates[0];
      if (!t) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `no answer for transactional id ${transactionalId}`);
      code = t.errorCode;
      if (code === ErrorCode.NONE) {
        return {
          coordinatorId,
          transactionalId,
          producerId: t.producerId,
          producerEpoch: t.producerEpoch,
          state: t.transactionState,
          transactionTimeoutMs: t.transactionTimeoutMs,
          transactionStartTimeMs: t.transactionStartTimeMs,
          topicPartitions: t.topics.flatMap((x) => x.partitions.map((partition) => ({ topic: x.topic, partition }))),
        };
      }
    } catch (err) {
      if (!(err instanceof KafkaError) || !COORDINATOR_MOVED.has(err.code)) throw err;
      code = err.code;
    }
    if (!COORDINATOR_MOVED.has(code) || Date.now() + cluster.retryBackoffMs > deadline) throw new KafkaError(code);
    await sleep(cluster.retryBackoffMs);
  }
}
