/**
 * DescribeTransactions v0: the state of each transactional id coordinated here
 * (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / TRANSACTIONAL_ID_NOT_FOUND otherwise).
 */
import { DescribeTransactionsRequestCodec, DescribeTransactionsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { allInSlices } from '../../common/slices.js';

/** Kafka's checks: DESCRIBE on each transactional id; its topics the principal may not describe are left out. */
const may = resourceChecks({
  describeTransactionalId: { resource: ResourceType.TRANSACTIONAL_ID, operation: AclOperation.DESCRIBE },
  describeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE },
});

export const describeTransactionsHandler = defineHandler({
  apiKey: 65,
  request: DescribeTransactionsRequestCodec,
  response: DescribeTransactionsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  slicedField: 'transactionStates',
  authorize: { resources: may },
  async handle(req, ctx) {
    // ACLs: DESCRIBE on each transactional id. In slices: one request may name 100,000 ids.
    const transactionStates = await allInSlices(req.transactionalIds, async (id) =>
      may.describeTransactionalId.allows(ctx, id)
        ? ctx.services.txnCoordinator.describe(id)
        : {
            errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            transactionalId: id,
            transactionState: '',
            transactionTimeoutMs: 0,
            transactionStartTimeMs: -1n,
            producerId: -1n,
            producerEpoch: -1,
            topics: [],
          },
    );
    // Kafka answers only the partitions of topics the principal may DESCRIBE.
    if (ctx.services.authorizer === undefined) return { throttleTimeMs: 0, transactionStates };
    return {
      throttleTimeMs: 0,
      transactionStates: transactionStates.map((st) => ({ ...st, topics: (st.topics ?? []).filter((t) => may.describeTopic.allows(ctx, t.topic)) })),
    };
  },
});
