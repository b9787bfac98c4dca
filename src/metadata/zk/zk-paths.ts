/**
 * Every ZooKeeper path of Kafka's layout that Fjord reads or writes (Kafka's ZkData.scala keeps
 * them with the znodes' JSON; here the JSON is zk-data.ts and zk-consumer-znodes.ts). Paths alone
 * are what most of the code needs: the tools, the watchers and the consumer name nodes without
 * decoding them.
 */

import type { ConfigEntityType } from './zk-client-types.js';

/** Persistent nodes a Kafka broker in ZooKeeper mode makes sure exist at start-up. */
export const PERSISTENT_PATHS: readonly string[] = [
  '/consumers',
  '/admin/delete_topics',
  '/brokers/ids',
  '/brokers/topics',
  '/brokers/seqid',
  '/config/changes',
  '/config/clients',
  '/config/topics',
  '/config/users',
  '/config/brokers',
  '/config/ips',
  '/isr_change_notification',
  '/latest_producer_id_block',
  '/log_dir_event_notification',
  '/cluster',
];

export const CLUSTER_ID_PATH = '/cluster/id';
export const CONTROLLER_PATH = '/controller';
export const CONTROLLER_EPOCH_PATH = '/controller_epoch';
export const BROKER_IDS_PATH = '/brokers/ids';
export const brokerIdPath = (id: number): string => `${BROKER_IDS_PATH}/${id}`;
/** Persistent, no data: its znode version is Kafka's broker.id generator (broker.id.generation.enable). */
export const BROKER_SEQID_PATH = '/brokers/seqid';
export const TOPICS_PATH = '/brokers/topics';
export const topicPath = (topic: string): string => `${TOPICS_PATH}/${topic}`;
export const topicPartitionsPath = (topic: string): string => `${topicPath(topic)}/partitions`;
export const partitionPath = (topic: string, partition: number): string => `${topicPartitionsPath(topic)}/${partition}`;
export const partitionStatePath = (topic: string, partition: number): string => `${partitionPath(topic, partition)}/state`;
export const CONFIG_PATH = '/config';
export const configEntityTypePath = (type: ConfigEntityType): string => `${CONFIG_PATH}/${type}`;
export const configEntityPath = (type: ConfigEntityType, name: string): string => `${configEntityTypePath(type)}/${name}`;
/** The broker-defaults entity name (`/config/brokers/<default>`). */
export const DEFAULT_CONFIG_ENTITY = '<default>';
export const CONFIG_CHANGES_PATH = '/config/changes';
export const CONFIG_CHANGE_PREFIX = 'config_change_';
export const ADMIN_PATH = '/admin';
export const DELETE_TOPICS_PATH = '/admin/delete_topics';
/** Existence is the mark; Kafka writes no data. */
export const deleteTopicPath = (topic: string): string => `${DELETE_TOPICS_PATH}/${topic}`;
export const REASSIGN_PARTITIONS_PATH = '/admin/reassign_partitions';
export const PREFERRED_REPLICA_ELECTION_PATH = '/admin/preferred_replica_election';
export const ISR_CHANGE_NOTIFICATION_PATH = '/isr_change_notification';
export const ISR_CHANGE_PREFIX = 'isr_change_';
export const PRODUCER_ID_BLOCK_PATH = '/latest_producer_id_block';
export const FEATURE_PATH = '/feature';
export const LOG_DIR_EVENT_NOTIFICATION_PATH = '/log_dir_event_notification';
export const CONSUMERS_PATH = '/consumers';
/** Pre-0.9 consumers' committed offsets (the seed's `/consumers/<g>/offsets/<t>/<p>`). */
export const consumerOffsetPath = (group: string, topic: string, partition: number): string => `${CONSUMERS_PATH}/${group}/offsets/${topic}/${partition}`;
export const consumerGroupPath = (group: string): string => `${CONSUMERS_PATH}/${group}`;
/** A group's members: one ephemeral node each, named by consumer id, holding ConsumerRegistrationZNode. */
export const consumerIdsPath = (group: string): string => `${CONSUMERS_PATH}/${group}/ids`;
export const consumerIdPath = (group: string, consumerId: string): string => `${consumerIdsPath(group)}/${consumerId}`;
/** Who owns a partition: ephemeral, holding the owner's consumer thread id as text. */
export const consumerOwnersPath = (group: string, topic: string): string => `${CONSUMERS_PATH}/${group}/owners/${topic}`;
export const consumerOwnerPath = (group: string, topic: string, partition: number): string => `${consumerOwnersPath(group, topic)}/${partition}`;
export const consumerTopicOffsetsPath = (group: string, topic: string): string => `${CONSUMERS_PATH}/${group}/offsets/${topic}`;

/** The sequence number of a sequential node's name (`config_change_0000000012` → 12). */
export function sequenceNumber(name: string): number {
  const m = /(\d{10})$/.exec(name);
  return m ? Number(m[1]) : -1;
}
