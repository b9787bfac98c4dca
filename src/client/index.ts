/**
 * Fjord's Kafka client: Producer, Consumer and Admin on the project's own protocol layer.
 * See docs/client.md.
 */
export {
  Producer,
  DEFAULT_BATCH_SIZE,
  compressionByName,
  type ProducerOptions,
  type ProducerRecord,
  type RecordMetadata,
  type DeliveryCallback,
  type CompressionName,
} from './producer.js';
export { Consumer, type RebalanceListener, type ConsumerOptions, type ConsumerRecord, type TopicPartition, type OffsetAndMetadata } from './consumer.js';
export {
  Admin,
  ConfigResourceType,
  type NewTopic,
  type ConfigEntry,
  type ConfigOp,
  type LogDirDescription,
  type QuotaEntityComponent,
  type QuotaFilterComponent,
  type ClientQuotaEntry,
  type ClientQuotaAlteration,
} from './admin.js';
export type { GroupListing, GroupDescription, GroupMemberDescription, ListGroupsOptions } from './admin-groups.js';
export { Cluster, parseHostPort, type ClientOptions, type TopicMetadata, type PartitionMetadata, type BrokerNode } from './cluster.js';
export { Connection } from './connection.js';
export { KafkaError, ConnectionError, BrokersUnreachableError, TimeoutError, UnsupportedApiError, errorName, noAnswerReason } from './errors.js';
export { ErrorCode } from '../protocol/errors.js';
export { murmur2, partitionForKey } from './partitioner.js';
export { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP } from './list-offsets.js';
export { ASSIGNORS, assignorByName, type Assignor } from './group/assignors.js';
export { API_SPECS, type ApiSpec } from '../protocol/messages/index.js';
