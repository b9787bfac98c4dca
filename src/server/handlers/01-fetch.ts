/**
 * Fetch v0-v17 for consumers and followers: long polling (max.wait.ms / min.bytes, woken by appends),
 * response and partition byte limits, incremental fetch sessions (v7+), topic ids (v13+) and
 * down-conversion to magic 0/1 for v0-v3. read_committed (v4+) reads up to the last stable
 * offset and gets the aborted transactions overlapping what it got, from the .txnindex files.
 * A replica fetch (replica_id, or replica_state.replica_id from v15, >= 0) is a follower's: it
 * reads up to the leader's log end and records the follower's position (fetch-reader.ts), and
 * from v12 carries last_fetched_epoch, answered with diverging_epoch when the leader's history
 * does not back it.
 *
 * This handler maps the request's version to a call of the fetch service
 * (replication/fetch/fetch-service.ts: sessions, reads, throttling, down-conversion) and its
 * outcome to the response; it supplies the ACL check and the consumer's quota.
 */
import { FetchRequestCodec, FetchResponseCodec } from '../../protocol/messages/index.js';
import type { FetchableTopicResponse, PartitionData } from '../../protocol/messages/01-fetch.js';
import type { Input } from '../../protocol/primitives/index.js';
import type { FetchedPartition } from '../../replication/fetch/fetch-service.js';
import { AclOperation, CLUSTER_NAME, ResourceType, resourceChecks } from './authz.js';
import { defineHandler, type RequestContext } from './types.js';
import { applyThrottle, fetchQuotaMaxBytes, fetchThrottleMs } from '../quotas/request-quotas.js';

/** Kafka's checks: followers need CLUSTER_ACTION on the cluster, consumers READ on each topic. */
const may = resourceChecks({
  replicate: { resource: ResourceType.CLUSTER, operation: AclOperation.CLUSTER_ACTION },
  readTopic: { resource: ResourceType.TOPIC, operation: AclOperation.READ },
});

/** ACLs: followers need CLUSTER_ACTION on the cluster, consumers READ on each topic (Kafka's codes). */
function fetchDenial(ctx: RequestContext, fromReplica: boolean): (topic: string) => boolean {
  if (fromReplica) {
    const clusterDenied = !may.replicate.allows(ctx, CLUSTER_NAME);
    return () => clusterDenied;
  }
  return (topic) => !may.readTopic.allows(ctx, topic);
}

function partitionData({ requested: r, result }: FetchedPartition, version: number): Input<PartitionData> {
  return {
    partitionIndex: r.partition,
    errorCode: result.errorCode,
    highWatermark: BigInt(result.highWatermark),
    lastStableOffset: BigInt(result.lastStableOffset),
    logStartOffset: BigInt(result.logStartOffset),
    // Kafka answers null for read_uncommitted and the overlapping aborts for read_committed.
    abortedTransactions:
      version >= 4 && result.abortedTransactions
        ? result.abortedTransactions.map((t) => ({ producerId: t.producerId, firstOffset: BigInt(t.firstOffset) }))
        : null,
    preferredReadReplica: -1,
    records: result.records,
    ...(result.divergingEpoch && version >= 12
      ? { divergingEpoch: { epoch: result.divergingEpoch.epoch, endOffset: BigInt(result.divergingEpoch.endOffset) } }
      : {}),
  };
}

/** Groups partition answers by topic, keeping the order in which topics first appear. */
function topicResponses(items: readonly FetchedPartition[], version: number): Input<FetchableTopicResponse>[] {
  const topics = new Map<string, Input<FetchableTopicResponse> & { partitions: Input<PartitionData>[] }>();
  for (const item of items) {
    const r = item.requested;
    const key = `${r.topic}\u0000${r.topicId}`;
    let t = topics.get(key);
    if (!t) topics.set(key, (t = { topic: r.topic, topicId: r.topicId, partitions: [] }));
    t.partitions.push(partitionData(item, version));
  }
  return [...topics.values()];
}

export const fetchHandler = defineHandler({
  apiKey: 1,
  request: FetchRequestCodec,
  response: FetchResponseCodec,
  minVersion: 0,
  maxVersion: 17,
  // Per partition (Kafka's codes), for the follower or the consumer the request comes from.
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    const params = {
      maxWaitMs: req.maxWaitMs,
      minBytes: req.minBytes,
      // v0-v2 have no response limit; Kafka uses Int32.MAX there.
      maxBytes: version >= 3 ? Math.min(req.maxBytes, ctx.services.config.fetchMaxBytes) : 0x7fffffff,
      readCommitted: version >= 4 && req.isolationLevel === 1,
      hardMaxBytes: version <= 2,
      replicaId: version >= 15 ? req.replicaState.replicaId : req.replicaId,
    };
    const fromConsumer = params.replicaId < 0;
    if (fromConsumer && version >= 3) params.maxBytes = Math.min(params.maxBytes, fetchQuotaMaxBytes(ctx));
    const denied = ctx.services.authorizer === undefined ? undefined : fetchDenial(ctx, params.replicaId >= 0);
    const outcome = await ctx.services.replicaManager.fetchService.fetch(
      {
        params,
        topics: req.topics,
        forgottenTopics: req.forgottenTopicsData,
        usesTopicIds: version >= 13,
        usesSessions: version >= 7,
        sessionId: req.sessionId,
        sessionEpoch: req.sessionEpoch,
        downConvertTo: version <= 1 ? 0 : version <= 3 ? 1 : undefined,
        denied,
      },
      // The consumer's quota (the service asks it only of a consumer's fetch).
      { throttleMs: (bytes) => fetchThrottleMs(ctx, bytes), apply: (ms) => applyThrottle(ctx, ms) },
    );
    ctx.services.topicStats?.fetched(outcome.partitions, !fromConsumer);
    return {
      throttleTimeMs: outcome.throttleTimeMs,
      errorCode: outcome.errorCode,
      sessionId: outcome.sessionId,
      responses: topicResponses(outcome.partitions, version),
    };
  },
});
