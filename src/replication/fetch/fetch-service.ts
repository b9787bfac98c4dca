/**
 * Fetch as a service, Kafka's FetchManager with the fetch half of KafkaApis.handleFetchRequest:
 * one request's partitions (topic names resolved from ids), the incremental fetch session it
 * names or starts (KIP-227, fetch-session.ts), then one sequence for every kind of fetch: read
 * with the long-poll wait (the partitions' owners: PartitionShards.fetch, by default
 * ReplicaManager.fetch, fetch-reader.ts), a consumer's quota (a
 * throttled answer drops what was read and gives its buffers back to the read pool),
 * down-conversion for old clients (down-conversion.ts), and what the session says the answer
 * must carry.
 *
 * The server's Fetch handler maps the wire request to a FetchCall and the outcome back, and
 * supplies the quota and the ACL check as functions: this layer knows no connection.
 */
import { ErrorCode } from '../../protocol/errors.js';
import { fetchReadBuffers } from '../../storage/segment/read-buffer-pool.js';
import type { ReplicaManager } from '../replica-manager.js';
import type { PartitionShards } from '../shards/partition-shards.js';
import { downConvertResults } from './down-conversion.js';
import type { FetchParams, PartitionFetchResult } from './fetch-reader.js';
import { FINAL_EPOCH, INITIAL_EPOCH, FetchSessionCache, type FetchSession, type SessionPartition } from './fetch-session.js';
import {
  readTarget,
  requestedPartitions,
  sessionPartitionAsRequested,
  type FetchTopicRequest,
  type RequestedPartition,
  type TopicNames,
} from './requested-partitions.js';

export type { FetchPartitionRequest, FetchTopicRequest, RequestedPartition } from './requested-partitions.js';

export interface ForgottenTopicRequest {
  topic: string;
  topicId: string;
  partitions: readonly number[];
}

/** One Fetch request, as the handler maps it from its version's layout. */
export interface FetchCall {
  params: FetchParams;
  topics: readonly FetchTopicRequest[];
  /** An incremental fetch's partitions to drop from its session. */
  forgottenTopics: readonly ForgottenTopicRequest[];
  /** v13+: topics are named by id. */
  usesTopicIds: boolean;
  /** v7+: the request carries a session id and epoch. */
  usesSessions: boolean;
  sessionId: number;
  sessionEpoch: number;
  /** v0-v3: the magic the records go out in (0 or 1); undefined: as stored. */
  downConvertTo: 0 | 1 | undefined;
  /** Whether reading a topic is denied (ACLs); undefined: no authorizer, nothing is. */
  denied: ((topic: string) => boolean) | undefined;
}

/** A consumer's fetch quota, as the server layer keeps it. Followers are not throttled here. */
export interface FetchThrottle {
  /** Counts the record bytes read; the throttle time (0: answer as read; else the bytes are not counted). */
  throttleMs(bytesRead: number): number;
  /** Mutes the client for `ms`; resolves when the (empty) answer may go. */
  apply(ms: number): Promise<void>;
}

export interface FetchedPartition {
  requested: RequestedPartition;
  result: PartitionFetchResult;
}

export interface FetchOutcome {
  errorCode: number;
  throttleTimeMs: number;
  /** The session the client uses next (0: none). */
  sessionId: number;
  /** In request order (an incremental fetch: the session's, only those with news). */
  partitions: FetchedPartition[];
}

/** Record bytes read for a consumer, as the fetch quota counts them (before any down-conversion). */
function readBytes(results: readonly PartitionFetchResult[]): number {
  let n = 0;
  for (const r of results) n += r.records?.length ?? 0;
  return n;
}

function sessionError(errorCode: number): FetchOutcome {
  return { throttleTimeMs: 0, errorCode, sessionId: 0, partitions: [] };
}

/** What one request reads: every partition it names, or (incremental) its session's partitions. */
interface FetchPlan {
  requested: RequestedPartition[];
  /** The session the request continues (incremental), or starts (after the read, as Kafka). */
  session?: FetchSession;
  createSession: boolean;
  /** Incremental: the session's partitions, in `requested` order. */
  members?: SessionPartition[];
}

/** What the service reads through: the ReplicaManager (a fake in unit tests). */
export type FetchReplicas = Pick<ReplicaManager, 'fetch' | 'hostedTopicName' | 'getPartition'>;

/** Where the reads go: the partitions' owners (replication/shards), by default the ReplicaManager itself. */
export type FetchReads = Pick<PartitionShards, 'fetch'>;

