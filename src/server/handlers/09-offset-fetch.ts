/**
 * OffsetFetch v0–v9: committed offsets with their metadata; a null topic list (v2+) means every
 * partition the group has; v8+ asks for several groups at once; v9+ carries the member id and
 * epoch, checked against a consumer group (KIP-848: STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID).
 *
 * Version 0 in cluster mode (zookeeper.connect) reads ZooKeeper's
 * `/consumers/<group>/offsets/<topic>/<partition>`, as Kafka 0.8.2 to 2.x: the stored offset with
 * empty metadata; offset -1 with UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition and
 * for a partition with no stored offset (Kafka's UNKNOWN_PARTITION answer); -1 with
 * UNKNOWN_SERVER_ERROR when ZooKeeper fails or does not answer within
 * zookeeper.connection.timeout.ms; -1 with INVALID_GROUP_ID for a group id that is not one znode name.
 */
import { OffsetFetchRequestCodec, OffsetFetchResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler, type RequestContext } from './types.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import type { FetchedTopics } from '../../coordinator/group/offsets.js';

type Query = { name: string; partitions: number[] }[] | null;
/** v9+: the consumer group (KIP-848) member asking, checked against its member epoch. */
type Member = { memberId: string | null; memberEpoch: number };

/**
 * ACLs as Kafka: DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED); topics the principal may
 * not DESCRIBE are left out of "all topics" and answered TOPIC_AUTHORIZATION_FAILED when named.
 */
async function fetchAuthorized(
  ctx: RequestContext,
  groupId: string,
  q: Query,
  requireStable: boolean,
  member?: Member,
): Promise<{ errorCode: number; topics: FetchedTopics }> {
  const gc = ctx.services.groupCoordinator;
  if (ctx.services.authorizer === undefined) return gc.fetchOffsets(groupId, q, requireStable, member);
  if (!may.describeGroup.allows(ctx, groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
  if (q === null) {
    const res = await gc.fetchOffsets(groupId, null, requireStable, member);
    return { errorCode: res.errorCode, topics: res.topics.filter((t) => may.describeTopic.allows(ctx, t.name)) };
  }
  const allowed = q.filter((t) => may.describeTopic.allows(ctx, t.name));
  const res = allowed.length > 0 || q.length === 0 ? await gc.fetchOffsets(groupId, allowed, requireStable, member) : { errorCode: ErrorCode.NONE, topics: [] };
  const byName = new Map(res.topics.map((t) => [t.name, t]));
  return {
    errorCode: res.errorCode,
    topics: q.map(
      (t) =>
        byName.get(t.name) ?? {
          name: t.name,
          partitions: t.partitions.map((partitionIndex) => ({
            partitionIndex,
            committedOffset: -1n,
            committedLeaderEpoch: -1,
            metadata: '',
            errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
          })),
        },
    ),
  };
}
import { legacyGroupIdError, type ZkConsumerOffsets } from '../../metadata/zk/zk-consumer-offsets.js';
import { messageOf } from '../../common/errors.js';

/** Kafka's checks: DESCRIBE on the group; the offsets of topics the principal may not describe are left out. */
const may = resourceChecks({
  describeGroup: { resource: ResourceType.GROUP, operation: AclOperation.DESCRIBE },
  describeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE },
});

type TopicsQuery = { name: string; partitions: number[] }[] | null;

export const offsetFetchHandler = defineHandler({
  apiKey: 9,
  request: OffsetFetchRequestCodec,
  response: OffsetFetchResponseCodec,
  minVersion: 0,
  maxVersion: 9,
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    if (version >= 8) {
      const groups = await Promise.all(
        req.groups.map(async (g) => {
          const q: TopicsQuery = g.topics === null ? null : g.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes }));
          const member = version >= 9 ? { memberId: g.memberId, memberEpoch: g.memberEpoch } : undefined;
          const res = await fetchAuthorized(ctx, g.groupId, q, req.requireStable, member);
          return { groupId: g.groupId, errorCode: res.errorCode, topics: res.topics };
        }),
      );
      return { throttleTimeMs: 0, groups };
    }
    const zkOffsets = ctx.services.zkConsumerOffsets;
    if (version === 0 && zkOffsets && !may.describeGroup.allows(ctx, req.groupId)) {
      return {
        throttleTimeMs: 0,
        topics: (req.topics ?? []).map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((partitionIndex) => ({
            partitionIndex,
            committedOffset: -1n,
            committedLeaderEpoch: -1,
            metadata: '',
            errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
          })),
        })),
      };
    }
    if (version === 0 && zkOffsets) return { throttleTimeMs: 0, topics: await fetchFromZooKeeper(zkOffsets, req.groupId, req.topics ?? [], ctx) };
    const q: TopicsQuery = req.topics === null ? null : req.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes }));
    const res = await fetchAuthorized(ctx, req.groupId, q, version >= 7 && req.requireStable);
    if (res.errorCode !== ErrorCode.NONE && version < 2) {
      // v0–v1 have no top-level error: each requested partition carries it.
      const topics = (q ?? []).map((t) => ({
        name: t.name,
        partitions: t.partitions.map((partitionIndex) => ({
          partitionIndex,
          committedOffset: -1n,
          committedLeaderEpoch: -1,
          metadata: '',
          errorCode: res.errorCode,
        })),
      }));
      return { throttleTimeMs: 0, topics };
    }
    return { throttleTimeMs: 0, errorCode: res.errorCode, topics: res.topics };
  },
});

async function fetchFromZooKeeper(zk: ZkConsumerOffsets, group: string, topics: { name: string; partitionIndexes: number[] }[], ctx: RequestContext) {
  const badGroup = legacyGroupIdError(group) !== undefined;
  const answer = (partitionIndex: number, committedOffset: bigint, errorCode: number) => ({
    partitionIndex,
    committedOffset,
    committedLeaderEpoch: -1,
    metadata: '',
    errorCode,
  });
  return Promise.all(
    topics.map(async (t) => {
      const count = ctx.services.metadata.topic(t.name)?.partitions.length ?? 0;
      return {
        name: t.name,
        partitions: await Promise.all(
          t.partitionIndexes.map(async (p) => {
            if (badGroup) return answer(p, -1n, ErrorCode.INVALID_GROUP_ID);
            if (p < 0 || p >= count) return answer(p, -1n, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            try {
              const offset = await zk.fetch(group, t.name, p);
              return offset === undefined ? answer(p, -1n, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) : answer(p, offset, ErrorCode.NONE);
            } catch (err) {
              ctx.services.logger.warn({ group, topic: t.name, partition: p, err: messageOf(err) }, 'OffsetFetch v0: reading the offset from ZooKeeper failed');
              return answer(p, -1n, ErrorCode.UNKNOWN_SERVER_ERROR);
            }
          }),
        ),
      };
    }),
  );
}
