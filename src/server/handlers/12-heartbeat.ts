/**
 * Heartbeat v0–v4: keeps a member alive and tells it when to rejoin.
 */
import { HeartbeatRequestCodec, HeartbeatResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';

export const heartbeatHandler = defineHandler({
  apiKey: 12,
  request: HeartbeatRequestCodec,
  response: HeartbeatResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  async handle(req, ctx) {
    const errorCode = await ctx.services.groupCoordinator.heartbeat({
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: ctx.header.apiVersion >= 3 ? req.groupInstanceId : null,
    });
    return { throttleTimeMs: 0, errorCode };
  },
});
