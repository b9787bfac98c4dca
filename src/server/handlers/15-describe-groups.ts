/**
 * DescribeGroups v0–v5: state, protocol and members of each group. A group named twice is
 * described once (Kafka answers every entry: a group of large members named 10,000 times made
 * one small request a huge answer; Kafka's clients never name a group twice).
 */
import { DescribeGroupsRequestCodec, DescribeGroupsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, authorizedOperations, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { NO_AUTHORIZED_OPERATIONS } from './authorized-operations.js';
import { allInSlices } from '../../common/slices.js';

/** Kafka's check: DESCRIBE on each group (and its authorized operations when asked for). */
const may = resourceChecks({
  describeGroup: { resource: ResourceType.GROUP, operation: AclOperation.DESCRIBE },
});

export const describeGroupsHandler = defineHandler({
  apiKey: 15,
  request: DescribeGroupsRequestCodec,
  response: DescribeGroupsResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  slicedField: 'groups',
  authorize: { resources: may },
  async handle(req, ctx) {
    // ACLs: DESCRIBE per group (else GROUP_AUTHORIZATION_FAILED); the principal's operations on each.
    const groups = await allInSlices([...new Set(req.groups)], async (g) =>
      may.describeGroup.allows(ctx, g)
        ? {
            ...(await ctx.services.groupCoordinator.describeGroup(g)),
            authorizedOperations: authorizedOperations(ctx, ResourceType.GROUP, g, req.includeAuthorizedOperations),
          }
        : {
            groupId: g,
            errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            groupState: '',
            protocolType: '',
            protocolData: '',
            members: [],
            authorizedOperations: NO_AUTHORIZED_OPERATIONS,
          },
    );
    return { throttleTimeMs: 0, groups };
  },
});
