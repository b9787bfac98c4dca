/**
 * Admin.describeTopicPartitions: topics described with DescribeTopicPartitions (API 75, KIP-966),
 * as Kafka's admin client does on brokers that serve it: one request names every topic, the
 * broker answers up to `partitionSizeLimitPerResponse` partitions, and the client asks again from
 * the response's NextCursor (with the topics not finished yet) until none comes back, joining a
 * topic's partitions across pages. A topic answered with an error throws its KafkaError.
 */
import { Api } from './apis.js';
import type { Cluster, PartitionMetadata, TopicMetadata } from './cluster.js';
import { KafkaError, throwIfError } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';
import type { DescribeTopicPartitionsResponse } from '../protocol/messages/75-describe-topic-partitions.js';

export interface TopicPartitionDescription extends PartitionMetadata {
  /** KIP-966's eligible leader replicas (null when the broker did not say: Metadata). */
  eligibleLeaderReplicas: number[] | null;
  lastKnownElr: number[] | null;
}

export interface TopicPartitionsDescription extends TopicMetadata {
  partitions: TopicPartitionDescription[];
  /** Kafka's bit field of the operations the principal may do on the topic. */
  authorizedOperations: number;
}

/** Kafka's default page size (DescribeTopicsOptions.partitionSizeLimitPerResponse). */
export const DEFAULT_PARTITION_LIMIT = 2000;

/** Whether the broker the client talks to serves DescribeTopicPartitions. */
export async function servesDescribeTopicPartitions(cluster: Cluster): Promise<boolean> {
  return (await cluster.anyConnection()).brokerApiVersions.has(Api.DescribeTopicPartitions.apiKey);
}

export async function describeTopicPartitions(
  cluster: Cluster,
  names: readonly string[],
  partitionSizeLimitPerResponse = DEFAULT_PARTITION_LIMIT,
): Promise<TopicPartitionsDescription[]> {
  const pending = [...new Set(names)].sort();
  const found = new Map<string, TopicPartitionsDescription>();
  let cursor: { topicName: string; partitionIndex: number } | null = null;
  while (pending.length > 0) {
    const conn = await cluster.anyConnection();
    const r: DescribeTopicPartitionsResponse = await conn.send(Api.DescribeTopicPartitions, {
      topics: pending.map((name) => ({ name })),
      responsePartitionLimit: partitionSizeLimitPerResponse,
      cursor,
    });
    for (const t of r.topics) {
      const name = t.name ?? '';
      throwIfError(t.errorCode, `topic ${name}`);
      let d = found.get(name);
      if (!d) {
        d = {
          name,
          topicId: t.topicId,
          isInternal: t.isInternal,
          errorCode: ErrorCode.NONE,
          partitions: [],
          authorizedOperations: t.topicAuthorizedOperations,
        };
        found.set(name, d);
      }
      for (const p of t.partitions) {
        d.partitions.push({
          partition: p.partitionIndex,
          leader: p.leaderId,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicaNodes,
          isr: p.isrNodes,
          offlineReplicas: p.offlineReplicas,
          errorCode: p.errorCode,
          eligibleLeaderReplicas: p.eligibleLeaderReplicas,
          lastKnownElr: p.lastKnownElr,
        });
      }
    }
    cursor = r.nextCursor;
    if (cursor === null) break;
    // The topics before the cursor's are complete; ask again from it.
    const from = cursor.topicName;
    const rest = pending.filter((n) => n >= from);
    if (rest.length === pending.length && r.topics.length === 0)
      throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'DescribeTopicPartitions made no progress');
    pending.splice(0, pending.length, ...rest);
  }
  for (const name of names) if (!found.has(name)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name} does not exist`);
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}
