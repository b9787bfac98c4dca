/**
 * DeleteGroups v0–v2: removes empty groups and their offsets (tombstones in __consumer_offsets).
 */
import { DeleteGroupsRequestCodec, DeleteGroupsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';

/** Kafka's check: DELETE on each group. */
const may = resourceChecks({
  deleteGroup: { resource: ResourceType.GROUP, operation: AclOperation.DELETE },
});

export const deleteGroupsHandler = defineHandler({
  apiKey: 42,
  request: DeleteGroupsRequestCodec,
  response: DeleteGroupsResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  slicedField: 'results',
  authorize: { resources: may },
  async handle(req, ctx) {
    // Each group once (clients key the answers by group). ACLs: DELETE per group.
    const names = [...new Set(req.groupsNames)];
    const allowed = names.filter((g) => may.deleteGroup.allows(ctx, g));
    const results = allowed.length > 0 ? await ctx.services.groupCoordinator.deleteGroups(allowed) : [];
    const byId = new Map(results.map((r) => [r.groupId, r]));
    return { throttleTimeMs: 0, results: names.map((g) => byId.get(g) ?? { groupId: g, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }) };
  },
});
