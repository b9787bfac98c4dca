/**
 * FindCoordinator v0–v5: which broker coordinates a group (the leader of its
 * `__consumer_offsets` partition) or a transactional id (its `__transaction_state` partition).
 * The internal topic is created on first use.
 */
import { FindCoordinatorRequestCodec, FindCoordinatorResponseCodec } from '../../protocol/messages/index.js';
import type { Coordinator } from '../../protocol/messages/10-find-coordinator.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import type { Input } from '../../protocol/primitives/index.js';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler, type RequestContext } from './types.js';
import { allInSlices } from '../../common/slices.js';

/** Kafka's checks: DESCRIBE on the group or transactional id whose coordinator is asked for. */
const may = resourceChecks({
  describeGroup: { resource: ResourceType.GROUP, operation: AclOperation.DESCRIBE },
  describeTransactionalId: { resource: ResourceType.TRANSACTIONAL_ID, operation: AclOperation.DESCRIBE },
});

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;
async function findOne(ctx: RequestContext, key: string, keyType: number): Promise<Input<Coordinator>> {
  const fail = (errorCode: number): Input<Coordinator> => ({ key, nodeId: -1, host: '', port: -1, errorCode, errorMessage: errorName(errorCode) });
  // ACLs: DESCRIBE on the group or the transactional id.
  if (keyType === KEY_TYPE_GROUP && !may.describeGroup.allows(ctx, key)) return fail(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  if (keyType === KEY_TYPE_TRANSACTION && !may.describeTransactionalId.allows(ctx, key)) return fail(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  let topic: TopicInfo;
  try {
    if (keyType === KEY_TYPE_GROUP) {
      topic = await ctx.services.groupCoordinator.ensureOffsetsTopic();
      if (!(await ctx.services.groupCoordinator.offsetsPartitionOpen(key))) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    } else if (keyType === KEY_TYPE_TRANSACTION) {
      if (key === '') return fail(ErrorCode.INVALID_REQUEST);
      topic = await ctx.services.txnCoordinator.ensureTopic();
    } else {
      return fail(ErrorCode.INVALID_REQUEST);
    }
  } catch {
    // The internal topic could not be created or its logs opened (a full disk, an offline log
    // directory, a metadata write that failed): Kafka's retriable answer, never
    // UNKNOWN_SERVER_ERROR. The coordinator logs the cause (rate-limited).
    return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  }
  const partition = keyType === KEY_TYPE_GROUP ? ctx.services.groupCoordinator.partitionFor(key) : ctx.services.txnCoordinator.partitionFor(key);
  const leader = topic.partitions[partition]?.leader ?? -1;
  const ep = leader >= 0 ? ctx.services.endpointFor(leader, ctx.connection.listenerName) : undefined;
  if (!ep) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { key, nodeId: leader, host: ep.host, port: ep.port, errorCode: ErrorCode.NONE, errorMessage: null };
}

export const findCoordinatorHandler = defineHandler({
  apiKey: 10,
  request: FindCoordinatorRequestCodec,
  response: FindCoordinatorResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  slicedField: 'coordinators',
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    if (version >= 4) {
      // Started in slices: one request may name 100,000 keys.
      const coordinators = await allInSlices(req.coordinatorKeys, (k) => findOne(ctx, k, req.keyType));
      return { throttleTimeMs: 0, coordinators };
    }
    const c = await findOne(ctx, req.key, version >= 1 ? req.keyType : KEY_TYPE_GROUP);
    return {
      throttleTimeMs: 0,
      errorCode: c.errorCode,
      errorMessage: c.errorCode === ErrorCode.NONE ? null : (c.errorMessage ?? null),
      nodeId: c.nodeId,
      host: c.host,
      port: c.port,
    };
  },
});
