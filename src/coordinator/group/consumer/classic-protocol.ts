/**
 * The consumer protocol's embedded bytes (the JoinGroup subscription and the SyncGroup
 * assignment of protocol type "consumer") as a consumer group reads and writes them for its
 * classic members: subscriptions and assignments by topic name on the wire, by topic id in the
 * group. Malformed bytes throw (callers turn that into Kafka's error).
 */
import { ConsumerProtocolAssignmentCodec, ConsumerProtocolSubscriptionCodec } from '../../../protocol/messages/index.js';
import { Reader, Writer } from '../../../protocol/primitives/index.js';
import { type Assignment, assignmentFrom } from './member.js';
import type { ClusterTopics } from './settings.js';

/** The protocol type of consumers (the only one a consumer group's classic members may use). */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';

export interface ClassicSubscription {
  readonly topics: string[];
  /** Partitions the member says it still owns (subscription v1+; empty before). */
  readonly owned: { topic: string; partitions: number[] }[];
  readonly rackId: string | null;
}

/** The version a subscription or assignment was written with (its leading int16). */
export function embeddedVersion(bytes: Buffer): number {
  return bytes.length < 2 ? 0 : bytes.readInt16BE(0);
}

export function decodeClassicSubscription(metadata: Buffer): ClassicSubscription {
  const r = new Reader(metadata);
  const version = Math.min(r.int16(), ConsumerProtocolSubscriptionCodec.maxVersion);
  if (version < 0) throw new Error(`unsupported subscription version ${version}`);
  const s = ConsumerProtocolSubscriptionCodec.read(r, version);
  return { topics: s.topics, owned: s.ownedPartitions.map((tp) => ({ topic: tp.topic, partitions: tp.partitions })), rackId: s.rackId };
}

export function decodeClassicAssignment(bytes: Buffer): { topic: string; partitions: number[] }[] {
  if (bytes.length === 0) return [];
  const r = new Reader(bytes);
  const version = Math.min(r.int16(), ConsumerProtocolAssignmentCodec.maxVersion);
  if (version < 0) throw new Error(`unsupported assignment version ${version}`);
  return ConsumerProtocolAssignmentCodec.read(r, version).assignedPartitions.map((tp) => ({ topic: tp.topic, partitions: tp.partitions }));
}

/** An assignment in the version of the member's subscription, as Kafka answers SyncGroup. */
export function encodeClassicAssignment(a: Assignment, version: number, nameOf: (topicId: string) => string | undefined): Buffer {
  const v = Math.max(0, Math.min(version, ConsumerProtocolAssignmentCodec.maxVersion));
  const assignedPartitions: { topic: string; partitions: number[] }[] = [];
  for (const [topicId, partitions] of a) {
    const topic = nameOf(topicId);
    if (topic !== undefined) assignedPartitions.push({ topic, partitions: [...partitions] });
  }
  const w = new Writer(64);
  w.int16(v);
  ConsumerProtocolAssignmentCodec.write(w, { assignedPartitions, userData: null }, v);
  return Buffer.from(w.result());
}

/** Partitions by topic name as an assignment by topic id; topics the cluster does not know are dropped. */
export function byTopicId(list: readonly { topic: string; partitions: readonly number[] }[], topics: ClusterTopics): Assignment {
  const out: { topicId: string; partitions: readonly number[] }[] = [];
  for (const tp of list) {
    const t = topics.byName(tp.topic);
    if (t) out.push({ topicId: t.topicId, partitions: tp.partitions.filter((p) => p >= 0 && p < t.partitionCount) });
  }
  return assignmentFrom(out);
}
