/**
 * ListGroups v0–v5: the groups coordinated here, optionally filtered by state (v4+) and type (v5).
 */
import { ListGroupsRequestCodec, ListGroupsResponseCodec } from '../../protocol/messages/index.js';
import { AclOperation, ResourceType, authorizeCluster } from './authz.js';
import { defineHandler } from './types.js';

export const listGroupsHandler = defineHandler({
  apiKey: 16,
  request: ListGroupsRequestCodec,
  response: ListGroupsResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  handle(req, ctx) {
    const version = ctx.header.apiVersion;
    const res = ctx.services.groupCoordinator.listGroups(version >= 4 ? req.statesFilter : [], version >= 5 ? req.typesFilter : []);
    // ACLs: every group with DESCRIBE on the cluster, else only the groups the principal may DESCRIBE.
    const groups = ctx.services.authorizer === undefined || authorizeCluster(ctx, AclOperation.DESCRIBE)
      ? res.groups
      : res.groups.filter((g) => ctx.services.authorizer!.authorize(ctx.connection.principal, ctx.connection.clientHost, AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId, 'ListGroups', false));
    return { throttleTimeMs: 0, errorCode: res.errorCode, groups };
  },
});
