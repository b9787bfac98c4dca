/**
 * InitProducerId v0-v5. Without a transactional id (idempotent producers) every request gets a
 * fresh producer id (epoch 0) from the persistent id block (a file in embedded mode,
 * `/latest_producer_id_block` in cluster mode), exactly as Kafka does for
 * non-transactional producers (it ignores any producer id/epoch the request carries). With one,
 * the transaction coordinator answers (epoch bump, fencing, KIP-360 resumption; see
 * src/coordinator/txn/). When the id block cannot be persisted (a full disk) the answer is the
 * retriable COORDINATOR_LOAD_IN_PROGRESS, as Kafka's while no block is available.
 */
import { InitProducerIdRequestCodec, InitProducerIdResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, CLUSTER_NAME, ResourceType, authorizeAnyOfType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { fencedForVersion } from './txn-errors.js';
import { FailureLog } from '../../common/failure-log.js';
import type { StorageLogger } from '../../storage/logger.js';

/** Kafka's checks: WRITE on the transactional id; an idempotent producer IDEMPOTENT_WRITE on the cluster (or see below). */
const may = resourceChecks({
  writeTransactionalId: { resource: ResourceType.TRANSACTIONAL_ID, operation: AclOperation.WRITE },
  idempotentWrite: { resource: ResourceType.CLUSTER, operation: AclOperation.IDEMPOTENT_WRITE },
});

const failureLogs = new WeakMap<StorageLogger, FailureLog>();
function failureLogFor(logger: StorageLogger): FailureLog {
  let f = failureLogs.get(logger);
  if (!f) failureLogs.set(logger, (f = new FailureLog(logger)));
  return f;
}

export const initProducerIdHandler = defineHandler({
  apiKey: 22,
  request: InitProducerIdRequestCodec,
  response: InitProducerIdResponseCodec,
  minVersion: 0,
  maxVersion: 5,
  authorize: { resources: may, ownWay: 'an idempotent producer may instead have WRITE on any topic (KIP-679, authorizeAnyOfType)' },
  async handle(req, ctx) {
    if (req.transactionalId !== null) {
      if (!may.writeTransactionalId.allows(ctx, req.transactionalId))
        return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
      const r = await ctx.services.txnCoordinator.initProducerId({
        transactionalId: req.transactionalId,
        transactionTimeoutMs: req.transactionTimeoutMs,
        producerId: req.producerId,
        producerEpoch: req.producerEpoch,
      });
      return { throttleTimeMs: 0, ...r, errorCode: fencedForVersion(r.errorCode, ctx.header.apiVersion, 4) };
    }
    // Idempotent producer (KIP-679): IDEMPOTENT_WRITE on the cluster, or WRITE on some topic.
    if (!may.idempotentWrite.allows(ctx, CLUSTER_NAME) && !authorizeAnyOfType(ctx, AclOperation.WRITE, ResourceType.TOPIC)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
    }
    try {
      const producerId = await ctx.services.txnCoordinator.producerIds.generate();
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId, producerEpoch: 0 };
    } catch (err) {
      // The id block could not be persisted (a full disk). Kafka answers the retriable
      // COORDINATOR_LOAD_IN_PROGRESS while no block is available; KAFKA_STORAGE_ERROR would be
      // fatal to the Java producer. Logged at most once per interval: clients retry quickly.
      failureLogFor(ctx.services.logger).failed('producer-id-block', 'allocations', 'error', () => `cannot allocate a producer id block: ${String(err)}`);
      return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, producerId: -1n, producerEpoch: -1 };
    }
  },
});
