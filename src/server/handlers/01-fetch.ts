/**
 * Fetch v0-v17 for consumers and followers: long polling (max.wait.ms / min.bytes, woken by appends),
 * response and partition byte limits, incremental fetch sessions (v7+), topic ids (v13+) and
 * down-conversion to magic 0/1 for v0-v3. read_committed (v4+) reads up to the last stable
 * offset and gets the aborted transactions overlapping what it got, from the .txnindex files.
 * A replica fetch (replica_id, or replica_state.replica_id from v15, >= 0) is a follower's: it
 * reads up to the leader's log end and records the follower's position (fetch-reader.ts), and
 * from v12 carries last_fetched_epoch, answered with diverging_epoch when the leader's history
 * does not back it.
 */
import { FetchRequestCodec, FetchResponseCodec } from '../../protocol/messages/index.js';
import type { FetchRequest, FetchResponse, FetchableTopicResponse, PartitionData } from '../../protocol/messages/01-fetch.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import { KAFKA_ERROR_CODE, downConvertAsync, readDecompressionCap } from '../../protocol/records/index.js';
import type { FetchTarget, PartitionFetchResult } from '../../replication/fetch-reader.js';
import { FINAL_EPOCH, INITIAL_EPOCH, type FetchSession, type SessionPartition } from '../../replication/fetch-session.js';
import { AclOperation, CLUSTER_NAME, ResourceType, resourceChecks } from './authz.js';
import { defineHandler, type RequestContext } from './types.js';
import { fetchReadBuffers } from '../../storage/read-buffer-pool.js';
import { applyThrottle, fetchQuotaMaxBytes, fetchThrottleMs } from '../quotas/request-quotas.js';

/** Kafka's checks: followers need CLUSTER_ACTION on the cluster, consumers READ on each topic. */
const may = resourceChecks({
  replicate: { resource: ResourceType.CLUSTER, operation: AclOperation.CLUSTER_ACTION },
  readTopic: { resource: ResourceType.TOPIC, operation: AclOperation.READ },
});

/** Record bytes read for a consumer, as the fetch quota counts them (before any down-conversion). */
function readBytes(results: readonly PartitionFetchResult[]): number {
  let n = 0;
  for (const r of results) n += r.records?.length ?? 0;
  return n;
}

/**
 * A consumer over its quota gets an empty answer carrying the throttle time (the data read is
 * dropped; the session, if any, keeps its offsets), as Kafka's getThrottledResponse; the
 * connection is muted, and for pre-KIP-219 versions the answer waits the throttle time.
 */
async function throttledResponse(ctx: RequestContext, ms: number, sessionId: number, dropped: readonly PartitionFetchResult[]): Promise<Input<FetchResponse>> {
  for (const r of dropped) if (r.records) fetchReadBuffers.release(r.records);
  await applyThrottle(ctx, ms);
  return { throttleTimeMs: ms, errorCode: ErrorCode.NONE, sessionId, responses: [] };
}

/** What the request itself says of a partition: the session's record of it, before any response. */
type Requested = Pick<SessionPartition, 'topic' | 'topicId' | 'partition' | 'fetchOffset' | 'partitionMaxBytes' | 'currentLeaderEpoch' | 'lastFetchedEpoch' | 'replicaLogStartOffset'>;

/**
 * The topic a v13+ fetch names by id ('' when unknown). A follower's fetch may also name a topic
 * of a partition this broker leads that the metadata image does not know yet (LeaderAndIsr
 * arrives before UpdateMetadata): the hosted partition's id answers it.
 */
function topicNameOfId(topicId: string, ctx: RequestContext, fromReplica: boolean): string {
  const name = ctx.services.metadata.topicById(topicId)?.name;
  if (name !== undefined || !fromReplica) return name ?? '';
  return ctx.services.replicaManager.hostedTopicName(topicId) ?? '';
}

/** The request's partitions with topic names resolved (v13+ names come from topic ids). */
function requestedPartitions(req: FetchRequest, ctx: RequestContext, useIds: boolean, fromReplica: boolean): Requested[] {
  const out: Requested[] = [];
  for (const t of req.topics) {
    const topic = useIds ? topicNameOfId(t.topicId, ctx, fromReplica) : t.topic;
    const topicId = useIds ? t.topicId : (ctx.services.metadata.topic(t.topic)?.topicId ?? ZERO_UUID);
    for (const p of t.partitions) {
      out.push({
        topic,
        topicId,
        partition: p.partition,
        fetchOffset: Number(p.fetchOffset),
        partitionMaxBytes: p.partitionMaxBytes,
        currentLeaderEpoch: p.currentLeaderEpoch,
        lastFetchedEpoch: p.lastFetchedEpoch,
        replicaLogStartOffset: Number(p.logStartOffset),
      });
    }
  }
  return out;
}

