/**
 * OffsetDelete v0: removes a group's committed offsets for topics it does not subscribe to.
 */
import { OffsetDeleteRequestCodec, OffsetDeleteResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeGroup, authorizeTopic } from './authz.js';
import { defineHandler } from './types.js';

export const offsetDeleteHandler = defineHandler({
  apiKey: 47,
  request: OffsetDeleteRequestCodec,
  response: OffsetDeleteResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  async handle(req, ctx) {
    // ACLs: DELETE on the group, READ per topic.
    if (!authorizeGroup(ctx, AclOperation.DELETE, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
    const allowed = req.topics.filter((t) => authorizeTopic(ctx, AclOperation.READ, t.name));
    const res = await ctx.services.groupCoordinator.deleteOffsets(
      req.groupId,
      allowed.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) })),
    );
    const denied = req.topics.filter((t) => !allowed.includes(t))
      .map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })) }));
    return { throttleTimeMs: 0, errorCode: res.errorCode, topics: [...res.topics, ...denied] };
  },
});
