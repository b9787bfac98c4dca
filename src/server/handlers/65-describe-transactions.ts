/**
 * DescribeTransactions v0: the state of each transactional id coordinated here
 * (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / TRANSACTIONAL_ID_NOT_FOUND otherwise).
 */
import { DescribeTransactionsRequestCodec, DescribeTransactionsResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';

export const describeTransactionsHandler = defineHandler({
  apiKey: 65,
  request: DescribeTransactionsRequestCodec,
  response: DescribeTransactionsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  async handle(req, ctx) {
    const transactionStates = await Promise.all(req.transactionalIds.map((id) => ctx.services.txnCoordinator.describe(id)));
    return { throttleTimeMs: 0, transactionStates };
  },
});
