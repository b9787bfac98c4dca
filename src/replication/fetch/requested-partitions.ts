/**
 * The partitions a Fetch asks for, as the fetch service reads them: topic names resolved from
 * topic ids (v13+), offsets as numbers, and the answer known before any read (unknown topic id,
 * topic not authorized) set on the read's target.
 */
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/primitives/index.js';
import type { FetchTarget } from './fetch-reader.js';
import type { SessionPartition } from './fetch-session.js';

/** What the request itself says of a partition: the session's record of it, before any response. */
export type RequestedPartition = Pick<
  SessionPartition,
  'topic' | 'topicId' | 'partition' | 'fetchOffset' | 'partitionMaxBytes' | 'currentLeaderEpoch' | 'lastFetchedEpoch' | 'replicaLogStartOffset'
>;

/** A partition as the Fetch request carries it. */
export interface FetchPartitionRequest {
  partition: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  logStartOffset: bigint;
}

/** A topic as the Fetch request carries it (by name, or from v13 by id). */
export interface FetchTopicRequest {
  topic: string;
  topicId: string;
  partitions: readonly FetchPartitionRequest[];
}

/** Where topic names and ids come from: the metadata image, and the partitions hosted here. */
export interface TopicNames {
  topicById(topicId: string): { name: string } | undefined;
  topic(name: string): { topicId: string } | undefined;
  /** A topic this broker hosts a partition of, by id (a leader may know it before the image does). */
  hostedTopicName(topicId: string): string | undefined;
}

/**
 * The topic a v13+ fetch names by id ('' when unknown). A follower's fetch may also name a topic
 * of a partition this broker leads that the metadata image does not know yet (LeaderAndIsr
 * arrives before UpdateMetadata): the hosted partition's id answers it.
 */
export function topicNameOfId(topicId: string, names: TopicNames, fromReplica: boolean): string {
  const name = names.topicById(topicId)?.name;
  if (name !== undefined || !fromReplica) return name ?? '';
  return names.hostedTopicName(topicId) ?? '';
}

/** The request's partitions with topic names resolved (v13+ names come from topic ids). */
export function requestedPartitions(topics: readonly FetchTopicRequest[], names: TopicNames, useIds: boolean, fromReplica: boolean): RequestedPartition[] {
  const out: RequestedPartition[] = [];
  for (const t of topics) {
    const topic = useIds ? topicNameOfId(t.topicId, names, fromReplica) : t.topic;
    const topicId = useIds ? t.topicId : (names.topic(t.topic)?.topicId ?? ZERO_UUID);
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

/** A session's partition as an incremental fetch reads it (for ids, its topic name is resolved on every request: the image may have learnt or lost it since). */
export function sessionPartitionAsRequested(sp: SessionPartition, names: TopicNames, useIds: boolean, fromReplica: boolean): RequestedPartition {
  return {
    topic: useIds ? topicNameOfId(sp.topicId, names, fromReplica) : sp.topic,
    topicId: sp.topicId,
    partition: sp.partition,
    fetchOffset: sp.fetchOffset,
    partitionMaxBytes: sp.partitionMaxBytes,
    currentLeaderEpoch: sp.currentLeaderEpoch,
    lastFetchedEpoch: sp.lastFetchedEpoch,
    replicaLogStartOffset: sp.replicaLogStartOffset,
  };
}

/** What the read does for a partition; an unknown topic id or a denied topic is answered without reading. */
export function readTarget(r: RequestedPartition, useIds: boolean, denied?: (topic: string) => boolean): FetchTarget {
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