/** ACLs: followers need CLUSTER_ACTION on the cluster, consumers READ on each topic (Kafka's codes). */
function fetchDenial(ctx: RequestContext, fromReplica: boolean): (topic: string) => boolean {
  if (fromReplica) {
    const clusterDenied = !may.replicate.allows(ctx, CLUSTER_NAME);
    return () => clusterDenied;
  }
  return (topic) => !may.readTopic.allows(ctx, topic);
}

function toTarget(r: Requested, useIds: boolean, denied?: (topic: string) => boolean): FetchTarget {
  const target: FetchTarget = {
    topic: r.topic,
    partition: r.partition,
    fetchOffset: r.fetchOffset,
    partitionMaxBytes: r.partitionMaxBytes,
    currentLeaderEpoch: r.currentLeaderEpoch,
    lastFetchedEpoch: r.lastFetchedEpoch,
    replicaLogStartOffset: r.replicaLogStartOffset,
  };
  if (useIds && r.topic === '') target.presetError = ErrorCode.UNKNOWN_TOPIC_ID;
  else if (denied?.(r.topic)) target.presetError = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
  return target;
}

/**
 * Down-conversion for Fetch v0-v3 (v0-v1 understand magic 0, v2-v3 magic 1), done after the
 * read, partition by partition in response order, as Kafka's lazy down-conversion does:
 *
 * - converted bytes stay within the partition's max_bytes and what is left of the response's
 *   max_bytes; only the response's first message may be larger, so a consumer always progresses
 *   (Kafka sends the first converted batch whole; one message is enough here, the rest waits);
 * - each batch inflates within readDecompressionCap(the topic's max.message.bytes), off the
 *   event loop; a batch that cannot (a compression bomb, or corrupt) ends the partition's data
 *   before it; when nothing came before it, the partition answers MESSAGE_TOO_LARGE (inflates
 *   past the cap) or CORRUPT_MESSAGE with no records, as the Java consumer reports a record it
 *   can never fetch, instead of an unbounded response.
 */
async function downConvertResults(
  requested: readonly Requested[],
  results: readonly PartitionFetchResult[],
  version: number,
  responseMaxBytes: number,
  ctx: RequestContext,
): Promise<PartitionFetchResult[]> {
  const toMagic = version <= 1 ? 0 : 1;
  let remaining = responseMaxBytes;
  let sentAny = false;
  const out: PartitionFetchResult[] = [];
  for (let i = 0; i < results.length; i++) {
    const result = results[i]!;
    const r = requested[i]!;
    if (!result.records || result.records.length === 0) {
      out.push(result);
      continue;
    }
    const maxMessageBytes = ctx.services.replicaManager.getPartition(r.topic, r.partition)?.log.config.maxMessageBytes;
    const converted = await downConvertAsync(result.records, toMagic, {
      maxOutputBytes: Math.max(0, Math.min(r.partitionMaxBytes, remaining)),
      firstMessageWhole: !sentAny,
      fromOffset: BigInt(r.fetchOffset),
      maxDecompressedBytes: readDecompressionCap(maxMessageBytes),
    });
    if (converted.records.length === 0 && converted.error) {
      out.push({ ...result, errorCode: KAFKA_ERROR_CODE[converted.error.kafkaError], records: EMPTY });
      continue;
    }
    remaining -= converted.records.length;
    if (converted.records.length > 0) sentAny = true;
    out.push({ ...result, records: converted.records });
  }
  return out;
}

const EMPTY = Buffer.alloc(0);

/** Fetch v0-v3 get their records down-converted; later versions as read. */
function convertFor(version: number, requested: readonly Requested[], results: PartitionFetchResult[], maxBytes: number, ctx: RequestContext): Promise<PartitionFetchResult[]> | PartitionFetchResult[] {
  return version > 3 ? results : downConvertResults(requested, results, version, maxBytes, ctx);
}

function partitionData(r: Requested, result: PartitionFetchResult, version: number): Input<PartitionData> {
  return {
    partitionIndex: r.partition,
    errorCode: result.errorCode,
    highWatermark: BigInt(result.highWatermark),
    lastStableOffset: BigInt(result.lastStableOffset),
    logStartOffset: BigInt(result.logStartOffset),
    // Kafka answers null for read_uncommitted and the overlapping aborts for read_committed.
    abortedTransactions: version >= 4 && result.abortedTransactions ? result.abortedTransactions.map((t) => ({ producerId: t.producerId, firstOffset: BigInt(t.firstOffset) })) : null,
    preferredReadReplica: -1,
    records: result.records,
    ...(result.divergingEpoch && version >= 12 ? { divergingEpoch: { epoch: result.divergingEpoch.epoch, endOffset: BigInt(result.divergingEpoch.endOffset) } } : {}),
  };
}

