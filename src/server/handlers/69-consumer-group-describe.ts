/**
 * ConsumerGroupDescribe v0 (KIP-848): a consumer group's epochs, assignor and members with
 * their current and target assignments. A group named twice is described once.
 */
import { ConsumerGroupDescribeRequestCodec, ConsumerGroupDescribeResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, authorizedOperations, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { NO_AUTHORIZED_OPERATIONS } from './authorized-operations.js';
import { allInSlices } from '../../common/slices.js';

/** Kafka's check: DESCRIBE on each group (and its authorized operations when asked for). */
const may = resourceChecks({
  describeGroup: { resource: ResourceType.GROUP, operation: AclOperation.DESCRIBE },
});

export const consumerGroupDescribeHandler = defineHandler({
  apiKey: 69,
  request: ConsumerGroupDescribeRequestCodec,
  response: ConsumerGroupDescribeResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  slicedField: 'groups',
  authorize: { resources: may },
  async handle(req, ctx) {
    const groups = await allInSlices([...new Set(req.groupIds)], async (g) =>
      may.describeGroup.allows(ctx, g)
        ? {
            ...(await ctx.services.groupCoordinator.consumerGroups.describe(g)),
            authorizedOperations: authorizedOperations(ctx, ResourceType.GROUP, g, req.includeAuthorizedOperations),
          }
        : { groupId: g, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null, authorizedOperations: NO_AUTHORIZED_OPERATIONS },
    );
    return { throttleTimeMs: 0, groups };
  },
});
