/**
 * DescribeGroups v0–v5: state, protocol and members of each group.
 */
import { DescribeGroupsRequestCodec, DescribeGroupsResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';
import { GROUP_AUTHORIZED_OPERATIONS, NO_AUTHORIZED_OPERATIONS } from './authorized-operations.js';

export const describeGroupsHandler = defineHandler({
  apiKey: 15,
  request: DescribeGroupsRequestCodec,
  response: DescribeGroupsResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  async handle(req, ctx) {
    const groups = await Promise.all(req.groups.map((g) => ctx.services.groupCoordinator.describeGroup(g)));
    const ops = req.includeAuthorizedOperations ? GROUP_AUTHORIZED_OPERATIONS : NO_AUTHORIZED_OPERATIONS;
    return { throttleTimeMs: 0, groups: groups.map((g) => ({ ...g, authorizedOperations: ops })) };
  },
});
