/**
 * The services a request handler may call. Handlers stay thin: they translate between the wire
 * and these services, which hold the behaviour.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { ApiHandler } from './handlers/types.js';
import type { AdminServices } from './admin/index.js';
import type { LogManager } from '../storage/log-manager.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import type { GroupCoordinator } from '../coordinator/group/group-coordinator.js';
import type { KafkaController } from '../controller/index.js';

export interface Endpoint {
  host: string;
  port: number;
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
  /** Topic administration: create/delete topics and partitions, configs, log dirs, DeleteRecords. */
  readonly admin: AdminServices;
  /** Consumer groups and committed offsets (`__consumer_offsets`). */
  readonly groupCoordinator: GroupCoordinator;
  /** Cluster mode: this broker's ZooKeeper-mode controller (acting only while elected); undefined in embedded mode. */
  readonly controller?: KafkaController;
  /** Where clients reach broker `brokerId` through the listener named `listenerName`. */
  endpointFor(brokerId: number, listenerName: string): Endpoint | undefined;
}
