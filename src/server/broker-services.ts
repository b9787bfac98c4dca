/**
 * The services a request handler may call. Handlers stay thin: they translate between the wire
 * and these services, which hold the behaviour.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { ApiHandler } from './handlers/types.js';
import type { AdminServices } from './admin/index.js';
import type { LogManager } from '../storage/manager/log-manager.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import type { PartitionShards } from '../replication/shards/partition-shards.js';
import { inThreadShardsOf } from '../replication/shards/in-thread-shards.js';
import type { GroupCoordinator } from '../coordinator/group/group-coordinator.js';
import type { TxnCoordinator } from '../coordinator/txn/txn-coordinator.js';
import type { TxnVerification } from '../coordinator/txn/txn-verification.js';
import type { KafkaController } from '../controller/index.js';
import type { StopReplicaPartition } from '../replication/hosting/role-changes.js';
import type { ControlPartitionState, LiveBroker } from '../metadata/zk/zk-broker-metadata.js';
import type { ZkConsumerOffsets } from '../metadata/zk/zk-consumer-offsets.js';
import type { ClientEntityConfigStore } from '../metadata/client-entity-configs.js';
import type { Authorizer } from '../security/authorizer/authorizer.js';
import type { DelegationTokenManager } from '../security/delegation-tokens/token-manager.js';
import type { QuotaManagers } from './quotas/quota-manager.js';
import type { RequestStats } from './metrics/request-stats.js';
import type { BrokerTopicStats } from './metrics/topic-stats.js';
import type { LeaderReadiness } from './cluster/leader-readiness.js';
import type { ClientTelemetry } from './telemetry/client-instances.js';

export interface Endpoint {
  host: string;
  port: number;
}

/** The fencing fields every controller request carries. */
export interface ControlHeader {
  controllerId: number;
  controllerEpoch: number;
  /** -1 when the sender did not say (before the version that carries it). */
  brokerEpoch: bigint;
}

export interface PartitionResult {
  topic: string;
  topicId: string | undefined;
  partition: number;
  errorCode: number;
}

/**
 * Cluster mode: where the controller's LeaderAndIsr/UpdateMetadata/StopReplica land
 * (src/server/cluster/control-requests.ts). The handlers normalise every version into these.
 */
export interface ClusterControl {
  leaderAndIsr(
    h: ControlHeader,
    states: readonly (ControlPartitionState & { topicId: string | undefined })[],
  ): Promise<{ errorCode: number; partitions: PartitionResult[] }>;
  updateMetadata(h: ControlHeader, liveBrokers: LiveBroker[], states: ControlPartitionState[], topicIds: Map<string, string>): Promise<number>;
  stopReplica(h: ControlHeader, parts: readonly StopReplicaPartition[]): Promise<{ errorCode: number; partitions: PartitionResult[] }>;
}

export interface BrokerServices {
  readonly config: BrokerConfig;
  readonly metadata: MetadataStore;
  readonly logger: Logger;
  /** The handler table: the single source for ApiVersions. */
  readonly handlers: ReadonlyMap<number, ApiHandler>;
  /** The logs on this broker's disks (storage). */
  readonly logManager: LogManager;
  /** Partitions led here: produce/fetch, logs kept in step with metadata (see src/replication). */
  readonly replicaManager: ReplicaManager;
  /**
   * The partitions' owners, the only way handlers reach a partition (docs/threads.md step 0):
   * produce, fetch reads, ListOffsets, OffsetForLeaderEpoch, DeleteRecords, WriteTxnMarkers,
   * DescribeProducers, log dirs. Call it through shardsOf; absent in partial services in tests
   * (shardsOf then gives the in-thread ones over replicaManager, as broker.ts does).
   */
  readonly shards?: PartitionShards;
  /** Topic administration: create/delete topics and partitions, configs, log dirs, DeleteRecords. */
  readonly admin: AdminServices;
  /** Consumer groups and committed offsets (`__consumer_offsets`). */
  readonly groupCoordinator: GroupCoordinator;
  /** Transactions (`__transaction_state`). */
  readonly txnCoordinator: TxnCoordinator;
  /** Asks the transaction coordinator of an id, here or on another broker, what its transaction holds (KIP-890). */
  readonly txnVerification: TxnVerification;
  /** Users' and client ids' configs: SCRAM credentials and client quotas (ZooKeeper in cluster mode). */
  readonly clientEntities: ClientEntityConfigStore;
  /** Delegation tokens (KIP-48): disabled (DELEGATION_TOKEN_AUTH_DISABLED) without delegation.token.secret.key; absent in partial services. */
  readonly delegationTokens?: DelegationTokenManager;
  /** ACLs (authorizer.class.name); undefined = no authorizer, everything allowed. Checks: handlers/authz.ts. */
  readonly authorizer?: Authorizer;
  /** Client quotas (produce/fetch bytes, request time) over clientEntities: src/server/quotas. Absent: none (partial services in tests). */
  readonly quotas?: QuotaManagers;
  /** Request and broker topic metrics' counters (src/server/metrics); absent: not counted (partial services in tests). */
  readonly requestStats?: RequestStats;
  readonly topicStats?: BrokerTopicStats;
  /** KIP-714 client telemetry (server/telemetry); absent in partial services in tests. */
  readonly telemetry?: ClientTelemetry;
  /** Cluster mode only: the controller this broker hosts (active only while elected); undefined in embedded mode. */
  controller?: KafkaController;
  /** Cluster mode only: the controller's requests to this broker; undefined in embedded mode. */
  readonly clusterControl?: ClusterControl;
  /**
   * Cluster mode only: whether new partitions' leaders serve them yet (call it through
   * topic-creation.ts's partitionsNotServedWithin); undefined in embedded mode, where this broker
   * leads every partition once its logs are open.
   */
  readonly leaderReadiness?: LeaderReadiness;
  /**
   * Cluster mode only: whether this broker is the active controller (CreateTopics, DeleteTopics
   * and CreatePartitions answer NOT_CONTROLLER elsewhere, as Kafka 2.x); undefined in embedded mode.
   */
  isActiveController?(): boolean;
  /**
   * Cluster mode only: the pre-0.9 consumers' offsets in ZooKeeper (`/consumers/<g>/offsets`),
   * where OffsetCommit/OffsetFetch version 0 go, as Kafka 0.8.2; undefined in embedded mode
   * (version 0 then uses `__consumer_offsets` like the later versions).
   */
  readonly zkConsumerOffsets?: ZkConsumerOffsets;
  /** Where clients reach broker `brokerId` through the listener named `listenerName`. */
  endpointFor(brokerId: number, listenerName: string): Endpoint | undefined;
}

/** The services' partitions' owners; partial services (tests) get the in-thread ones over their ReplicaManager. */
export function shardsOf(services: Pick<BrokerServices, 'shards' | 'replicaManager' | 'metadata'>): PartitionShards {
  return services.shards ?? inThreadShardsOf(services.replicaManager, services.metadata);
}
