/**
 * DescribeTransactions v0: the state of each transactional id coordinated here
 * (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / TRANSACTIONAL_ID_NOT_FOUND otherwise).
 */
import { DescribeTransactionsRequestCodec, DescribeTransactionsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeTopic, authorizeTransactionalId } from './authz.js';
import { defineHandler } from './types.js';
import { allInSlices } from '../../common/slices.js';

export const describeTransactionsHandler = defineHandler({
  apiKey: 65,
  request: DescribeTransactionsRequestCodec,
  response: DescribeTransactionsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  slicedField: 'transactionStates',
  async handle(req, ctx) {
    // ACLs: DESCRIBE on each transactional id. In slices: one request may name 100,000 ids.
    const transactionStates = await allInSlices(req.transactionalIds, async (id) => (authorizeTransactionalId(ctx, AclOperation.DESCRIBE, id)
      ? ctx.services.txnCoordinator.describe(id)
      : { errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactionalId: id, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n, producerId: -1n, producerEpoch: -1, topics: [] }));
    // Kafka answers only the partitions of topics the principal may DESCRIBE.
    if (ctx.services.authorizer === undefined) return { throttleTimeMs: 0, transactionStates };
    return {
      throttleTimeMs: 0,
      transactionStates: transactionStates.map((st) => ({ ...st, topics: (st.topics ?? []).filter((t) => authorizeTopic(ctx, AclOperation.DESCRIBE, t.topic)) })),
    };
  },
});
