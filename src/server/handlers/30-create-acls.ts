import { CreateAclsRequestCodec, CreateAclsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from './types.js';
import { AclOperation } from './authz.js';
import { NO_AUTHORIZER_MESSAGE } from './acl-common.js';

/** CreateAcls: needs ALTER on the cluster; one result per creation, INVALID_REQUEST for a bad binding. */
export const createAclsHandler = defineHandler({
  apiKey: 30,
  request: CreateAclsRequestCodec,
  response: CreateAclsResponseCodec,
  minVersion: 0,
  maxVersion: 3,
  // With no authorizer the check passes and the handler answers SECURITY_DISABLED.
  authorize: {
    cluster: AclOperation.ALTER,
    denied: (req) => ({
      throttleTimeMs: 0,
      results: req.creations.map(() => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.' })),
    }),
  },
  async handle(req, ctx) {
    const all = (errorCode: number, errorMessage: string) => ({ throttleTimeMs: 0, results: req.creations.map(() => ({ errorCode, errorMessage })) });
    const authorizer = ctx.services.authorizer;
    if (!authorizer) return all(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE);
    const results = await authorizer.create(
      req.creations.map((c) => ({
        pattern: { resourceType: c.resourceType, name: c.resourceName, patternType: c.resourcePatternType },
        entry: { principal: c.principal, host: c.host, operation: c.operation, permissionType: c.permissionType },
      })),
    );
    return {
      throttleTimeMs: 0,
      results: results.map((e) =>
        e === undefined
          ? { errorCode: ErrorCode.NONE, errorMessage: null }
          : { errorCode: e.message.startsWith('Failed to') ? ErrorCode.UNKNOWN_SERVER_ERROR : ErrorCode.INVALID_REQUEST, errorMessage: e.message },
      ),
    };
  },
});
