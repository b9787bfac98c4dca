/**
 * Heartbeat v0–v4: keeps a member alive and tells it when to rejoin.
 */
import { HeartbeatRequestCodec, HeartbeatResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';

/** Kafka's check: READ on the group. */
const may = resourceChecks({
  readGroup: { resource: ResourceType.GROUP, operation: AclOperation.READ },
});

export const heartbeatHandler = defineHandler({
  apiKey: 12,
  request: HeartbeatRequestCodec,
  response: HeartbeatResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  authorize: { resources: may },
  async handle(req, ctx) {
    if (!may.readGroup.allows(ctx, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    const errorCode = await ctx.services.groupCoordinator.heartbeat({
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: ctx.header.apiVersion >= 3 ? req.groupInstanceId : null,
    });
    return { throttleTimeMs: 0, errorCode };
  },
});
