/**
 * The transaction coordinator's settings: the broker settings it reads (a slice of the broker's
 * config, which the broker's config fits as it is: the broker passes its own) and the settings
 * its shards work with, derived from them.
 */
import type { CoordinatorBrokerConfig } from '../runtime/coordinator-shell.js';

/** The broker settings the transaction coordinator reads, under the broker config's names. */
export interface TxnCoordinatorBrokerConfig extends CoordinatorBrokerConfig {
  readonly transactionMaxTimeoutMs: number;
  readonly transactionalIdExpirationMs: number;
  readonly transactionAbortTimedOutTransactionCleanupIntervalMs: number;
  readonly transactionRemoveExpiredTransactionCleanupIntervalMs: number;
  readonly transactionStateLogNumPartitions: number;
  readonly transactionStateLogReplicationFactor: number;
  readonly transactionStateLogMinIsr: number;
  readonly transactionStateLogSegmentBytes: number;
}

export interface TxnCoordinatorConfig {
  /** transaction.max.timeout.ms */
  transactionMaxTimeoutMs: number;
  /** transactional.id.expiration.ms */
  transactionalIdExpirationMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  abortTimedOutTransactionsIntervalMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  removeExpiredTransactionalIdsIntervalMs: number;
}

export function txnConfigFrom(cfg: TxnCoordinatorBrokerConfig): TxnCoordinatorConfig {
  return {
    transactionMaxTimeoutMs: cfg.transactionMaxTimeoutMs,
    transactionalIdExpirationMs: cfg.transactionalIdExpirationMs,
    abortTimedOutTransactionsIntervalMs: cfg.transactionAbortTimedOutTransactionCleanupIntervalMs,
    removeExpiredTransactionalIdsIntervalMs: cfg.transactionRemoveExpiredTransactionCleanupIntervalMs,
  };
}
