/**
 * OffsetCommit, OffsetFetch and OffsetDelete as coordinator operations. A commit becomes one
 * OffsetCommit record per partition; its in-memory effect comes from replaying those records.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { consumerGroupCommitError, consumerGroupFetchError, consumerGroupTxnCommitError } from './consumer/offset-checks.js';
import type { OperationResult } from '../runtime/types.js';
import { ClassicGroup } from './classic-group.js';
import { subscribedTopics } from './consumer-protocol.js';
import type { GroupShardState } from './group-shard-state.js';
import type { CoordinatorRecord } from './records.js';
import { scheduleSessionTimeout } from './rebalance.js';
import { UNKNOWN_MEMBER_ID, checkMember } from './validation.js';

type Result<T> = OperationResult<T, CoordinatorRecord>;

export interface CommitPartition {
  partitionIndex: number;
  committedOffset: bigint;
  committedLeaderEpoch: number;
  /** v1 only; -1 = "now". */
  commitTimestamp: bigint;
  committedMetadata: string | null;
}

export interface CommitRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  /** v2–v4; -1 = the broker's offsets.retention.minutes. */
  retentionTimeMs: bigint;
  apiVersion: number;
  topics: { name: string; partitions: CommitPartition[] }[];
}

export type TopicPartitionErrors = { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];

function allFailed(req: CommitRequest, code: number): Result<TopicPartitionErrors> {
  return {
    records: [],
    response: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })),
  };
}

