/**
 * OffsetCommit v0–v9: answered only once the commit's records are durable on the group's
 * `__consumer_offsets` partition.
 */
import { OffsetCommitRequestCodec, OffsetCommitResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';

export const offsetCommitHandler = defineHandler({
  apiKey: 8,
  request: OffsetCommitRequestCodec,
  response: OffsetCommitResponseCodec,
  minVersion: 0,
  maxVersion: 9,
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    const topics = await ctx.services.groupCoordinator.commitOffsets({
      groupId: req.groupId,
      generationId: version >= 1 ? req.generationIdOrMemberEpoch : -1,
      memberId: version >= 1 ? req.memberId : '',
      groupInstanceId: version >= 7 ? req.groupInstanceId : null,
      retentionTimeMs: version >= 2 && version <= 4 ? req.retentionTimeMs : -1n,
      apiVersion: version,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          committedOffset: p.committedOffset,
          committedLeaderEpoch: version >= 6 ? p.committedLeaderEpoch : -1,
          commitTimestamp: version === 1 ? p.commitTimestamp : -1n,
          committedMetadata: p.committedMetadata,
        })),
      })),
    });
    return { throttleTimeMs: 0, topics };
  },
});
