/**
 * Kafka 0.8's ZooKeeper consumer (see zk-consumer.ts). Its own entry point: it is the only part
 * of the client library that talks to ZooKeeper (through metadata/zk's session and znode table),
 * so users of the Kafka-protocol clients never load the ZooKeeper client.
 */
export { ZookeeperConsumer, type ZookeeperConsumerEvents } from './zk-consumer.js';
export type { ZookeeperConsumerOptions } from './zk-consumer-options.js';
export { ConsumerRebalanceFailedError } from './zk-group-member.js';
export { generateConsumerId, brokersFromZooKeeper } from './zk-bootstrap.js';
export { rangeAssign, consumerThreadIds, type ThreadAssignment } from './range-assignment.js';
