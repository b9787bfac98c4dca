/**
 * SyncGroup v0–v5: the leader hands in the assignment; everyone waits for theirs.
 */
import { SyncGroupRequestCodec, SyncGroupResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';

/** Kafka's check: READ on the group. */
const may = resourceChecks({
  readGroup: { resource: ResourceType.GROUP, operation: AclOperation.READ },
});

export const syncGroupHandler = defineHandler({
  apiKey: 14,
  request: SyncGroupRequestCodec,
  response: SyncGroupResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    if (!may.readGroup.allows(ctx, req.groupId))
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
    const o = await ctx.services.groupCoordinator.syncGroup({
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: version >= 3 ? req.groupInstanceId : null,
      protocolType: version >= 5 ? req.protocolType : null,
      protocolName: version >= 5 ? req.protocolName : null,
      assignments: req.assignments.map((a) => ({ memberId: a.memberId, assignment: Buffer.from(a.assignment) })),
    });
    return { throttleTimeMs: 0, errorCode: o.errorCode, protocolType: o.protocolType, protocolName: o.protocolName, assignment: o.assignment };
  },
});
