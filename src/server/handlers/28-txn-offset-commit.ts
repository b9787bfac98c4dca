/**
 * TxnOffsetCommit v0–v4: a transactional producer commits a group's offsets inside its
 * transaction (sendOffsetsToTransaction). The group coordinator writes them as a transactional
 * batch; OffsetFetch sees them only once the transaction commits (UNSTABLE_OFFSET_COMMIT to
 * require_stable fetches meanwhile). Partitions of unknown topics get UNKNOWN_TOPIC_OR_PARTITION.
 */
import { TxnOffsetCommitRequestCodec, TxnOffsetCommitResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeGroup, authorizeTopic, authorizeTransactionalId } from './authz.js';
import { defineHandler } from './types.js';

export const txnOffsetCommitHandler = defineHandler({
  apiKey: 28,
  request: TxnOffsetCommitRequestCodec,
  response: TxnOffsetCommitResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  async handle(req, ctx) {
    const { metadata, groupCoordinator } = ctx.services;
    // ACLs: WRITE on the transactional id, READ on the group, READ per topic.
    const whole = !authorizeTransactionalId(ctx, AclOperation.WRITE, req.transactionalId) ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
      : !authorizeGroup(ctx, AclOperation.READ, req.groupId) ? ErrorCode.GROUP_AUTHORIZATION_FAILED : ErrorCode.NONE;
    if (whole !== ErrorCode.NONE) {
      return { throttleTimeMs: 0, topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: whole })) })) };
    }
    const refusedTopics = new Set(req.topics.filter((t) => !authorizeTopic(ctx, AclOperation.READ, t.name)).map((t) => t.name));
    const exists = (topic: string, p: number): boolean => p >= 0 && p < (metadata.topic(topic)?.partitions.length ?? 0);
    const known = req.topics.filter((t) => !refusedTopics.has(t.name)).map((t) => ({ name: t.name, partitions: t.partitions.filter((p) => exists(t.name, p.partitionIndex)) })).filter((t) => t.partitions.length > 0);
    const results = known.length === 0 ? [] : await groupCoordinator.commitTransactionalOffsets({
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
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: refusedTopics.has(t.name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : codes.get(`${t.name}\u0000${p.partitionIndex}`) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })),
      })),
    };
  },
});
