/**
 * Produce v0-v11: appends each partition's batches through the partitions' owners (one
 * request-level call, replication/shards/partition-shards.ts); acks=all waits,
 * up to the request's timeout_ms, until the in-sync replicas hold them. acks=0 gets no
 * response (and, as in Kafka, a failed acks=0 produce closes the connection so the client
 * refreshes its metadata). An unknown topic is answered UNKNOWN_TOPIC_OR_PARTITION like Kafka
 * does; when auto-creation is on, creation is started so the client's retry succeeds. A
 * transactional produce is verified with the transaction coordinator first (KIP-890 part 1,
 * ../txn-produce-verification.ts).
 */
import { ProduceRequestCodec, ProduceResponseCodec } from '../../protocol/messages/index.js';
import type { PartitionProduceResponse, TopicProduceResponse } from '../../protocol/messages/00-produce.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { Input } from '../../protocol/primitives/index.js';
import { topicNameError } from '../../metadata/topic-names.js';
import { ADMIN_CLIENT_ID } from '../../metadata/cluster-model.js';
import { CloseConnectionError } from '../network/types.js';
import { autoCreateTopics } from '../topic-creation.js';
import { recordProduceBytes, throttleProduce } from '../quotas/request-quotas.js';
import { produceVerificationOf } from '../txn-produce-verification.js';
import { defineHandler, type RequestContext } from './types.js';
import { shardsOf } from '../broker-services.js';
import type { ProducePart } from '../../replication/shards/partition-shards.js';
import { AclOperation, CLUSTER_NAME, ResourceType, resourceChecks } from './authz.js';

/** Kafka's checks: WRITE on the transactional id, then on each topic; CREATE (cluster or topic) to auto-create one. */
const may = resourceChecks({
  writeTransactionalId: { resource: ResourceType.TRANSACTIONAL_ID, operation: AclOperation.WRITE },
  writeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.WRITE },
  createTopics: { resource: ResourceType.CLUSTER, operation: AclOperation.CREATE },
  createTopic: { resource: ResourceType.TOPIC, operation: AclOperation.CREATE },
});

/**
 * Starts creating the unknown topics a produce named (one batch per request, under the same
 * limits as Metadata's auto-creation); the client's retry finds them.
 */
function startAutoCreate(ctx: RequestContext, unknown: ReadonlySet<string>): void {
  const { services } = ctx;
  if (!services.config.autoCreateTopicsEnable) return;
  const names: string[] = [];
  for (const topic of unknown) {
    if (names.length >= services.config.autoCreateTopicsMaxPerRequest) break; // the rest: a later request
    if (topicNameError(topic) || services.metadata.topic(topic)) continue;
    if (may.createTopics.allows(ctx, CLUSTER_NAME) || may.createTopic.allows(ctx, topic)) names.push(topic);
  }
  if (names.length === 0) return;
  void autoCreateTopics(services, names)
    .then((created) =>
      Promise.all(
        [...created].map(([topic, outcome]) =>
          outcome instanceof KafkaError
            ? services.logger.debug({ topic, err: outcome.message }, 'auto-create on produce failed')
            : services.replicaManager.syncTopic(topic),
        ),
      ),
    )
    .catch((err: unknown) => services.logger.debug({ err: String(err) }, 'auto-create on produce failed'));
}

