/**
 * The one interface the broker uses for cluster metadata, whatever keeps it (a file for the
 * embedded single broker, ZooKeeper for a cluster). Changes are announced through `onChange`.
 */
import type { BrokerInfo, NewTopic, TopicInfo } from './cluster-model.js';

export interface MetadataStore {
  readonly clusterId: string;
  controllerId(): number;
  brokers(): BrokerInfo[];
  topics(): TopicInfo[];
  topic(name: string): TopicInfo | undefined;
  topicById(topicId: string): TopicInfo | undefined;
  /** Throws KafkaError(TOPIC_ALREADY_EXISTS / INVALID_REPLICATION_FACTOR / ...) on refusal. */
  createTopic(spec: NewTopic): Promise<TopicInfo>;
  /**
   * Several topics as one change (one write of the embedded file; ZooKeeper writes with bounded
   * concurrency), each answered on its own: its topic, or the KafkaError createTopic would throw.
   */
  createTopics(specs: readonly NewTopic[]): Promise<(TopicInfo | Error)[]>;
  deleteTopic(name: string): Promise<void>;
  createPartitions(name: string, totalCount: number, assignment?: number[][]): Promise<TopicInfo>;
  /**
   * Keeps only the first `count` partitions. Kafka never shrinks a topic; this exists only to
   * undo a createPartitions whose logs could not all be created.
   */
  truncatePartitions(name: string, count: number): Promise<TopicInfo>;
  setTopicConfigs(name: string, configs: Record<string, string>): Promise<void>;
  onChange(listener: (topic: string) => void): void;
  close(): Promise<void>;
}
