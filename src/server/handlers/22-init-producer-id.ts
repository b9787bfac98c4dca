/**
 * InitProducerId v0-v5 for idempotent producers: every request without a transactional id gets
 * a fresh producer id (epoch 0) from the persistent id block, exactly as Kafka does for
 * non-transactional producers (it ignores any producer id/epoch the request carries).
 *
 * Transactions are not implemented yet. A transactional id is refused with UNSUPPORTED_VERSION:
 * the Java client treats it as fatal at once ("Unexpected error in InitProducerIdResponse"),
 * where COORDINATOR_NOT_AVAILABLE would make initTransactions() retry until max.block.ms.
 * When the id block cannot be persisted (a full disk) the answer is the retriable
 * COORDINATOR_LOAD_IN_PROGRESS, as Kafka's while no block is available.
 */
import { InitProducerIdRequestCodec, InitProducerIdResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from './types.js';
import { FailureLog } from '../../storage/failure-log.js';
import type { StorageLogger } from '../../storage/logger.js';

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
  async handle(req, ctx) {
    if (req.transactionalId !== null) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION, producerId: -1n, producerEpoch: -1 };
    }
    try {
      const producerId = await ctx.services.replicaManager.producerIds.generate();
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
