/**
 * DeleteGroups v0–v2: removes empty groups and their offsets (tombstones in __consumer_offsets).
 */
import { DeleteGroupsRequestCodec, DeleteGroupsResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';

export const deleteGroupsHandler = defineHandler({
  apiKey: 42,
  request: DeleteGroupsRequestCodec,
  response: DeleteGroupsResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  async handle(req, ctx) {
    return { throttleTimeMs: 0, results: await ctx.services.groupCoordinator.deleteGroups(req.groupsNames) };
  },
});