/** The group-level check of a commit: NONE, or the error every partition gets. */
function validateCommit(shard: GroupShardState, g: ClassicGroup, req: CommitRequest): number {
  if (g.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  // A standalone consumer (assign(), no group membership) commits with generation -1.
  if (req.generationId < 0 && g.is('Empty')) return ErrorCode.NONE;
  if (req.generationId >= 0 || req.memberId !== UNKNOWN_MEMBER_ID || req.groupInstanceId !== null) {
    const checked = checkMember(g, req.memberId, req.groupInstanceId);
    if (typeof checked === 'number') return checked;
    if (req.generationId !== g.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (g.is('CompletingRebalance')) return ErrorCode.REBALANCE_IN_PROGRESS;
    scheduleSessionTimeout(shard, g, checked);
    return ErrorCode.NONE;
  }
  return ErrorCode.UNKNOWN_MEMBER_ID;
}

/** A commit to a classic group (made for it when it does not exist: a standalone consumer). */
function classicCommitError(shard: GroupShardState, req: CommitRequest, now: number): number {
  let g = shard.groups.get(req.groupId);
  if (!g) {
    if (req.generationId >= 0) return ErrorCode.ILLEGAL_GENERATION;
    g = new ClassicGroup(req.groupId, now);
    shard.groups.set(req.groupId, g);
  }
  return validateCommit(shard, g, req);
}

export function commitOffsets(shard: GroupShardState, req: CommitRequest, now: number): Result<TopicPartitionErrors> {
  if (req.groupId === '') return allFailed(req, ErrorCode.INVALID_GROUP_ID);
  const consumerGroup = shard.consumerGroups.get(req.groupId);
  const code = consumerGroup ? consumerGroupCommitError(consumerGroup, req.memberId, req.generationId, req.apiVersion) : classicCommitError(shard, req, now);
  if (code !== ErrorCode.NONE) return allFailed(req, code);

  const retention = req.retentionTimeMs;
  const records: CoordinatorRecord[] = [];
  const response: TopicPartitionErrors = [];
  for (const t of req.topics) {
    const parts: TopicPartitionErrors[number]['partitions'] = [];
    for (const p of t.partitions) {
      const metadata = p.committedMetadata ?? '';
      if (metadata.length > shard.config.offsetMetadataMaxBytes) {
        parts.push({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE });
        continue;
      }
      const explicitTs = req.apiVersion === 1 && p.commitTimestamp >= 0n;
      const commitTs = explicitTs ? p.commitTimestamp : BigInt(now);
      // KIP-211: only the old versions carry an expiration; v5+ expiry depends on the group.
      let expire = -1n;
      if (explicitTs) expire = commitTs + BigInt(shard.config.offsetsRetentionMs);
      else if (req.apiVersion >= 2 && req.apiVersion <= 4 && retention >= 0n) expire = BigInt(now) + retention;
      records.push({
        type: 'offset',
        group: req.groupId,
        topic: t.name,
        partition: p.partitionIndex,
        value: { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata, commitTimestamp: commitTs, expireTimestamp: expire },
      });
      parts.push({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE });
    }
    response.push({ name: t.name, partitions: parts });
  }
  return { records, response };
}

export interface TxnCommitRequest {
  groupId: string;
  producerId: bigint;
  producerEpoch: number;
  /** v3+; -1 / '' / null before (no member check, as Kafka). */
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  topics: { name: string; partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[] }[];
}

/** A transactional commit to a classic group (made for it when it does not exist). */
function classicTxnCommitError(shard: GroupShardState, req: TxnCommitRequest, now: number): number {
  let g = shard.groups.get(req.groupId);
  if (!g) {
    if (req.generationId >= 0) return ErrorCode.ILLEGAL_GENERATION;
    g = new ClassicGroup(req.groupId, now);
    shard.groups.set(req.groupId, g);
  }
  if (g.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  const checksMember = req.generationId >= 0 || req.memberId !== UNKNOWN_MEMBER_ID || req.groupInstanceId !== null;
  if (checksMember) {
    const checked = checkMember(g, req.memberId, req.groupInstanceId);
    if (typeof checked === 'number') return checked;
    if (req.generationId !== g.generationId) return ErrorCode.ILLEGAL_GENERATION;
  }
  return ErrorCode.NONE;
}

/**
 * TxnOffsetCommit: the offsets are written as a transactional batch of the producer and stay
 * pending (invisible to OffsetFetch) until its transaction's marker reaches the partition.
 */
export function txnCommitOffsets(shard: GroupShardState, req: TxnCommitRequest, now: number): Result<TopicPartitionErrors> {
  const all = (code: number): Result<TopicPartitionErrors> => ({
    records: [],
    response: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })),
  });
  if (req.groupId === '') return all(ErrorCode.INVALID_GROUP_ID);
  const consumerGroup = shard.consumerGroups.get(req.groupId);
  const code = consumerGroup ? consumerGroupTxnCommitError(consumerGroup, req.memberId, req.generationId) : classicTxnCommitError(shard, req, now);
  if (code !== ErrorCode.NONE) return all(code);
  const records: CoordinatorRecord[] = [];
  const response: TopicPartitionErrors = req.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => {
      const metadata = p.committedMetadata ?? '';
      if (metadata.length > shard.config.offsetMetadataMaxBytes) return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE };
      records.push({
        type: 'offset',
        group: req.groupId,
        topic: t.name,
        partition: p.partitionIndex,
        producerId: req.producerId,
        value: { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata, commitTimestamp: BigInt(now), expireTimestamp: -1n },
      });
      return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
    }),
  }));
  return { records, response, transactional: { producerId: req.producerId, producerEpoch: req.producerEpoch } };
}

export interface FetchedPartition {
  partitionIndex: number;
  committedOffset: bigint;
  committedLeaderEpoch: number;
  metadata: string | null;
  errorCode: number;
}

export type FetchedTopics = { name: string; partitions: FetchedPartition[] }[];

