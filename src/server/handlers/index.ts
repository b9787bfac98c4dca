/**
 * The handler table: every API Fjord serves, with its version range. ApiVersions is derived
 * from this list, so adding a handler here is what advertises it.
 */
import type { ApiHandler } from './types.js';
import { produceHandler } from './00-produce.js';
import { fetchHandler } from './01-fetch.js';
import { listOffsetsHandler } from './02-list-offsets.js';
import { initProducerIdHandler } from './22-init-producer-id.js';
import { writeTxnMarkersHandler } from './27-write-txn-markers.js';
import { describeProducersHandler } from './61-describe-producers.js';
import { addPartitionsToTxnHandler } from './24-add-partitions-to-txn.js';
import { addOffsetsToTxnHandler } from './25-add-offsets-to-txn.js';
import { endTxnHandler } from './26-end-txn.js';
import { txnOffsetCommitHandler } from './28-txn-offset-commit.js';
import { describeTransactionsHandler } from './65-describe-transactions.js';
import { listTransactionsHandler } from './66-list-transactions.js';
import { getTelemetrySubscriptionsHandler } from './71-get-telemetry-subscriptions.js';
import { pushTelemetryHandler } from './72-push-telemetry.js';
import { listClientMetricsResourcesHandler } from './74-list-client-metrics-resources.js';
import { offsetForLeaderEpochHandler } from './23-offset-for-leader-epoch.js';
import { metadataHandler } from './03-metadata.js';
import { apiVersionsHandler } from './18-api-versions.js';
import { describeClusterHandler } from './60-describe-cluster.js';
import { createTopicsHandler } from './19-create-topics.js';
import { deleteTopicsHandler } from './20-delete-topics.js';
import { deleteRecordsHandler } from './21-delete-records.js';
import { describeConfigsHandler } from './32-describe-configs.js';
import { alterConfigsHandler } from './33-alter-configs.js';
import { describeLogDirsHandler } from './35-describe-log-dirs.js';
import { createPartitionsHandler } from './37-create-partitions.js';
import { incrementalAlterConfigsHandler } from './44-incremental-alter-configs.js';
import { offsetCommitHandler } from './08-offset-commit.js';
import { consumerGroupHeartbeatHandler } from './68-consumer-group-heartbeat.js';
import { consumerGroupDescribeHandler } from './69-consumer-group-describe.js';
import { offsetFetchHandler } from './09-offset-fetch.js';
import { findCoordinatorHandler } from './10-find-coordinator.js';
import { joinGroupHandler } from './11-join-group.js';
import { heartbeatHandler } from './12-heartbeat.js';
import { leaveGroupHandler } from './13-leave-group.js';
import { syncGroupHandler } from './14-sync-group.js';
import { describeGroupsHandler } from './15-describe-groups.js';
import { listGroupsHandler } from './16-list-groups.js';
import { deleteGroupsHandler } from './42-delete-groups.js';
import { offsetDeleteHandler } from './47-offset-delete.js';
import { controlledShutdownHandler } from './07-controlled-shutdown.js';
import { electLeadersHandler } from './43-elect-leaders.js';
import { leaderAndIsrHandler } from './04-leader-and-isr.js';
import { stopReplicaHandler } from './05-stop-replica.js';
import { updateMetadataHandler } from './06-update-metadata.js';
import { alterPartitionReassignmentsHandler } from './45-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from './46-list-partition-reassignments.js';
import { describeAclsHandler } from './29-describe-acls.js';
import { createAclsHandler } from './30-create-acls.js';
import { deleteAclsHandler } from './31-delete-acls.js';
import { saslAuthenticateHandler, saslHandshakeHandler } from './17-sasl-handshake.js';
import { alterUserScramCredentialsHandler, describeUserScramCredentialsHandler } from './50-user-scram-credentials.js';
import { createDelegationTokenHandler } from './38-create-delegation-token.js';
import { renewDelegationTokenHandler } from './39-renew-delegation-token.js';
import { expireDelegationTokenHandler } from './40-expire-delegation-token.js';
import { describeDelegationTokenHandler } from './41-describe-delegation-token.js';
import { describeClientQuotasHandler } from './48-describe-client-quotas.js';
import { alterClientQuotasHandler } from './49-alter-client-quotas.js';
import { updateFeaturesHandler } from './57-update-features.js';
import { describeTopicPartitionsHandler } from './75-describe-topic-partitions.js';

