import { DescribeAclsRequestCodec, DescribeAclsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from './types.js';
import { AclOperation } from './authz.js';
import { filterFromWire, NO_AUTHORIZER_MESSAGE } from './acl-common.js';
import { filterProblem } from '../../security/authorizer/acl-model.js';
import type { DescribeAclsResource } from '../../protocol/messages/29-describe-acls.js';

/** DescribeAcls: the bindings a filter matches, grouped per resource pattern; needs DESCRIBE on the cluster. */
export const describeAclsHandler = defineHandler({
  apiKey: 29,
  request: DescribeAclsRequestCodec,
  response: DescribeAclsResponseCodec,
  minVersion: 0,
  maxVersion: 3,
  // With no authorizer the check passes and the handler answers SECURITY_DISABLED.
  authorize: {
    cluster: AclOperation.DESCRIBE,
    denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', resources: [] }),
  },
  handle(req, ctx) {
    const fail = (errorCode: number, errorMessage: string) => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] });
    const authorizer = ctx.services.authorizer;
    if (!authorizer) return fail(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE);
    const filter = filterFromWire(req);
    const problem = filterProblem(filter);
    if (problem) return fail(ErrorCode.INVALID_REQUEST, problem);
    const byPattern = new Map<string, DescribeAclsResource>();
    for (const b of authorizer.describe(filter)) {
      const key = `${b.pattern.resourceType}\u0000${b.pattern.patternType}\u0000${b.pattern.name}`;
      let r = byPattern.get(key);
      if (!r) byPattern.set(key, (r = { resourceType: b.pattern.resourceType, resourceName: b.pattern.name, patternType: b.pattern.patternType, acls: [] }));
      r.acls.push({ principal: b.entry.principal, host: b.entry.host, operation: b.entry.operation, permissionType: b.entry.permissionType });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, resources: [...byPattern.values()] };
  },
});
