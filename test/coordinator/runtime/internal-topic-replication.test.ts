/**
 * The internal topics' replication (issue 22): __consumer_offsets and __transaction_state are
 * created with the configured factor (Kafka's default 3), capped to the one broker only in
 * embedded mode; __consumer_offsets gets min.insync.replicas 2 from 3 replicas on; the shipped
 * config/server.properties asks for 3 and 2. The broker warns when an existing internal topic has
 * fewer replicas than the cluster could give it, and in cluster mode when the configured factor
 * is below the live brokers, naming the topic, its factor and the config key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import pino from 'pino';
import { GroupCoordinator, OFFSETS_TOPIC } from '../../../src/coordinator/group/group-coordinator.js';
import { TxnCoordinator } from '../../../src/coordinator/txn/txn-coordinator.js';
import { defaultBrokerConfig } from '../../../src/server/config/build-broker-config.js';
import { loadBrokerConfig } from '../../../src/server/config/build-broker-config.js';
import type { MetadataStore } from '../../../src/metadata/metadata-store.js';
import type { NewTopic, PartitionState, TopicInfo } from '../../../src/metadata/cluster-model.js';
import type { ReplicaManager } from '../../../src/replication/replica-manager.js';
import { MemoryLog } from '../memory-log.js';

interface Fake {
  metadata: MetadataStore;
  created: NewTopic[];
  topics: Map<string, TopicInfo>;
  setBrokers(n: number): void;
  change(topic: string): void;
}

function fakeMetadata(liveBrokers: number): Fake {
  const topics = new Map<string, TopicInfo>();
  const created: NewTopic[] = [];
  const listeners: ((t: string) => void)[] = [];
  let brokers = liveBrokers;
  const metadata = {
    topic: (name: string) => topics.get(name),
    brokers: () => Array.from({ length: brokers }, (_, id) => ({ id, host: '127.0.0.1', port: 9092 + id, rack: null })),
    onChange: (l: (t: string) => void) => listeners.push(l),
    createTopic: async (spec: NewTopic) => {
      created.push(spec);
      const replicas = Array.from({ length: spec.replicationFactor ?? 1 }, (_, i) => i);
      const partitions: PartitionState[] = Array.from({ length: spec.numPartitions ?? 1 }, (_, partition) => ({
        partition,
        leader: 1,
        leaderEpoch: 0,
        replicas,
        isr: replicas,
        offlineReplicas: [],
      }));
      const t = { name: spec.name, topicId: 'x', internal: true, partitions, configs: spec.configs ?? {} } as TopicInfo;
      topics.set(spec.name, t);
      return t;
    },
  } as unknown as MetadataStore;
  return {
    metadata,
    created,
    topics,
    setBrokers: (n) => (brokers = n),
    change: (t) => {
      for (const l of listeners) l(t);
    },
  };
}

const replicaManager = {
  syncTopic: async () => undefined,
  getPartition: () => undefined,
  txnMarkerListeners: { add: () => undefined },
} as unknown as ReplicaManager;

/** A logger whose warnings land in `warnings`. */
function capture(): { logger: pino.Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(String(JSON.parse(line).msg)) });
  return { logger, warnings };
}

function groupCoordinator(fake: Fake, props: Record<string, string>, logger = pino({ level: 'silent' })): GroupCoordinator {
  const config = defaultBrokerConfig({ 'broker.id': '0', 'offsets.topic.num.partitions': '3', ...props });
  return new GroupCoordinator({ config, metadata: fake.metadata, replicaManager, logger, log: new MemoryLog() });
}

const CLUSTER = { 'zookeeper.connect': '127.0.0.1:1/fjord' };

test('cluster mode: __consumer_offsets is created with 3 replicas and min.insync.replicas 2 (the defaults)', async () => {
  const fake = fakeMetadata(3);
  await groupCoordinator(fake, CLUSTER).ensureOffsetsTopic();
  assert.equal(fake.created.length, 1);
  assert.equal(fake.created[0]!.replicationFactor, 3);
  assert.equal(fake.created[0]!.configs?.['min.insync.replicas'], '2');
  assert.equal(fake.created[0]!.configs?.['cleanup.policy'], 'compact');
});

test('embedded mode: the one broker caps __consumer_offsets to 1 replica, min.insync.replicas 1', async () => {
  const fake = fakeMetadata(1);
  await groupCoordinator(fake, {}).ensureOffsetsTopic();
  assert.equal(fake.created[0]!.replicationFactor, 1);
  assert.equal(fake.created[0]!.configs?.['min.insync.replicas'], '1');
});

