/** Shared by CreateAcls (30), DescribeAcls (29) and DeleteAcls (31): wire filters to the model. */
import type { AclBindingFilter } from '../../security/authorizer/acl-model.js';

export interface WireAclFilter {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
}

export function filterFromWire(f: WireAclFilter): AclBindingFilter {
  return {
    pattern: { resourceType: f.resourceTypeFilter, name: f.resourceNameFilter, patternType: f.patternTypeFilter },
    entry: { principal: f.principalFilter, host: f.hostFilter, operation: f.operation, permissionType: f.permissionType },
  };
}

export const NO_AUTHORIZER_MESSAGE = 'No Authorizer is configured on the broker';
