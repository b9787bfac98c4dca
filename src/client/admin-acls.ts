/**
 * The admin client's ACL operations (CreateAcls, DescribeAcls, DeleteAcls), in Kafka's model
 * (src/security/authorizer/acl-model.ts). Any broker serves them; failures are KafkaErrors with
 * the broker's code and message.
 */
import { Api } from './apis.js';
import type { Cluster } from './cluster.js';
import { KafkaError } from './errors.js';
import type { AclBinding, AclBindingFilter } from '../security/authorizer/acl-model.js';

const wireFilter = (f: AclBindingFilter) => ({
  resourceTypeFilter: f.pattern.resourceType,
  resourceNameFilter: f.pattern.name,
  patternTypeFilter: f.pattern.patternType,
  principalFilter: f.entry.principal,
  hostFilter: f.entry.host,
  operation: f.entry.operation,
  permissionType: f.entry.permissionType,
});

/** One result per binding: null = created (or already there). */
export async function createAcls(cluster: Cluster, bindings: readonly AclBinding[]): Promise<(KafkaError | null)[]> {
  const conn = await cluster.anyConnection();
  const resp = await conn.send(Api.CreateAcls, {
    creations: bindings.map((b) => ({
      resourceType: b.pattern.resourceType,
      resourceName: b.pattern.name,
      resourcePatternType: b.pattern.patternType,
      principal: b.entry.principal,
      host: b.entry.host,
      operation: b.entry.operation,
      permissionType: b.entry.permissionType,
    })),
  });
  return resp.results.map((r) => (r.errorCode === 0 ? null : new KafkaError(r.errorCode, r.errorMessage ?? undefined)));
}

export async function describeAcls(cluster: Cluster, filter: AclBindingFilter): Promise<AclBinding[]> {
  const conn = await cluster.anyConnection();
  const resp = await conn.send(Api.DescribeAcls, wireFilter(filter));
  if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, resp.errorMessage ?? undefined);
  return resp.resources.flatMap((r) =>
    r.acls.map((a) => ({
      pattern: { resourceType: r.resourceType, name: r.resourceName, patternType: r.patternType },
      entry: { principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType },
    })),
  );
}

/** Per filter, the bindings removed; a failed filter throws its error. */
export async function deleteAcls(cluster: Cluster, filters: readonly AclBindingFilter[]): Promise<AclBinding[][]> {
  const conn = await cluster.anyConnection();
  const resp = await conn.send(Api.DeleteAcls, { filters: filters.map(wireFilter) });
  return resp.filterResults.map((r) => {
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? undefined);
    return r.matchingAcls.map((a) => ({
      pattern: { resourceType: a.resourceType, name: a.resourceName, patternType: a.patternType },
      entry: { principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType },
    }));
  });
}
