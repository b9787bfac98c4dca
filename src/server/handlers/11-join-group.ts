/**
 * JoinGroup v0–v9 (classic protocol). The response may wait for the whole join phase.
 */
import { JoinGroupRequestCodec, JoinGroupResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';

/** Kafka's check: READ on the group. */
const may = resourceChecks({
  readGroup: { resource: ResourceType.GROUP, operation: AclOperation.READ },
});

export const joinGroupHandler = defineHandler({
  apiKey: 11,
  request: JoinGroupRequestCodec,
  response: JoinGroupResponseCodec,
  minVersion: 0,
  maxVersion: 9,
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    if (!may.readGroup.allows(ctx, req.groupId)) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        generationId: -1,
        protocolType: null,
        protocolName: version >= 7 ? null : '',
        leader: '',
        memberId: req.memberId,
        members: [],
      };
    }
    const o = await ctx.services.groupCoordinator.joinGroup({
      groupId: req.groupId,
      memberId: req.memberId,
      groupInstanceId: version >= 5 ? req.groupInstanceId : null,
      sessionTimeoutMs: req.sessionTimeoutMs,
      // v0 has no rebalance timeout: the session timeout served as both.
      rebalanceTimeoutMs: version >= 1 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
      protocolType: req.protocolType,
      protocols: req.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
      apiVersion: version,
      clientId: ctx.header.clientId ?? '',
      clientHost: `/${ctx.connection.clientHost}`,
    });
    return {
      throttleTimeMs: 0,
      errorCode: o.errorCode,
      generationId: o.generationId,
      protocolType: o.protocolType,
      // Before v7 the protocol name is not nullable: an error answer carries "".
      protocolName: version >= 7 ? o.protocolName : (o.protocolName ?? ''),
      leader: o.leader,
      skipAssignment: o.skipAssignment,
      memberId: o.memberId,
      members: o.members,
    };
  },
});
