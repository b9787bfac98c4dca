/**
 * Admin operations on the partition side of transactions: the producers a partition's leader
 * (or a chosen replica) tracks, and aborting a transaction left open there by writing its abort
 * marker directly, as Kafka's Admin.abortTransaction does (what kafka-transactions.sh uses to
 * clear a hanging transaction).
 */
import { Api } from './apis.js';
import type { Cluster } from './cluster.js';
import { KafkaError } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';

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
  return p.activeProducers.map((x) => ({
    producerId: x.producerId,
    producerEpoch: x.producerEpoch,
    coordinatorEpoch: x.coordinatorEpoch,
    lastSequence: x.lastSequence,
    lastTimestamp: x.lastTimestamp,
    currentTransactionStartOffset: x.currentTxnStartOffset,
  }));
}

/** Writes the abort marker of `spec`'s transaction on its partition's leader. */
export async function abortTransaction(cluster: Cluster, spec: AbortTransactionSpec): Promise<void> {
  const conn = await connectionFor(cluster, spec.topic, spec.partition);
  const resp = await conn.send(Api.WriteTxnMarkers, {
    markers: [{
      producerId: spec.producerId,
      producerEpoch: spec.producerEpoch,
      coordinatorEpoch: spec.coordinatorEpoch,
      transactionResult: false,
      topics: [{ name: spec.topic, partitionIndexes: [spec.partition] }],
    }],
  });
  const code = resp.markers[0]?.topics[0]?.partitions[0]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
  if (code !== ErrorCode.NONE) throw new KafkaError(code);
}
