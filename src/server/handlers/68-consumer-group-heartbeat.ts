/**
 * ConsumerGroupHeartbeat v0–v1 (KIP-848): join, heartbeat and leave a consumer group of the new
 * protocol; the coordinator answers with the member's epoch and, when it changed, its
 * assignment (coordinator/group/consumer/heartbeat.ts). v1: the client makes its member id,
 * and may subscribe by regular expression.
 */
import { ConsumerGroupHeartbeatRequestCodec, ConsumerGroupHeartbeatResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';

/** Kafka's checks: READ on the group; DESCRIBE on every topic subscribed to by name. */
const may = resourceChecks({
  readGroup: { resource: ResourceType.GROUP, operation: AclOperation.READ },
  describeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE },
});

export const consumerGroupHeartbeatHandler = defineHandler({
  apiKey: 68,
  request: ConsumerGroupHeartbeatRequestCodec,
  response: ConsumerGroupHeartbeatResponseCodec,
  minVersion: 0,
  maxVersion: 1,
  authorize: { resources: may },
  async handle(req, ctx) {
    if (!may.readGroup.allows(ctx, req.groupId)) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        errorMessage: null,
        memberId: null,
        memberEpoch: 0,
        heartbeatIntervalMs: 0,
        assignment: null,
      };
    }
    if (req.subscribedTopicNames?.some((t) => !may.describeTopic.allows(ctx, t))) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        errorMessage: null,
        memberId: null,
        memberEpoch: 0,
        heartbeatIntervalMs: 0,
        assignment: null,
      };
    }
    const res = await ctx.services.groupCoordinator.consumerGroups.heartbeat({
      ...req,
      subscribedTopicRegex: ctx.header.apiVersion >= 1 ? req.subscribedTopicRegex : null,
      apiVersion: ctx.header.apiVersion,
      clientId: ctx.header.clientId ?? '',
      clientHost: `/${ctx.connection.clientHost}`,
    });
    return { throttleTimeMs: 0, ...res };
  },
});