export class FetchService {
  /** KIP-227 incremental fetch sessions of this broker's clients and followers. */
  readonly sessions = new FetchSessionCache();
  private readonly names: TopicNames;
  private reads: FetchReads;

  constructor(
    private readonly replicas: FetchReplicas,
    /** The metadata image (topic names and ids). */
    metadata: Pick<TopicNames, 'topic' | 'topicById'>,
  ) {
    this.reads = replicas;
    this.names = {
      topicById: (id) => metadata.topicById(id),
      topic: (name) => metadata.topic(name),
      hostedTopicName: (id) => replicas.hostedTopicName(id),
    };
  }

  /**
   * Sends the reads to the partitions' owners (docs/threads.md step 0: shard workers give their
   * own PartitionShards here); sessions, throttling and down-conversion stay in this service.
   */
  readThrough(reads: FetchReads): void {
    this.reads = reads;
  }

  /**
   * Answers one Fetch: read → throttle (consumers) → down-convert (old versions) → session
   * bookkeeping. `throttle` is asked only for a consumer's fetch.
   */
  async fetch(call: FetchCall, throttle: FetchThrottle): Promise<FetchOutcome> {
    const { params, usesTopicIds } = call;
    const fromReplica = (params.replicaId ?? -1) >= 0;
    const plan = this.plan(call, fromReplica);
    if (typeof plan === 'number') return sessionError(plan);
    const { requested, members } = plan;
    let session = plan.session;
    const read = await this.reads.fetch(
      requested.map((r) => readTarget(r, usesTopicIds, call.denied)),
      params,
    );
    const throttleMs = fromReplica ? 0 : throttle.throttleMs(readBytes(read));
    if (throttleMs > 0) {
      // As Kafka's getThrottledResponse: the data read is dropped (the session, if any, keeps its
      // offsets), the client muted, and for pre-KIP-219 versions the answer waits the throttle time.
      for (const r of read) if (r.records) fetchReadBuffers.release(r.records);
      await throttle.apply(throttleMs);
      return { throttleTimeMs: throttleMs, errorCode: ErrorCode.NONE, sessionId: session?.id ?? 0, partitions: [] };
    }
    const results =
      call.downConvertTo === undefined
        ? read
        : await downConvertResults(requested, read, call.downConvertTo, params.maxBytes, (t, p) => this.maxMessageBytes(t, p));
    if (plan.createSession) session = this.sessions.create(usesTopicIds, requested.length);
    const partitions: FetchedPartition[] = [];
    for (let i = 0; i < requested.length; i++) {
      const result = results[i]!;
      if (session) {
        const sp = members ? members[i]! : session.upsert(requested[i]!);
        // A full fetch answers every partition; an incremental one only those with news.
        if (!session.noteResponse(sp, { ...result, bytes: result.records?.length ?? 0 }) && members) continue;
      }
      partitions.push({ requested: requested[i]!, result });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: session?.id ?? 0, partitions };
  }

  /** The partitions to read and the session, or the session error that answers the request. */
  private plan(call: FetchCall, fromReplica: boolean): FetchPlan | number {
    const useIds = call.usesTopicIds;
    const requested = requestedPartitions(call.topics, this.names, useIds, fromReplica);
    // Sessionless (v0-v6, or epoch -1) and full fetches answer every requested partition.
    if (!call.usesSessions || call.sessionEpoch === INITIAL_EPOCH || call.sessionEpoch === FINAL_EPOCH) {
      if (call.usesSessions && call.sessionId !== 0) this.sessions.remove(call.sessionId);
      return { requested, createSession: call.usesSessions && call.sessionEpoch === INITIAL_EPOCH };
    }
    const session = this.sessions.get(call.sessionId);
    if (!session) return ErrorCode.FETCH_SESSION_ID_NOT_FOUND;
    if (session.epoch !== call.sessionEpoch) return ErrorCode.INVALID_FETCH_SESSION_EPOCH;
    if (session.usesTopicIds !== useIds) return ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR;
    for (const r of requested) session.upsert(r);
    for (const f of call.forgottenTopics) {
      for (const p of f.partitions) session.forget(useIds ? f.topicId : f.topic, p);
    }
    session.advanceEpoch();
    const members = [...session.partitions.values()];
    return {
      requested: members.map((sp) => sessionPartitionAsRequested(sp, this.names, useIds, fromReplica)),
      session,
      createSession: false,
      members,
    };
  }

  /** A partition's max.message.bytes, which caps down-conversion's inflation (undefined: not hosted here). */
  private maxMessageBytes(topic: string, partition: number): number | undefined {
    return this.replicas.getPartition(topic, partition)?.log.config.maxMessageBytes;
  }
}
