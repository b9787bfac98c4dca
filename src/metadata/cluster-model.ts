/**
 * The cluster as the broker sees it: brokers, topics, partition assignments and leadership.
 * Both metadata backends (embedded single-node, ZooKeeper) speak in these terms.
 */
export interface BrokerInfo {
  id: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface PartitionState {
  partition: number;
  leader: number; // -1 when no leader
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

export interface TopicInfo {
  name: string;
  topicId: string; // Kafka's printable (base64url) uuid
  internal: boolean;
  partitions: PartitionState[];
  /** Topic-level config overrides (Kafka key names); defaults come from the broker. */
  configs: Record<string, string>;
}

export interface NewTopic {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  /** Explicit assignment: replicas per partition (partition index = array index). */
  assignment?: number[][];
  configs?: Record<string, string>;
  internal?: boolean;
}

// __consumer_offsets_history: Fjord's offset history (issue 25), written by brokers only.
/** Kafka's admin client id: the one client id whose Produce an internal topic accepts (KafkaApis). */
export const ADMIN_CLIENT_ID = '__admin_client';
export const INTERNAL_TOPICS = new Set(['__consumer_offsets', '__transaction_state', '__consumer_offsets_history']);