export const produceHandler = defineHandler({
  apiKey: 0,
  request: ProduceRequestCodec,
  response: ProduceResponseCodec,
  minVersion: 0,
  maxVersion: 11,
  // Only a produce naming more than 64 topics is encoded in slices; the hot path is as it was.
  slicedField: 'responses',
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    // Kafka's rule (KafkaApis): internal topics take Produce only from its admin client id.
    const internalTopicsAllowed = ctx.header.clientId === ADMIN_CLIENT_ID;
    let failed = false;
    let unknownTopics: Set<string> | undefined; // made only when a topic is unknown: not per produce
    // ACLs (one branch when no authorizer): WRITE on the transactional id, then WRITE per topic.
    let deniedCode: (topic: string) => number = () => ErrorCode.NONE;
    if (ctx.services.authorizer !== undefined) {
      const txnDenied = req.transactionalId !== null && !may.writeTransactionalId.allows(ctx, req.transactionalId);
      deniedCode = (topic) =>
        txnDenied ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : may.writeTopic.allows(ctx, topic) ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    }
    // KIP-890: only a transactional produce waits here (nothing new on the other produces' path).
    const admission =
      req.transactionalId === null
        ? undefined
        : await produceVerificationOf(ctx.services).admit(req.transactionalId, req.topicData, (topic) => deniedCode(topic) !== ErrorCode.NONE);
    // Pass 1: what is refused is answered here; the rest becomes one request to the partitions' owners.
    const responses = new Array<Input<TopicProduceResponse>>(req.topicData.length);
    const parts: ProducePart[] = [];
    for (let ti = 0; ti < req.topicData.length; ti++) {
      const t = req.topicData[ti]!;
      const denied = deniedCode(t.name);
      if (denied !== ErrorCode.NONE) {
        failed = true;
        responses[ti] = { name: t.name, partitionResponses: t.partitionData.map((pd) => ({ index: pd.index, errorCode: denied, baseOffset: -1n })) };
        continue;
      }
      // Holes are the appended partitions' answers, filled in order in pass 2.
      const partitionResponses = new Array<Input<PartitionProduceResponse>>(t.partitionData.length);
      for (let pi = 0; pi < t.partitionData.length; pi++) {
        const pd = t.partitionData[pi]!;
        const verdict = admission?.verdict(t.name, pd.index);
        if (verdict !== undefined && 'errorCode' in verdict) {
          ctx.services.topicStats?.produced(t.name, verdict.errorCode, pd.records);
          failed = true;
          partitionResponses[pi] = { index: pd.index, errorCode: verdict.errorCode, baseOffset: -1n, errorMessage: verdict.errorMessage };
          continue;
        }
        parts.push(
          verdict
            ? { topic: t.name, partition: pd.index, records: pd.records, verifiedTxn: verdict.verifiedTxn }
            : { topic: t.name, partition: pd.index, records: pd.records },
        );
      }
      responses[ti] = { name: t.name, partitionResponses };
    }
    // Quotas (Kafka: appended regardless, then answered with the throttle time): the bytes are
    // counted and the connection muted as the parts are handed over (recordProduceBytes says why).
    let recordBytes = 0;
    for (const t of req.topicData) for (const pd of t.partitionData) recordBytes += pd.records?.length ?? 0;
    const bandwidthThrottleMs = recordProduceBytes(ctx, recordBytes);
    // Every part's arrival turn is taken inside produce() (PartitionShards' contract): the
    // producer's later batches (KIP-890's admission) may go once it returns.
    const appending = shardsOf(ctx.services).produce(parts, {
      requiredAcks: req.acks,
      origin: 'client',
      internalTopicsAllowed,
      produceVersion: version,
      timeoutMs: req.timeoutMs,
    });
    if (admission) for (const part of parts) admission.release(part.topic, part.partition);
    const outcomes = await appending;
    // Pass 2: the owners' answers, in the order the parts were made.
    let next = 0;
    for (let ti = 0; ti < req.topicData.length; ti++) {
      const t = req.topicData[ti]!;
      const partitionResponses = responses[ti]!.partitionResponses as Input<PartitionProduceResponse>[];
      for (let pi = 0; pi < t.partitionData.length; pi++) {
        if (partitionResponses[pi] !== undefined) continue;
        const pd = t.partitionData[pi]!;
        const res = outcomes[next++]!;
        ctx.services.topicStats?.produced(t.name, res.errorCode, pd.records);
        if (res.errorCode !== ErrorCode.NONE) {
          failed = true;
          if (res.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) (unknownTopics ??= new Set()).add(t.name);
        }
        partitionResponses[pi] = {
          index: pd.index,
          errorCode: res.errorCode,
          baseOffset: BigInt(res.baseOffset),
          logAppendTimeMs: BigInt(res.logAppendTime),
          logStartOffset: BigInt(res.logStartOffset),
          recordErrors: res.recordErrors.map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.message })),
          errorMessage: res.errorMessage,
        };
      }
    }
    admission?.releaseAll();
    if (unknownTopics) startAutoCreate(ctx, unknownTopics);
    const throttleTimeMs = await throttleProduce(ctx, bandwidthThrottleMs, req.acks);
    if (req.acks === 0) {
      if (failed) throw new CloseConnectionError('acks=0 produce failed; closing so the client refreshes metadata');
      return null;
    }
    return { responses, throttleTimeMs };
  },
});