test('a ZooKeeper cluster of one registered broker waits for 3, as Kafka (COORDINATOR_NOT_AVAILABLE)', async () => {
  const fake = fakeMetadata(1);
  await assert.rejects(
    groupCoordinator(fake, CLUSTER).ensureOffsetsTopic(),
    /Number of alive brokers '1' does not meet the required replication factor '3'.*offsets\.topic\.replication\.factor/,
  );
  assert.equal(fake.created.length, 0);
});

test('__transaction_state: 3 replicas, min ISR 2 in a cluster; 1 and 1 embedded', async () => {
  for (const [brokers, props, rf, minIsr] of [
    [3, CLUSTER, 3, '2'],
    [1, {}, 1, '1'],
  ] as const) {
    const fake = fakeMetadata(brokers);
    const config = defaultBrokerConfig({ 'broker.id': '0', 'transaction.state.log.num.partitions': '2', ...props });
    const txn = new TxnCoordinator({
      config,
      metadata: fake.metadata,
      replicaManager,
      logger: pino({ level: 'silent' }),
      log: new MemoryLog(),
      producerIds: { next: async () => 0n },
      markers: { write: async () => undefined },
    } as unknown as ConstructorParameters<typeof TxnCoordinator>[0]);
    await txn.ensureTopic();
    assert.equal(fake.created[0]!.replicationFactor, rf);
    assert.equal(fake.created[0]!.configs?.['min.insync.replicas'], minIsr);
  }
});

test('warns once when an existing __consumer_offsets has fewer replicas than the cluster could give it, again when brokers join', () => {
  const fake = fakeMetadata(3);
  fake.topics.set(OFFSETS_TOPIC, {
    name: OFFSETS_TOPIC,
    topicId: 'x',
    internal: true,
    partitions: [{ partition: 0, leader: 0, leaderEpoch: 0, replicas: [0], isr: [0], offlineReplicas: [] }],
    configs: {},
  } as TopicInfo);
  const { logger, warnings } = capture();
  const gc = groupCoordinator(fake, CLUSTER, logger);
  gc.start();
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(
    warnings[0]!,
    /^__consumer_offsets has replication factor 1, below the 3 this cluster could give it \(offsets\.topic\.replication\.factor=3, 3 live brokers\)/,
  );
  fake.change(OFFSETS_TOPIC);
  assert.equal(warnings.length, 1, 'the same situation is not warned about again');
  fake.setBrokers(2);
  fake.change(OFFSETS_TOPIC);
  assert.equal(warnings.length, 2);
  assert.match(warnings[1]!, /below the 2 this cluster could give it \(offsets\.topic\.replication\.factor=3, 2 live brokers\)/);
  gc.shutdown();
});

test('cluster mode: warns when offsets.topic.replication.factor itself is below the live brokers; embedded and a full topic do not', () => {
  const low = capture();
  const fake = fakeMetadata(3);
  const gc = groupCoordinator(fake, { ...CLUSTER, 'offsets.topic.replication.factor': '1' }, low.logger);
  gc.start();
  assert.equal(low.warnings.length, 1, low.warnings.join('\n'));
  assert.match(low.warnings[0]!, /^offsets\.topic\.replication\.factor=1 is below the 3 live brokers: __consumer_offsets gets 1 replica\(s\)/);
  gc.shutdown();

  for (const [props, brokers] of [
    [{}, 1],
    [CLUSTER, 3],
  ] as const) {
    const quiet = capture();
    const f = fakeMetadata(brokers);
    f.topics.set(OFFSETS_TOPIC, {
      name: OFFSETS_TOPIC,
      topicId: 'x',
      internal: true,
      partitions: [{ partition: 0, leader: 0, leaderEpoch: 0, replicas: Array.from({ length: brokers }, (_, i) => i), isr: [0], offlineReplicas: [] }],
      configs: {},
    } as TopicInfo);
    const g = groupCoordinator(f, props, quiet.logger);
    g.start();
    assert.deepEqual(quiet.warnings, [], JSON.stringify(props));
    g.shutdown();
  }
});

test('the shipped config/server.properties asks for 3 replicas and min ISR 2 of the internal topics', () => {
  const c = loadBrokerConfig(join(import.meta.dirname, '../../../config/server.properties'), []);
  assert.equal(c.offsetsTopicReplicationFactor, 3);
  assert.equal(c.transactionStateLogReplicationFactor, 3);
  assert.equal(c.transactionStateLogMinIsr, 2);
});
