/**
 * Committing and reading a group's offsets (OffsetCommit / OffsetFetch). Shared by the consumer
 * (generation and member id set) and the admin client (generation -1: a "simple" commit, which
 * the coordinator accepts only when the group has no active members).
 */
import { Api } from '../apis.js';
import { sleep, type Cluster } from '../cluster.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { OffsetFetchResponse } from '../../protocol/messages/index.js';
import { KafkaError } from '../errors.js';
import { sendToCoordinator } from './coordinator.js';
import { groupByTopic } from '../../common/partition-keys.js';

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface OffsetAndMetadata {
  offset: bigint;
  metadata?: string | null;
  leaderEpoch?: number;
}

export interface CommitContext {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId?: string | null;
}

/** Commits and throws a KafkaError naming the first partition that failed. */
export async function commitOffsets(cluster: Cluster, ctx: CommitContext, offsets: Iterable<[TopicPartition, OffsetAndMetadata]>): Promise<void> {
  const topics = [...groupByTopic(offsets, ([tp]) => tp.topic)].map(([name, parts]) => ({
    name,
    partitions: parts.map(([{ partition: partitionIndex }, o]) => ({
      partitionIndex,
      committedOffset: o.offset,
      committedLeaderEpoch: o.leaderEpoch ?? -1,
      commitTimestamp: -1n,
      committedMetadata: o.metadata ?? '',
    })),
  }));
  if (topics.length === 0) return;
  const resp = await sendToCoordinator(
    cluster,
    ctx.groupId,
    Api.OffsetCommit,
    {
      groupId: ctx.groupId,
      generationIdOrMemberEpoch: ctx.generationId,
      memberId: ctx.memberId,
      groupInstanceId: ctx.groupInstanceId ?? null,
      retentionTimeMs: -1n,
      topics,
    },
    (r) => r.topics.flatMap((t) => t.partitions).find((p) => p.errorCode !== 0)?.errorCode ?? 0,
  );
  for (const t of resp.topics) {
    for (const p of t.partitions) {
      if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `commit of ${t.name}-${p.partitionIndex} for group ${ctx.groupId} failed`);
    }
  }
}

export interface CommittedOffset {
  offset: bigint;
  metadata: string | null;
  leaderEpoch: number;
}

/** A consumer-protocol member reading its group's offsets: OffsetFetch v9+ carries these. */
export interface FetchingMember {
  memberId: string;
  memberEpoch: number;
}

/**
 * Committed offsets of a group (all topics when `partitions` is null); -1 means none. `member`
 * gives the member id and epoch of a consumer-protocol member (read at each try: a fetch that
 * crossed an epoch bump gets STALE_MEMBER_EPOCH and goes again with the new one, as Java's).
 */
export async function fetchCommittedOffsets(
  cluster: Cluster,
  groupId: string,
  partitions: readonly TopicPartition[] | null,
  requireStable = false,
  member: () => FetchingMember | null = () => null,
): Promise<Map<string, Map<number, CommittedOffset>>> {
  const topics = partitions === null ? null : [...groupByTopic(partitions)].map(([name, ps]) => ({ name, partitionIndexes: ps.map((tp) => tp.partition) }));
  const deadline = Date.now() + cluster.requestTimeoutMs;
  const errorOf = (r: { groups: { errorCode: number }[]; errorCode: number }) => (r.groups.length > 0 ? r.groups[0]!.errorCode : r.errorCode);
  for (;;) {
    const m = member();
    const groups = [{ groupId, memberId: m?.memberId ?? null, memberEpoch: m?.memberEpoch ?? -1, topics }];
    const resp = await sendToCoordinator(cluster, groupId, Api.OffsetFetch, { groupId, topics, groups, requireStable }, errorOf);
    if (errorOf(resp) === ErrorCode.STALE_MEMBER_EPOCH && m !== null && Date.now() + cluster.retryBackoffMs < deadline) {
      await sleep(cluster.retryBackoffMs);
      continue;
    }
    return committedFrom(resp, groupId);
  }
}

function committedFrom(resp: OffsetFetchResponse, groupId: string): Map<string, Map<number, CommittedOffset>> {
  const group = resp.groups.length > 0 ? resp.groups[0]! : { errorCode: resp.errorCode, topics: resp.topics };
  if (group.errorCode !== 0) throw new KafkaError(group.errorCode, `fetching offsets of group ${groupId} failed`);
  const out = new Map<string, Map<number, CommittedOffset>>();
  for (const t of group.topics) {
    const m = new Map<number, CommittedOffset>();
    for (const p of t.partitions) {
      if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `fetching offset of ${t.name}-${p.partitionIndex} for group ${groupId} failed`);
      m.set(p.partitionIndex, { offset: p.committedOffset, metadata: p.metadata, leaderEpoch: p.committedLeaderEpoch });
    }
    out.set(t.name, m);
  }
  return out;
}
