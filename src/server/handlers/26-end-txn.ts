/**
 * EndTxn v0–v4 (v5, KIP-890's epoch bump per transaction, is unstable in Kafka 3.9 and not
 * served): answered once PrepareCommit/PrepareAbort is durable; the markers and the Complete
 * state follow in the background, meanwhile the id answers CONCURRENT_TRANSACTIONS.
 */
import { EndTxnRequestCodec, EndTxnResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { fencedForVersion } from './txn-errors.js';

/** Kafka's check: WRITE on the transactional id. */
const may = resourceChecks({
  writeTransactionalId: { resource: ResourceType.TRANSACTIONAL_ID, operation: AclOperation.WRITE },
});

export const endTxnHandler = defineHandler({
  apiKey: 26,
  request: EndTxnRequestCodec,
  response: EndTxnResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  authorize: { resources: may },
  async handle(req, ctx) {
    if (!may.writeTransactionalId.allows(ctx, req.transactionalId))
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
    const r = await ctx.services.txnCoordinator.endTxn({
      transactionalId: req.transactionalId,
      producerId: req.producerId,
      producerEpoch: req.producerEpoch,
      commit: req.committed,
    });
    return { throttleTimeMs: 0, errorCode: fencedForVersion(r.errorCode, ctx.header.apiVersion, 2), producerId: r.producerId, producerEpoch: r.producerEpoch };
  },
});
