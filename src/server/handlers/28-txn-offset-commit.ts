/**
 * TxnOffsetCommit v0–v4: a transactional producer commits a group's offsets inside its
 * transaction (sendOffsetsToTransaction). The group coordinator writes them as a transactional
 * batch; OffsetFetch sees them only once the transaction commits (UNSTABLE_OFFSET_COMMIT to
 * require_stable fetches meanwhile). Partitions of unknown topics get UNKNOWN_TOPIC_OR_PARTITION.
 *
 * As Kafka 3.6+ (KIP-890 part 1, TxnOffsetCommit verification), the transaction coordinator is
 * asked first whether this producer epoch has an ongoing transaction holding the group's
 * `__consumer_offsets` partition (AddOffsetsToTxn put it there): a fenced producer gets
 * INVALID_PRODUCER_EPOCH at every version (Kafka turns the coordinator's PRODUCER_FENCED into
 * it), one that did not add the group INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v4, the
 * version that added it), and nothing is written, so no stale
 * commit can sit pending with no marker to end it. Without verification a fenced producer whose
 * epoch `__consumer_offsets` never saw would be accepted. The coordinator is asked wherever it
 * lives (coordinator/txn/txn-verification.ts: this broker's, or another broker's with
 * AddPartitionsToTxn verify_only), so the answer does not depend on which broker leads the id's
 * `__transaction_state` partition. Its other errors reach the client as Kafka 3.9's
 * GroupMetadataManager passes them (INVALID_PRODUCER_ID_MAPPING, CONCURRENT_TRANSACTIONS,
 * NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE...), NETWORK_EXCEPTION (the coordinator could not
 * be asked) as COORDINATOR_LOAD_IN_PROGRESS, which clients retry without a coordinator lookup.
 */
import { TxnOffsetCommitRequestCodec, TxnOffsetCommitResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import type { TxnVerification } from '../../coordinator/txn/txn-verification.js';

/** Kafka's checks: WRITE on the transactional id, READ on the group, then READ on each topic. */
const may = resourceChecks({
  writeTransactionalId: { resource: ResourceType.TRANSACTIONAL_ID, operation: AclOperation.WRITE },
  readGroup: { resource: ResourceType.GROUP, operation: AclOperation.READ },
  readTopic: { resource: ResourceType.TOPIC, operation: AclOperation.READ },
});

/** The verification's answer for the whole request (one partition: the group's offsets partition). */
async function verify(txn: TxnVerification, transactionalId: string, producerId: bigint, producerEpoch: number, offsetsPartition: number): Promise<number> {
  const [verdict] = await txn.verify({
    transactionalId,
    producerId,
    producerEpoch,
    partitions: [{ topic: '__consumer_offsets', partition: offsetsPartition }],
  });
  const code = verdict?.errorCode ?? ErrorCode.NONE;
  return code === ErrorCode.NETWORK_EXCEPTION ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : code;
}

export const txnOffsetCommitHandler = defineHandler({
  apiKey: 28,
  request: TxnOffsetCommitRequestCodec,
  response: TxnOffsetCommitResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  authorize: { resources: may },
  async handle(req, ctx) {
    const { metadata, groupCoordinator, txnVerification } = ctx.services;
    const answerAll = (errorCode: number) => ({
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
    });
    // ACLs first, as Kafka: WRITE on the transactional id, READ on the group, READ per topic.
    const whole = !may.writeTransactionalId.allows(ctx, req.transactionalId)
      ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
      : !may.readGroup.allows(ctx, req.groupId)
        ? ErrorCode.GROUP_AUTHORIZATION_FAILED
        : ErrorCode.NONE;
    if (whole !== ErrorCode.NONE) return answerAll(whole);
    let verified = await verify(txnVerification, req.transactionalId, req.producerId, req.producerEpoch, groupCoordinator.partitionFor(req.groupId));
    if (verified === ErrorCode.INVALID_TXN_STATE && ctx.header.apiVersion >= 4) verified = ErrorCode.TRANSACTION_ABORTABLE;
    if (verified !== ErrorCode.NONE) return answerAll(verified);
    const refusedTopics = new Set(req.topics.filter((t) => !may.readTopic.allows(ctx, t.name)).map((t) => t.name));
    const exists = (topic: string, p: number): boolean => p >= 0 && p < (metadata.topic(topic)?.partitions.length ?? 0);
    const known = req.topics
      .filter((t) => !refusedTopics.has(t.name))
      .map((t) => ({ name: t.name, partitions: t.partitions.filter((p) => exists(t.name, p.partitionIndex)) }))
      .filter((t) => t.partitions.length > 0);
    const results =
      known.length === 0
        ? []
        : await groupCoordinator.commitTransactionalOffsets({
            groupId: req.groupId,
            producerId: req.producerId,
            producerEpoch: req.producerEpoch,
            generationId: req.generationId,
            memberId: req.memberId,
            groupInstanceId: req.groupInstanceId,
            topics: known,
          });
    const codes = new Map<string, number>();
    for (const t of results) for (const p of t.partitions) codes.set(`${t.name}\u0000${p.partitionIndex}`, p.errorCode);
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode: refusedTopics.has(t.name)
            ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
            : (codes.get(`${t.name}\u0000${p.partitionIndex}`) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        })),
      })),
    };
  },
});
