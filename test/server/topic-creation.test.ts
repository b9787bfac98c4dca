/**
 * Automatic topic creation losing a race: when the store says the topic already exists, the
 * winner's topic is returned; when this broker's view does not show it yet (cluster mode: another
 * broker created it and the controller has not told this one), the client gets Kafka's retriable
 * LEADER_NOT_AVAILABLE, not UNKNOWN_SERVER_ERROR.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { autoCreateTopic } from '../../src/server/topic-creation.js';
import type { BrokerServices } from '../../src/server/broker-services.js';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';
import { defaultBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';

/** TopicAdmin's side of auto-creation, with no cap in the way. */
const ADMIN = {
  checkRequestPartitions: () => undefined,
  checkPartitionCaps: () => undefined,
  partitionCounts: () => ({ broker: 0, cluster: 0 }),
};

function services(visibleAfterRace: boolean): BrokerServices {
  let created = false;
  const topic = { name: 't', topicId: 'x', partitions: [], configs: {} };
  const fake = {
    config: defaultBrokerConfig({}),
    logger: silentLogger(),
    admin: { topics: ADMIN },
    metadata: {
      topic: (name: string) => (name === 't' && created && visibleAfterRace ? topic : undefined),
      brokers: () => [{ id: 0 }],
      createTopics: async () => {
        created = true;
        return [new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 't' already exists.")];
      },
    },
  };
  return fake as unknown as BrokerServices;
}

test('a lost creation race returns the winner, or LEADER_NOT_AVAILABLE while this broker cannot see it', async () => {
  assert.equal((await autoCreateTopic(services(true), 't')).name, 't');
  await assert.rejects(autoCreateTopic(services(false), 't'), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.LEADER_NOT_AVAILABLE);
});

test('a cluster-mode broker that has no metadata yet (restarted, no UpdateMetadata so far) answers a retriable LEADER_NOT_AVAILABLE, not INVALID_REPLICATION_FACTOR', async () => {
  let asked = false;
  const fake = {
    config: defaultBrokerConfig({}),
    logger: silentLogger(),
    admin: { topics: ADMIN },
    // The image the controller has not fed yet: no live broker, no topic (the topic exists in ZooKeeper).
    metadata: {
      topic: () => undefined,
      brokers: () => [],
      createTopics: async (specs: { replicationFactor: number }[]) => {
        asked = true;
        // As ZkBrokerMetadata.createTopics checks before it writes to ZooKeeper.
        if (specs[0]!.replicationFactor < 1) return [new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.')];
        return [new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 't' already exists.")];
      },
    },
  } as unknown as BrokerServices;
  await assert.rejects(autoCreateTopic(fake, 't'), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.LEADER_NOT_AVAILABLE);
  assert.equal(asked, false, 'nothing is created from a view without brokers');
});