export const ALL_HANDLERS: readonly ApiHandler[] = [
  produceHandler,
  describeAclsHandler,
  createAclsHandler,
  deleteAclsHandler,
  fetchHandler,
  listOffsetsHandler,
  initProducerIdHandler,
  writeTxnMarkersHandler,
  describeProducersHandler,
  addPartitionsToTxnHandler,
  addOffsetsToTxnHandler,
  endTxnHandler,
  txnOffsetCommitHandler,
  describeTransactionsHandler,
  listTransactionsHandler,
  offsetForLeaderEpochHandler,
  metadataHandler,
  describeTopicPartitionsHandler,
  apiVersionsHandler,
  updateFeaturesHandler,
  describeClusterHandler,
  createTopicsHandler,
  deleteTopicsHandler,
  deleteRecordsHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  describeLogDirsHandler,
  createPartitionsHandler,
  incrementalAlterConfigsHandler,
  offsetCommitHandler,
  offsetFetchHandler,
  findCoordinatorHandler,
  joinGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  syncGroupHandler,
  describeGroupsHandler,
  listGroupsHandler,
  deleteGroupsHandler,
  offsetDeleteHandler,
  // Consumer groups of the KIP-848 protocol (issue 24).
  consumerGroupHeartbeatHandler,
  consumerGroupDescribeHandler,
  // Client quotas (issue 15).
  describeClientQuotasHandler,
  alterClientQuotasHandler,
  // Served by the controller in cluster mode; in embedded mode answered for the one-broker cluster.
  controlledShutdownHandler,
  electLeadersHandler,
  // SASL (src/security/sasl): the exchange runs before the router; these answer outside one.
  saslHandshakeHandler,
  saslAuthenticateHandler,
  describeUserScramCredentialsHandler,
  alterUserScramCredentialsHandler,
  // Delegation tokens (src/security/delegation-tokens).
  createDelegationTokenHandler,
  renewDelegationTokenHandler,
  expireDelegationTokenHandler,
  describeDelegationTokenHandler,
  // Client telemetry (KIP-714, src/server/telemetry).
  getTelemetrySubscriptionsHandler,
  pushTelemetryHandler,
  listClientMetricsResourcesHandler,
];

/**
 * Served, and advertised in ApiVersions, only in cluster mode: the controller's requests to a
 * broker (as a ZooKeeper-mode Kafka broker lists them and a broker outside ZooKeeper does not),
 * and the reassignment APIs, which only a controller can serve (embedded mode has one replica per
 * partition and nothing to reassign to).
 */
export const ZK_BROKER_HANDLERS: readonly ApiHandler[] = [
  leaderAndIsrHandler,
  stopReplicaHandler,
  updateMetadataHandler,
  alterPartitionReassignmentsHandler,
  listPartitionReassignmentsHandler,
];

/** The consumer group protocol (KIP-848): left out when group.coordinator.rebalance.protocols does not list `consumer`. */
export const CONSUMER_GROUP_PROTOCOL_API_KEYS: ReadonlySet<number> = new Set([consumerGroupHeartbeatHandler.apiKey, consumerGroupDescribeHandler.apiKey]);

export function handlerTable(handlers: readonly ApiHandler[] = ALL_HANDLERS): Map<number, ApiHandler> {
  const table = new Map<number, ApiHandler>();
  for (const h of handlers) {
    if (table.has(h.apiKey)) throw new Error(`two handlers for API key ${h.apiKey}`);
    table.set(h.apiKey, h);
  }
  return table;
}

/**
 * The table a broker serves and advertises: the controller's requests only in cluster mode, the
 * consumer group protocol only when group.coordinator.rebalance.protocols lists `consumer`.
 */
export function brokerHandlerTable(clusterMode: boolean, rebalanceProtocols: readonly string[]): Map<number, ApiHandler> {
  const served = clusterMode ? [...ALL_HANDLERS, ...ZK_BROKER_HANDLERS] : ALL_HANDLERS;
  const consumerProtocol = rebalanceProtocols.includes('consumer');
  return handlerTable(served.filter((h) => consumerProtocol || !CONSUMER_GROUP_PROTOCOL_API_KEYS.has(h.apiKey)));
}
