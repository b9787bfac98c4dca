/**
 * The loop AlterConfigs and IncrementalAlterConfigs share: each resource is changed on its own
 * and answered with its own error; a resource named twice in one request is refused, as Kafka does.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { RequestContext } from './types.js';
import { AclOperation, CLUSTER_NAME, ResourceType, resourceChecks } from './authz.js';
import { errorOutcome } from '../admin/index.js';
import { LoopSlicer } from '../../common/slices.js';

interface ConfigResource {
  resourceType: number;
  resourceName: string;
}

export interface ConfigResourceResult {
  resourceType: number;
  resourceName: string;
  errorCode: number;
  errorMessage: string | null;
}

const CONFIG_RESOURCE_TOPIC = 2;
const CONFIG_RESOURCE_GROUP = 32;

/** DescribeConfigs' checks: DESCRIBE_CONFIGS on a topic or group, or on the cluster for brokers and broker loggers. */
export const describeConfigsChecks = resourceChecks({
  topic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE_CONFIGS },
  group: { resource: ResourceType.GROUP, operation: AclOperation.DESCRIBE_CONFIGS },
  cluster: { resource: ResourceType.CLUSTER, operation: AclOperation.DESCRIBE_CONFIGS },
});

/** AlterConfigs' and IncrementalAlterConfigs' checks: ALTER_CONFIGS, likewise. */
export const alterConfigsChecks = resourceChecks({
  topic: { resource: ResourceType.TOPIC, operation: AclOperation.ALTER_CONFIGS },
  group: { resource: ResourceType.GROUP, operation: AclOperation.ALTER_CONFIGS },
  cluster: { resource: ResourceType.CLUSTER, operation: AclOperation.ALTER_CONFIGS },
});

/**
 * ACLs on a config resource, as Kafka: a topic needs the operation on the topic
 * (TOPIC_AUTHORIZATION_FAILED), a group on the group (GROUP_AUTHORIZATION_FAILED), brokers and broker loggers on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED). Returns the error code, or NONE when allowed.
 */
export function configResourceDenial(ctx: RequestContext, checks: typeof describeConfigsChecks, r: ConfigResource): number {
  if (ctx.services.authorizer === undefined) return ErrorCode.NONE;
  if (r.resourceType === CONFIG_RESOURCE_TOPIC) return checks.topic.allows(ctx, r.resourceName) ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
  if (r.resourceType === CONFIG_RESOURCE_GROUP) return checks.group.allows(ctx, r.resourceName) ? ErrorCode.NONE : ErrorCode.GROUP_AUTHORIZATION_FAILED;
  return checks.cluster.allows(ctx, CLUSTER_NAME) ? ErrorCode.NONE : ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
}

export async function alterEachResource<R extends ConfigResource>(
  resources: readonly R[],
  apply: (resource: R) => Promise<void>,
  ctx?: RequestContext,
): Promise<ConfigResourceResult[]> {
  const seen = new Map<string, number>();
  for (const r of resources) {
    const key = `${r.resourceType}:${r.resourceName}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const results: ConfigResourceResult[] = [];
  // A refusal or a validateOnly change costs no I/O, so nothing else would let the event loop
  // in between 50,000 resources.
  const slicer = new LoopSlicer();
  for (const r of resources) {
    await slicer.maybePause();
    const base = { resourceType: r.resourceType, resourceName: r.resourceName };
    if (seen.get(`${r.resourceType}:${r.resourceName}`)! > 1) {
      results.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate resource in request.' });
      continue;
    }
    const denied = ctx ? configResourceDenial(ctx, alterConfigsChecks, r) : ErrorCode.NONE;
    if (denied !== ErrorCode.NONE) {
      results.push({ ...base, errorCode: denied, errorMessage: null });
      continue;
    }
    try {
      await apply(r);
      results.push({ ...base, errorCode: ErrorCode.NONE, errorMessage: null });
    } catch (err) {
      results.push({ ...base, ...errorOutcome(err) });
    }
  }
  return results;
}