/** Groups partition answers by topic, keeping the order in which topics first appear. */
function groupByTopic(items: { r: Requested; data: Input<PartitionData> }[]): Input<FetchableTopicResponse>[] {
  const topics = new Map<string, Input<FetchableTopicResponse> & { partitions: Input<PartitionData>[] }>();
  for (const { r, data } of items) {
    const key = `${r.topic}\u0000${r.topicId}`;
    let t = topics.get(key);
    if (!t) topics.set(key, (t = { topic: r.topic, topicId: r.topicId, partitions: [] }));
    t.partitions.push(data);
  }
  return [...topics.values()];
}

function sessionError(errorCode: number): Input<FetchResponse> {
  return { throttleTimeMs: 0, errorCode, sessionId: 0, responses: [] };
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
    const rm = ctx.services.replicaManager;
    const useIds = version >= 13;
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
    const requested = requestedPartitions(req, ctx, useIds, params.replicaId >= 0);
    const sessions = rm.fetchSessions;
    const denied = ctx.services.authorizer === undefined ? undefined : fetchDenial(ctx, params.replicaId >= 0);

    // Sessionless (v0-v6, or epoch -1) and full fetches answer every requested partition.
    const full = version < 7 || req.sessionEpoch === INITIAL_EPOCH || req.sessionEpoch === FINAL_EPOCH;
    if (full) {
      if (version >= 7 && req.sessionId !== 0) sessions.remove(req.sessionId);
      const read = await rm.fetch(requested.map((r) => toTarget(r, useIds, denied)), params);
      const throttleMs = fromConsumer ? fetchThrottleMs(ctx, readBytes(read)) : 0;
      if (throttleMs > 0) return throttledResponse(ctx, throttleMs, 0, read);
      const results = await convertFor(version, requested, read, params.maxBytes, ctx);
      let session: FetchSession | undefined;
      if (version >= 7 && req.sessionEpoch === INITIAL_EPOCH) session = sessions.create(useIds, requested.length);
      const items = requested.map((r, i) => {
        const result = results[i]!;
        if (session) {
          const sp = session.upsert(r);
          session.noteResponse(sp, { ...result, bytes: result.records?.length ?? 0 });
        }
        return { r, data: partitionData(r, result, version) };
      });
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: session?.id ?? 0, responses: groupByTopic(items) };
    }

    const session = sessions.get(req.sessionId);
    if (!session) return sessionError(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    if (session.epoch !== req.sessionEpoch) return sessionError(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    if (session.usesTopicIds !== useIds) return sessionError(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
    for (const r of requested) session.upsert(r);
    for (const f of req.forgottenTopicsData) {
      for (const p of f.partitions) session.forget(useIds ? f.topicId : f.topic, p);
    }
    session.advanceEpoch();
    const members: SessionPartition[] = [...session.partitions.values()];
    const asRequested = (sp: SessionPartition): Requested => ({
      topic: useIds ? topicNameOfId(sp.topicId, ctx, params.replicaId >= 0) : sp.topic,
      topicId: sp.topicId,
      partition: sp.partition,
      fetchOffset: sp.fetchOffset,
      partitionMaxBytes: sp.partitionMaxBytes,
      currentLeaderEpoch: sp.currentLeaderEpoch,
      lastFetchedEpoch: sp.lastFetchedEpoch,
      replicaLogStartOffset: sp.replicaLogStartOffset,
    });
    const reqs = members.map(asRequested);
    const read = await rm.fetch(reqs.map((r) => toTarget(r, useIds, denied)), params);
    const throttleMs = fromConsumer ? fetchThrottleMs(ctx, readBytes(read)) : 0;
    if (throttleMs > 0) return throttledResponse(ctx, throttleMs, session.id, read);
    const results = await convertFor(version, reqs, read, params.maxBytes, ctx);
    const items: { r: Requested; data: Input<PartitionData> }[] = [];
    members.forEach((sp, i) => {
      const result = results[i]!;
      if (session.noteResponse(sp, { ...result, bytes: result.records?.length ?? 0 })) {
        items.push({ r: reqs[i]!, data: partitionData(reqs[i]!, result, version) });
      }
    });
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: session.id, responses: groupByTopic(items) };
  },
});
