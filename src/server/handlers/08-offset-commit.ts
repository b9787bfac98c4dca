/**
 * OffsetCommit v0–v9: answered only once the commit's records are durable on the group's
 * `__consumer_offsets` partition.
 *
 * As Kafka (every version): a topic the cluster does not know, and a partition beyond a known
 * topic's count, get UNKNOWN_TOPIC_OR_PARTITION and are not committed; the other partitions are.
 * When nothing is left to commit the answer goes out at once, without the group being looked at.
 *
 * Version 0 in cluster mode (zookeeper.connect) goes to ZooKeeper instead, as Kafka 0.8.2 to 2.x:
 * `/consumers/<group>/offsets/<topic>/<partition>` set to the offset as decimal text (metadata
 * longer than offset.metadata.max.bytes is refused, shorter metadata is not stored); no group,
 * generation or member checks; per partition UNKNOWN_SERVER_ERROR when ZooKeeper fails or does
 * not answer within zookeeper.connection.timeout.ms (Kafka's Errors.forException of its ZooKeeper
 * client's exceptions). A group id that is not one znode name gets INVALID_GROUP_ID (Kafka would
 * have written a nested or invalid path).
 */
import { OffsetCommitRequestCodec, OffsetCommitResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { CommitPartition } from '../../coordinator/group/offsets.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler, type RequestContext } from './types.js';
import { legacyGroupIdError, type ZkConsumerOffsets } from '../../metadata/zk/zk-consumer-offsets.js';
import { messageOf } from '../../common/errors.js';
import type { OffsetMove } from '../../coordinator/group/history/history-tracker.js';

/** Kafka's checks: READ on the group, then on each topic. */
const may = resourceChecks({
  readGroup: { resource: ResourceType.GROUP, operation: AclOperation.READ },
  readTopic: { resource: ResourceType.TOPIC, operation: AclOperation.READ },
});

type PartitionErrors = { partitionIndex: number; errorCode: number }[];

export const offsetCommitHandler = defineHandler({
  apiKey: 8,
  request: OffsetCommitRequestCodec,
  response: OffsetCommitResponseCodec,
  minVersion: 0,
  maxVersion: 9,
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    const metadata = ctx.services.metadata;
    // ACLs: READ on the group (else every partition GROUP_AUTHORIZATION_FAILED), READ per topic.
    if (!may.readGroup.allows(ctx, req.groupId)) {
      return {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })),
        })),
      };
    }
    const refused = new Map<string, PartitionErrors>();
    const valid: { name: string; partitions: CommitPartition[] }[] = [];
    for (const t of req.topics) {
      const count = metadata.topic(t.name)?.partitions.length ?? 0;
      const ok: CommitPartition[] = [];
      const topicDenied = !may.readTopic.allows(ctx, t.name);
      for (const p of t.partitions) {
        if (topicDenied || p.partitionIndex < 0 || p.partitionIndex >= count) {
          const list = refused.get(t.name) ?? [];
          list.push({ partitionIndex: p.partitionIndex, errorCode: topicDenied ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
          refused.set(t.name, list);
          continue;
        }
        ok.push({
          partitionIndex: p.partitionIndex,
          committedOffset: p.committedOffset,
          committedLeaderEpoch: version >= 6 ? p.committedLeaderEpoch : -1,
          commitTimestamp: version === 1 ? p.commitTimestamp : -1n,
          committedMetadata: p.committedMetadata,
        });
      }
      if (ok.length > 0) valid.push({ name: t.name, partitions: ok });
    }
    const zkOffsets = ctx.services.zkConsumerOffsets;
    const committed =
      valid.length === 0
        ? []
        : version === 0 && zkOffsets
          ? await commitToZooKeeper(zkOffsets, req.groupId, valid, ctx)
          : await ctx.services.groupCoordinator.commitOffsets(
              {
                groupId: req.groupId,
                generationId: version >= 1 ? req.generationIdOrMemberEpoch : -1,
                memberId: version >= 1 ? req.memberId : '',
                groupInstanceId: version >= 7 ? req.groupInstanceId : null,
                retentionTimeMs: version >= 2 && version <= 4 ? req.retentionTimeMs : -1n,
                apiVersion: version,
                topics: valid,
              },
              committer(ctx),
            );
    // One entry per requested topic, in request order, refused partitions first (as Kafka's builder).
    const results = new Map<string, PartitionErrors>();
    for (const [name, parts] of refused) results.set(name, [...parts]);
    // appended in place: a topic named once per partition must not copy its list each time
    for (const t of committed) {
      const list = results.get(t.name);
      if (list === undefined) results.set(t.name, [...t.partitions]);
      else for (const p of t.partitions) list.push(p);
    }
    const topics: { name: string; partitions: PartitionErrors }[] = [];
    for (const t of req.topics) {
      const parts = results.get(t.name);
      if (parts === undefined) continue;
      results.delete(t.name);
      topics.push({ name: t.name, partitions: parts });
    }
    return { throttleTimeMs: 0, topics };
  },
});

/** Version 0 in cluster mode: every partition's znode written concurrently, each answered on its own. */
async function commitToZooKeeper(
  zk: ZkConsumerOffsets,
  group: string,
  topics: { name: string; partitions: CommitPartition[] }[],
  ctx: RequestContext,
): Promise<{ name: string; partitions: PartitionErrors }[]> {
  const badGroup = legacyGroupIdError(group) !== undefined;
  const maxMetadata = ctx.services.config.offsetMetadataMaxBytes;
  // The offset history, as for commits to __consumer_offsets: the znode's offset before is the previous one.
  const history = ctx.services.groupCoordinator.history;
  const moves: (OffsetMove | undefined)[] = []; // in request order, whatever order ZooKeeper answers in
  const answered = await Promise.all(
    topics.map(async (t) => ({
      name: t.name,
      partitions: await Promise.all(
        t.partitions.map(async (p) => {
          if (badGroup) return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.INVALID_GROUP_ID };
          if ((p.committedMetadata ?? '').length > maxMetadata) return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE };
          try {
            const slot = moves.push(undefined) - 1;
            const previous = history.enabled ? await zk.fetch(group, t.name, p.partitionIndex) : undefined;
            await zk.commit(group, t.name, p.partitionIndex, p.committedOffset);
            moves[slot] = { group, topic: t.name, partition: p.partitionIndex, previousOffset: previous ?? -1n, newOffset: p.committedOffset, leaderEpoch: -1 };
            return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE as number };
          } catch (err) {
            ctx.services.logger.warn(
              { group, topic: t.name, partition: p.partitionIndex, err: messageOf(err) },
              'OffsetCommit v0: writing the offset to ZooKeeper failed',
            );
            return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
          }
        }),
      ),
    })),
  );
  history.recordCommitted(
    moves.filter((m) => m !== undefined),
    { cause: 'commit', memberId: '', generation: -1, ...committer(ctx) },
    Date.now(),
  );
  return answered;
}

/** Who commits, as the offset history names them (client id; host as Kafka prints it, "/127.0.0.1"). */
function committer(ctx: RequestContext): { clientId: string; clientHost: string } {
  return { clientId: ctx.header.clientId ?? '', clientHost: `/${ctx.connection.clientHost}` };
}
