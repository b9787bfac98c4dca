/**
 * LeaveGroup v0–v5: one member (v0–v2) or a batch of members by id or instance id (v3+).
 */
import { LeaveGroupRequestCodec, LeaveGroupResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';

/** Kafka's check: READ on the group. */
const may = resourceChecks({
  readGroup: { resource: ResourceType.GROUP, operation: AclOperation.READ },
});

export const leaveGroupHandler = defineHandler({
  apiKey: 13,
  request: LeaveGroupRequestCodec,
  response: LeaveGroupResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    if (!may.readGroup.allows(ctx, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
    const leaving =
      version >= 3
        ? req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId }))
        : [{ memberId: req.memberId, groupInstanceId: null }];
    const res = await ctx.services.groupCoordinator.leaveGroup(req.groupId, leaving);
    if (version >= 3) return { throttleTimeMs: 0, errorCode: res.errorCode, members: res.members };
    // One member: its own error is the answer's error.
    const code = res.errorCode !== ErrorCode.NONE ? res.errorCode : (res.members[0]?.errorCode ?? ErrorCode.NONE);
    return { throttleTimeMs: 0, errorCode: code };
  },
});
