/**
 * The authorization checks, as KafkaApis makes them (`authHelper.authorize(...)`), for the
 * connection's principal and client host. A handler declares what it needs in `defineHandler`
 * (types.ts, `authorize`): the router makes a whole-request check with `authorizeCluster`; a
 * per-resource check is made with the helpers `resourceChecks` binds to the declared resource
 * type and operation. With no authorizer configured every check is one branch and answers true
 * (the hot paths pay nothing more).
 */
import { AclOperation, ResourceType, CLUSTER_NAME, SUPPORTED_OPERATIONS } from '../../security/authorizer/acl-model.js';
import type { BoundCheck, RequestContext, ResourceCheck } from './types.js';
import { NO_AUTHORIZED_OPERATIONS } from './authorized-operations.js';

export { AclOperation, ResourceType, CLUSTER_NAME };

const requestName = (ctx: RequestContext): string => ctx.services.handlers.get(ctx.header.apiKey)?.name ?? String(ctx.header.apiKey);

function authorize(ctx: RequestContext, op: AclOperation, resourceType: ResourceType, name: string): boolean {
  const a = ctx.services.authorizer;
  if (a === undefined) return true;
  return a.authorize(ctx.connection.principal, ctx.connection.clientHost, op, resourceType, name, requestName(ctx));
}

/** The router's whole-request check (a handler's `authorize: { cluster }`). */
export function authorizeCluster(ctx: RequestContext, op: AclOperation): boolean {
  return authorize(ctx, op, ResourceType.CLUSTER, CLUSTER_NAME);
}

/** Binds each declared check: `checks.writeTopic.allows(ctx, topic)`. */
export function resourceChecks<K extends string>(checks: Record<K, ResourceCheck>): Readonly<Record<K, BoundCheck>> {
  const bound = {} as Record<K, BoundCheck>;
  for (const key of Object.keys(checks) as K[]) {
    const { resource, operation } = checks[key];
    bound[key] = { resource, operation, allows: (ctx, name) => authorize(ctx, operation, resource, name) };
  }
  return bound;
}

/** Kafka's authorizeByResourceType: `op` allowed on at least one resource of the type. */
export function authorizeAnyOfType(ctx: RequestContext, op: AclOperation, resourceType: ResourceType): boolean {
  const a = ctx.services.authorizer;
  return a === undefined || a.authorizeByResourceType(ctx.connection.principal, ctx.connection.clientHost, op, resourceType);
}

/**
 * The authorized-operations bit set of a resource for this principal (bit n = operation code n),
 * or Kafka's "not requested" sentinel when `requested` is false. Checked without logging denials
 * (as Kafka's authorizedOperations, logIfDenied = false).
 */
export function authorizedOperations(ctx: RequestContext, resourceType: ResourceType, name: string, requested: boolean): number {
  if (!requested) return NO_AUTHORIZED_OPERATIONS;
  const ops = SUPPORTED_OPERATIONS[resourceType] ?? [];
  const a = ctx.services.authorizer;
  // Kafka reports nothing (0) on a resource the principal may not even describe.
  if (a !== undefined && !a.authorize(ctx.connection.principal, ctx.connection.clientHost, AclOperation.DESCRIBE, resourceType, name, '', false)) return 0;
  let bits = 0;
  for (const op of ops) {
    if (a === undefined || a.authorize(ctx.connection.principal, ctx.connection.clientHost, op, resourceType, name, '', false)) bits |= 1 << op;
  }
  return bits;
}
