/**
 * AddPartitionsToTxn v0–v5. v0–v3 (producers): one transaction, one error for all its
 * partitions, except partitions of unknown topics (UNKNOWN_TOPIC_OR_PARTITION), which leave the
 * others OPERATION_NOT_ATTEMPTED, as Kafka. v4+ (partition leaders): a batch of transactions,
 * each either added or, with verify_only, checked (INVALID_TXN_STATE for a partition not in it).
 */
import { AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec } from '../../protocol/messages/index.js';
import type { AddPartitionsToTxnTopic, AddPartitionsToTxnTopicResult } from '../../protocol/messages/24-add-partitions-to-txn.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { Input } from '../../protocol/primitives/index.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { TxnCoordinator } from '../../coordinator/txn/txn-coordinator.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler, type RequestContext } from './types.js';
import { fencedForVersion } from './txn-errors.js';

/** Kafka's checks (v0-v3, from producers): WRITE on the transactional id, then on each topic. */
const may = resourceChecks({
  writeTransactionalId: { resource: ResourceType.TRANSACTIONAL_ID, operation: AclOperation.WRITE },
  writeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.WRITE },
});

interface PartitionError {
  topic: string;
  partition: number;
  errorCode: number;
}

function flatten(topics: readonly AddPartitionsToTxnTopic[]): { topic: string; partition: number }[] {
  return topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
}

function byTopic(results: readonly PartitionError[]): Input<AddPartitionsToTxnTopicResult>[] {
  const topics = new Map<string, { partitionIndex: number; partitionErrorCode: number }[]>();
  for (const r of results) {
    const list = topics.get(r.topic); // appended in place, not copied per partition
    if (list) list.push({ partitionIndex: r.partition, partitionErrorCode: r.errorCode });
    else topics.set(r.topic, [{ partitionIndex: r.partition, partitionErrorCode: r.errorCode }]);
  }
  return [...topics].map(([name, resultsByPartition]) => ({ name, resultsByPartition }));
}

/** ACLs: WRITE on the transactional id, then WRITE per topic (the others OPERATION_NOT_ATTEMPTED); undefined = allowed. */
function denied(ctx: RequestContext, txn: { transactionalId: string; topics: readonly AddPartitionsToTxnTopic[] }): PartitionError[] | undefined {
  if (ctx.services.authorizer === undefined) return undefined;
  const partitions = flatten(txn.topics);
  if (!may.writeTransactionalId.allows(ctx, txn.transactionalId))
    return partitions.map((p) => ({ ...p, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED }));
  const refused = new Set(txn.topics.filter((t) => !may.writeTopic.allows(ctx, t.name)).map((t) => t.name));
  if (refused.size === 0) return undefined;
  return partitions.map((p) => ({ ...p, errorCode: refused.has(p.topic) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.OPERATION_NOT_ATTEMPTED }));
}

async function addOne(
  coordinator: TxnCoordinator,
  metadata: MetadataStore,
  txn: { transactionalId: string; producerId: bigint; producerEpoch: number; verifyOnly: boolean; topics: readonly AddPartitionsToTxnTopic[] },
): Promise<PartitionError[]> {
  const partitions = flatten(txn.topics);
  if (txn.verifyOnly) return (await coordinator.verifyPartitions({ ...txn, partitions })).partitions;
  const unknown = new Set(partitions.filter((p) => (metadata.topic(p.topic)?.partitions.length ?? 0) <= p.partition || p.partition < 0));
  if (unknown.size > 0) {
    return partitions.map((p) => ({ ...p, errorCode: unknown.has(p) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED }));
  }
  const errorCode = await coordinator.addPartitions({ ...txn, partitions });
  return partitions.map((p) => ({ ...p, errorCode }));
}

export const addPartitionsToTxnHandler = defineHandler({
  apiKey: 24,
  request: AddPartitionsToTxnRequestCodec,
  response: AddPartitionsToTxnResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  authorize: {
    // v4+ batches come from partition leaders: CLUSTER_ACTION on the cluster, as Kafka.
    cluster: AclOperation.CLUSTER_ACTION,
    appliesTo: (_req, version) => version >= 4,
    denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] }),
    resources: may,
  },
  async handle(req, ctx) {
    const { txnCoordinator, metadata } = ctx.services;
    if (ctx.header.apiVersion <= 3) {
      const results =
        denied(ctx, { transactionalId: req.v3AndBelowTransactionalId, topics: req.v3AndBelowTopics }) ??
        (await addOne(txnCoordinator, metadata, {
          transactionalId: req.v3AndBelowTransactionalId,
          producerId: req.v3AndBelowProducerId,
          producerEpoch: req.v3AndBelowProducerEpoch,
          verifyOnly: false,
          topics: req.v3AndBelowTopics,
        }));
      const v = ctx.header.apiVersion;
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        resultsByTopicV3AndBelow: byTopic(results.map((r) => ({ ...r, errorCode: fencedForVersion(r.errorCode, v, 2) }))),
      };
    }
    const resultsByTransaction = await Promise.all(
      req.transactions.map(async (t) => ({ transactionalId: t.transactionalId, topicResults: byTopic(await addOne(txnCoordinator, metadata, t)) })),
    );
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction };
  },
});
