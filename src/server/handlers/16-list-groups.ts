/**
 * ListGroups v0–v5: the groups coordinated here, optionally filtered by state (v4+) and type (v5).
 */
import { ListGroupsRequestCodec, ListGroupsResponseCodec } from '../../protocol/messages/index.js';
import { AclOperation, CLUSTER_NAME, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';

/** Kafka's check: DESCRIBE on the cluster lists every group. */
const may = resourceChecks({ describeCluster: { resource: ResourceType.CLUSTER, operation: AclOperation.DESCRIBE } });

export const listGroupsHandler = defineHandler({
  apiKey: 16,
  request: ListGroupsRequestCodec,
  response: ListGroupsResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  authorize: {
    resources: may,
    ownWay: 'a listing: every group with DESCRIBE on the cluster, else only those the principal may describe, checked quietly (as Kafka)',
  },
  handle(req, ctx) {
    const version = ctx.header.apiVersion;
    const res = ctx.services.groupCoordinator.listGroups(version >= 4 ? req.statesFilter : [], version >= 5 ? req.typesFilter : []);
    // ACLs: every group with DESCRIBE on the cluster, else only the groups the principal may DESCRIBE.
    const groups =
      ctx.services.authorizer === undefined || may.describeCluster.allows(ctx, CLUSTER_NAME)
        ? res.groups
        : res.groups.filter((g) =>
            ctx.services.authorizer!.authorize(
              ctx.connection.principal,
              ctx.connection.clientHost,
              AclOperation.DESCRIBE,
              ResourceType.GROUP,
              g.groupId,
              'ListGroups',
              false,
            ),
          );
    return { throttleTimeMs: 0, errorCode: res.errorCode, groups };
  },
});
