/**
 * kafka-exporter's per-partition families (topic-partition-metrics.ts) write their own text in one
 * pass per scrape instead of prom-client's labelled gauges (reset and set per partition, about
 * 2 MB of garbage per scrape at 60 partitions): the text must be what prom-client writes for the
 * same samples, and only the partitions led here appear.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createMetricsRegistry } from '../../../src/server/metrics/registry.js';
import { registerTopicPartitionMetrics, type TopicPartitionMetricsSources } from '../../../src/server/metrics/topic-partition-metrics.js';

/** The same families' text as prom-client writes it from their samples: a plain Registry holding the same metric objects. */
async function promClientText(registry: Registry): Promise<string> {
  const plain = new Registry();
  for (const m of registry.getMetricsAsArray()) plain.registerMetric(m as unknown as Parameters<Registry['registerMetric']>[0]);
  return plain.metrics();
}

interface FakePartition {
  topic: string;
  partition: number;
  isLeader: boolean;
  replicas: number[];
  isr: number[];
  highWatermark: number;
  logStartOffset: number;
}

function sources(partitions: FakePartition[]): TopicPartitionMetricsSources {
  const topics = [...new Set(partitions.map((p) => p.topic))].map((name) => ({
    name,
    partitions: partitions.filter((p) => p.topic === name).map(() => ({ replicas: [1], isr: [1] })),
  }));
  return {
    brokerId: 1,
    metadata: { brokers: () => [{ id: 1 }], topics: () => topics, topic: (n: string) => topics.find((t) => t.name === n) },
    replicaManager: { allPartitions: () => partitions },
    isActiveController: () => true,
    partitionLevel: true,
  } as unknown as TopicPartitionMetricsSources;
}

test('topic partition families: written directly, the text prom-client writes, leaders only', async () => {
  const partitions: FakePartition[] = [];
  for (let i = 0; i < 40; i++) {
    // Embedded mode's partitions have no replica set of their own (the metadata's is used); a cluster's do.
    const own = i % 2 === 0;
    partitions.push({
      topic: i < 30 ? 'orders.v1' : '__consumer_offsets',
      partition: i < 30 ? i : i - 30,
      isLeader: i % 5 !== 4,
      replicas: own ? [2, 1, 3] : [],
      isr: own ? (i % 3 === 0 ? [2, 1] : [2, 1, 3]) : [],
      highWatermark: 1_000_000 + i,
      logStartOffset: i,
    });
  }
  const registry = createMetricsRegistry();
  registerTopicPartitionMetrics(registry, sources(partitions));
  const families = registry.getMetricsAsArray().filter((m) => (m as unknown as { name: string }).name.startsWith('kafka_topic_partition_'));
  assert.equal(families.length, 7);
  for (const f of families) assert.ok('preformattedText' in f, `${(f as unknown as { name: string }).name} writes its own text`);

  const text = await registry.metrics();
  assert.equal(text, await promClientText(registry));
  assert.match(text, /^kafka_topic_partition_current_offset\{topic="orders\.v1",partition="0"\} 1000000$/m);
  assert.match(text, /^kafka_topic_partition_in_sync_replica\{topic="orders\.v1",partition="6"\} 2$/m);
  assert.match(text, /^kafka_topic_partition_under_replicated_partition\{topic="orders\.v1",partition="6"\} 1$/m);
  assert.match(text, /^kafka_topic_partition_leader_is_preferred\{topic="orders\.v1",partition="1"\} 1$/m);
  assert.match(text, /^kafka_topic_partition_leader_is_preferred\{topic="orders\.v1",partition="0"\} 0$/m);
  assert.doesNotMatch(text, /topic="orders\.v1",partition="4"/, 'a partition led elsewhere is not exported here');
  assert.equal(text.match(/^kafka_topic_partition_replicas\{/gm)?.length, 32);

  // No partition led here: each family is its HELP and TYPE lines only, as prom-client writes an empty gauge.
  const empty = createMetricsRegistry();
  registerTopicPartitionMetrics(empty, sources([]));
  assert.equal(await empty.metrics(), await promClientText(empty));
  assert.match(await empty.metrics(), /^# TYPE kafka_topic_partition_leader gauge$/m);
});
