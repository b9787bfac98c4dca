import { DeleteAclsRequestCodec, DeleteAclsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from './types.js';
import { AclOperation } from './authz.js';
import { filterFromWire, NO_AUTHORIZER_MESSAGE } from './acl-common.js';
import { filterProblem, type AclBindingFilter } from '../../security/authorizer/acl-model.js';

/** DeleteAcls: needs ALTER on the cluster; per filter the bindings removed, INVALID_REQUEST for a bad filter. */
export const deleteAclsHandler = defineHandler({
  apiKey: 31,
  request: DeleteAclsRequestCodec,
  response: DeleteAclsResponseCodec,
  minVersion: 0,
  maxVersion: 3,
  // With no authorizer the check passes and the handler answers SECURITY_DISABLED.
  authorize: {
    cluster: AclOperation.ALTER,
    denied: (req) => ({
      throttleTimeMs: 0,
      filterResults: req.filters.map(() => ({
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: 'Cluster authorization failed.',
        matchingAcls: [],
      })),
    }),
  },
  async handle(req, ctx) {
    const all = (errorCode: number, errorMessage: string) => ({
      throttleTimeMs: 0,
      filterResults: req.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
    });
    const authorizer = ctx.services.authorizer;
    if (!authorizer) return all(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE);
    const filters = req.filters.map(filterFromWire);
    const problems = filters.map(filterProblem);
    const valid: AclBindingFilter[] = filters.filter((_, i) => problems[i] === undefined);
    const results = await authorizer.delete(valid);
    let v = 0;
    return {
      throttleTimeMs: 0,
      filterResults: filters.map((_, i) => {
        const problem = problems[i];
        if (problem !== undefined) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: problem, matchingAcls: [] };
        const r = results[v++]!;
        if (r.error) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: r.error.message, matchingAcls: [] };
        return {
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          matchingAcls: r.deleted.map((b) => ({
            errorCode: ErrorCode.NONE,
            errorMessage: null,
            resourceType: b.pattern.resourceType,
            resourceName: b.pattern.name,
            patternType: b.pattern.patternType,
            principal: b.entry.principal,
            host: b.entry.host,
            operation: b.entry.operation,
            permissionType: b.entry.permissionType,
          })),
        };
      }),
    };
  },
});
