/**
 * Automatic topic creation, as Metadata and Produce trigger it: broker defaults for partitions
 * and replication, refused when `auto.create.topics.enable` is false or the name is illegal.
 */
import type { TopicInfo } from '../metadata/cluster-model.js';
import { INTERNAL_TOPICS } from '../metadata/cluster-model.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { BrokerServices } from './broker-services.js';

export async function autoCreateTopic(services: BrokerServices, name: string): Promise<TopicInfo> {
  const existing = services.metadata.topic(name);
  if (existing) return existing;
  if (!services.config.autoCreateTopicsEnable || INTERNAL_TOPICS.has(name)) {
    throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }
  const live = services.metadata.brokers().length;
  // A cluster-mode broker knows the cluster only from the controller's UpdateMetadata: just
  // (re)started, its image has no broker and no topic yet, and every topic looks unknown. The
  // topic may well exist; the client retries, as Kafka answers a topic it cannot show yet.
  if (live === 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `this broker has no cluster metadata yet; topic ${name} cannot be shown or created`);
  const replicationFactor = Math.min(services.config.defaultReplicationFactor, live);
  // Auto-creation counts against max.broker.partitions / max.partitions like CreateTopics.
  services.admin.topics.checkPartitionCaps(services.config.numPartitions);
  try {
    const t = await services.metadata.createTopic({ name, numPartitions: services.config.numPartitions, replicationFactor });
    services.logger.info({ topic: name, partitions: t.partitions.length }, `created topic ${name} with ${t.partitions.length} partition(s) (auto-created)`);
    return t;
  } catch (err) {
    // Two requests racing to create the same topic: the loser sees it exists, which is fine. In
    // cluster mode the winner may be another broker whose topic this broker's image does not
    // show yet: the client gets Kafka's retriable answer for a topic still being created.
    if (err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS) {
      const t = services.metadata.topic(name);
      if (t) return t;
      throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `topic ${name} is being created`);
    }
    throw err;
  }
}
