/**
 * Heartbeat v0–v4: keeps a member alive and tells it when to rejoin.
 */
import { HeartbeatRequestCodec, HeartbeatResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeGroup } from './authz.js';
import { defineHandler } from './types.js';

export const heartbeatHandler = defineHandler({
  apiKey: 12,
  request: HeartbeatRequestCodec,
  response: HeartbeatResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  async handle(req, ctx) {
    if (!authorizeGroup(ctx, AclOperation.READ, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    const errorCode = await ctx.services.groupCoordinator.heartbeat({
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: ctx.header.apiVersion >= 3 ? req.groupInstanceId : null,
    });
    return { throttleTimeMs: 0, errorCode };
  },
});