/** Committed offsets of a group; `topics` null = everything it has. Unknown partitions get -1. */
export function fetchOffsets(
  shard: GroupShardState,
  groupId: string,
  topics: { name: string; partitions: number[] }[] | null,
  requireStable = false,
  /** OffsetFetch v9+: the member asking, checked against a consumer group (KIP-848). */
  member?: { memberId: string | null; memberEpoch: number },
): FetchedTopics {
  const consumerGroup = member ? shard.consumerGroups.get(groupId) : undefined;
  const memberError = consumerGroup && member ? consumerGroupFetchError(consumerGroup, member.memberId, member.memberEpoch) : ErrorCode.NONE;
  if (memberError !== ErrorCode.NONE) throw new KafkaError(memberError);
  const store = shard.offsets;
  // KIP-447: a partition with a transactional commit pending answers UNSTABLE_OFFSET_COMMIT (retriable).
  const unstable = (topic: string, partitionIndex: number): FetchedPartition | undefined =>
    requireStable && shard.hasPendingTxnOffset(groupId, topic, partitionIndex)
      ? { partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT }
      : undefined;
  if (topics === null) {
    return [...store.groupOffsets(groupId)].map(([name, parts]) => ({
      name,
      partitions: [...parts].map(
        ([partitionIndex, v]) =>
          unstable(name, partitionIndex) ?? {
            partitionIndex,
            committedOffset: v.offset,
            committedLeaderEpoch: v.leaderEpoch,
            metadata: v.metadata,
            errorCode: ErrorCode.NONE,
          },
      ),
    }));
  }
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((partitionIndex) => {
      const u = unstable(t.name, partitionIndex);
      if (u) return u;
      const v = store.get(groupId, t.name, partitionIndex);
      return v
        ? { partitionIndex, committedOffset: v.offset, committedLeaderEpoch: v.leaderEpoch, metadata: v.metadata, errorCode: ErrorCode.NONE }
        : { partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE };
    }),
  }));
}

/** Topics a consumer-protocol group's members subscribe to; null when it cannot be known. */
export function groupSubscribedTopics(g: ClassicGroup): Set<string> | null {
  if (g.protocolType !== 'consumer' || g.protocolName === null) return null;
  const topics = new Set<string>();
  for (const m of g.members.values()) {
    const list = subscribedTopics(g.metadataFor(m));
    if (list === null) return null;
    for (const t of list) topics.add(t);
  }
  return topics;
}

export interface OffsetDeleteResult {
  errorCode: number;
  topics: TopicPartitionErrors;
}

export function deleteOffsets(shard: GroupShardState, groupId: string, topics: { name: string; partitions: number[] }[]): Result<OffsetDeleteResult> {
  const consumerGroup = shard.consumerGroups.get(groupId);
  const g = consumerGroup ? undefined : shard.groups.get(groupId);
  if (!consumerGroup && (!g || g.is('Dead'))) return { records: [], response: { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, topics: [] } };
  // A consumer group's subscriptions are known at all times (names, and what regexes matched).
  let subscribed: Set<string> | null = consumerGroup
    ? new Set([...consumerGroup.subscribedTopicNames(), ...consumerGroup.subscriptionMetadata.keys()])
    : new Set();
  if (g && !g.isEmpty) {
    if (g.protocolType !== 'consumer') return { records: [], response: { errorCode: ErrorCode.NON_EMPTY_GROUP, topics: [] } };
    subscribed = groupSubscribedTopics(g);
  }
  const records: CoordinatorRecord[] = [];
  const out: TopicPartitionErrors = topics.map((t) => {
    // Unknown subscriptions (mid-rebalance) count as subscribed: never delete what may be in use.
    const inUse = subscribed === null || subscribed.has(t.name);
    return {
      name: t.name,
      partitions: t.partitions.map((p) => {
        if (inUse) return { partitionIndex: p, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
        if (shard.offsets.get(groupId, t.name, p)) records.push({ type: 'offset', group: groupId, topic: t.name, partition: p, value: null });
        return { partitionIndex: p, errorCode: ErrorCode.NONE };
      }),
    };
  });
  return { records, response: { errorCode: ErrorCode.NONE, topics: out } };
}
