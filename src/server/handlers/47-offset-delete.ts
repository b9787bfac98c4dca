/**
 * OffsetDelete v0: removes a group's committed offsets for topics it does not subscribe to.
 */
import { OffsetDeleteRequestCodec, OffsetDeleteResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';

export const offsetDeleteHandler = defineHandler({
  apiKey: 47,
  request: OffsetDeleteRequestCodec,
  response: OffsetDeleteResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  async handle(req, ctx) {
    const res = await ctx.services.groupCoordinator.deleteOffsets(
      req.groupId,
      req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) })),
    );
    return { throttleTimeMs: 0, errorCode: res.errorCode, topics: res.topics };
  },
});
