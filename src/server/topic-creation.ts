/**
 * Automatic topic creation, as Metadata and Produce trigger it: broker defaults for partitions
 * and replication, refused when `auto.create.topics.enable` is false or the name is illegal.
 */
import type { TopicInfo } from '../metadata/cluster-model.js';
import { INTERNAL_TOPICS } from '../metadata/cluster-model.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { BrokerServices } from './broker-services.js';
import type { PartitionRef } from './cluster/leader-readiness.js';

/**
 * Cluster mode: waits, for up to `timeoutMs`, until the leader of every partition of `topics`
 * serves it (has applied its LeaderAndIsr; server/cluster/leader-readiness.ts), so that a client
 * producing as soon as a topic is created is not answered "This server does not host this
 * topic-partition". Resolves with the partitions still not served; [] in embedded mode. Call it
 * once per request with every topic the request created (CreateTopics, CreatePartitions,
 * auto-creation): the leaders are asked together.
 */
export function partitionsNotServedWithin(services: BrokerServices, topics: readonly string[], timeoutMs: number): Promise<PartitionRef[]> {
  if (topics.length === 0 || !services.leaderReadiness) return Promise.resolve([]);
  return services.leaderReadiness.awaitServing(topics, timeoutMs);
}

/**
 * CreateTopics and CreatePartitions: the topics whose leaders did not serve them within the
 * request's `timeout_ms` (counted from `startedAt`), with the message of Kafka's
 * REQUEST_TIMED_OUT answer; the topics stay created. A timeout_ms of 0 or less is answered at
 * once, as Kafka does.
 */
export async function topicsNotServedInTime(services: BrokerServices, topics: readonly string[], startedAt: number, requestTimeoutMs: number): Promise<Map<string, string>> {
  const late = new Map<string, string>();
  if (requestTimeoutMs <= 0) return late;
  const notServed = await partitionsNotServedWithin(services, topics, startedAt + requestTimeoutMs - Date.now());
  const byTopic = new Map<string, number[]>();
  for (const p of notServed) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
  for (const [topic, partitions] of byTopic) {
    late.set(topic, `The request timed out: the leaders of ${topic} partitions [${partitions.sort((a, b) => a - b).join(', ')}] did not serve them within ${requestTimeoutMs} ms (they are created).`);
  }
  return late;
}

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
    if ((await partitionsNotServedWithin(services, [name], services.config.requestTimeoutMs)).length > 0) {
      throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `topic ${name} is created; its leaders do not serve it yet`);
    }
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
