/**
 * OffsetDelete v0: removes a group's committed offsets for topics it does not subscribe to.
 */
import { OffsetDeleteRequestCodec, OffsetDeleteResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';

/** Kafka's checks: DELETE on the group, READ on each topic (others are answered TOPIC_AUTHORIZATION_FAILED). */
const may = resourceChecks({
  deleteGroup: { resource: ResourceType.GROUP, operation: AclOperation.DELETE },
  readTopic: { resource: ResourceType.TOPIC, operation: AclOperation.READ },
});

export const offsetDeleteHandler = defineHandler({
  apiKey: 47,
  request: OffsetDeleteRequestCodec,
  response: OffsetDeleteResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  authorize: { resources: may },
  async handle(req, ctx) {
    // ACLs: DELETE on the group, READ per topic.
    if (!may.deleteGroup.allows(ctx, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
    const allowed = req.topics.filter((t) => may.readTopic.allows(ctx, t.name));
    const res = await ctx.services.groupCoordinator.deleteOffsets(
      req.groupId,
      allowed.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) })),
    );
    const denied = req.topics
      .filter((t) => !allowed.includes(t))
      .map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })),
      }));
    return { throttleTimeMs: 0, errorCode: res.errorCode, topics: [...res.topics, ...denied] };
  },
});
