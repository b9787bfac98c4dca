/**
 * ListTransactions v0–v1: the transactional ids of every `__transaction_state` partition loaded
 * here, filtered by state, producer id and (v1) running time. Unknown state names are echoed in
 * `unknown_state_filters` (and match nothing), as Kafka.
 */
import { ListTransactionsRequestCodec, ListTransactionsResponseCodec } from '../../protocol/messages/index.js';
import { txnStateByName, type TxnStateValue } from '../../coordinator/txn/txn-state.js';
import { AclOperation, ResourceType } from './authz.js';
import { defineHandler } from './types.js';

export const listTransactionsHandler = defineHandler({
  apiKey: 66,
  request: ListTransactionsRequestCodec,
  response: ListTransactionsResponseCodec,
  minVersion: 0,
  maxVersion: 1,
  authorize: { ownWay: 'a listing: only the transactional ids the principal may describe, checked quietly (as Kafka)' },
  async handle(req, ctx) {
    const states = new Set<TxnStateValue>();
    const unknownStateFilters: string[] = [];
    for (const name of req.stateFilters) {
      const s = txnStateByName(name);
      if (s === undefined) unknownStateFilters.push(name);
      else states.add(s);
    }
    // Only unknown states asked for: nothing matches.
    if (states.size === 0 && unknownStateFilters.length > 0) return { throttleTimeMs: 0, errorCode: 0, unknownStateFilters, transactionStates: [] };
    const r = ctx.services.txnCoordinator.list({
      states,
      producerIds: new Set(req.producerIdFilters),
      minDurationMs: ctx.header.apiVersion >= 1 ? Number(req.durationFilter) : -1,
    });
    // ACLs: only the transactional ids the principal may DESCRIBE.
    const a = ctx.services.authorizer;
    const transactionStates =
      a === undefined
        ? r.transactions
        : r.transactions.filter((t) =>
            a.authorize(
              ctx.connection.principal,
              ctx.connection.clientHost,
              AclOperation.DESCRIBE,
              ResourceType.TRANSACTIONAL_ID,
              t.transactionalId,
              'ListTransactions',
              false,
            ),
          );
    return { throttleTimeMs: 0, errorCode: r.errorCode, unknownStateFilters, transactionStates };
  },
});
