/**
 * InitProducerId v0-v5 for idempotent producers: every request without a transactional id gets
 * a fresh producer id (epoch 0) from the persistent id block, exactly as Kafka does for
 * non-transactional producers (it ignores any producer id/epoch the request carries).
 *
 * Transactions are not implemented yet. A transactional id is refused with UNSUPPORTED_VERSION:
 * the Java client treats it as fatal at once ("Unexpected error in InitProducerIdResponse"),
 * where COORDINATOR_NOT_AVAILABLE would make initTransactions() retry until max.block.ms.
 */
import { InitProducerIdRequestCodec, InitProducerIdResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from './types.js';

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
      ctx.services.logger.error({ err: String(err) }, 'cannot allocate a producer id block');
      return { throttleTimeMs: 0, errorCode: ErrorCode.KAFKA_STORAGE_ERROR, producerId: -1n, producerEpoch: -1 };
    }
  },
});
