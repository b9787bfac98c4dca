/**
 * The metrics a push carries: Kafka's standard names, only what the subscription's prefixes ask
 * for, sums cumulative or as deltas, windows reset per push; and the OTLP bytes that carry them,
 * compressed with the first codec the broker accepts, decoded back by the broker's codec.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientStats } from '../../../src/client/telemetry/client-stats.js';
import { TelemetryCollector, isRequested } from '../../../src/client/telemetry/collector.js';
import { chooseCompression, encodePayload, toMetricsData } from '../../../src/client/telemetry/otlp-payload.js';
import { decodeMetricsData } from '../../../src/protocol/otlp/index.js';
import { decompress } from '../../../src/protocol/records/index.js';

const ALL = { requestedMetrics: [''], deltaTemporality: false };

function producerStats() {
  const stats = new ClientStats();
  stats.connectionCreations = 2;
  stats.latencyOf('h:9092').record(4);
  stats.latencyOf('h:9092').record(8);
  stats.latencyOf('h:9093').record(1);
  stats.recordQueueTime.record(3);
  return stats;
}

test('a producer reports Kafka standard names, per-node latency labelled node.id, and nothing it did not observe', () => {
  const stats = producerStats();
  const c = new TelemetryCollector('producer', stats, (a) => (a === 'h:9092' ? 1 : -1), 1000);
  const batch = c.collect(2000, ALL);
  const byName = new Map(batch.metrics.map((m) => [m.name, m]));
  assert.deepEqual([...byName.keys()].sort(), [
    'org.apache.kafka.producer.connection.creation.rate',
    'org.apache.kafka.producer.connection.creation.total',
    'org.apache.kafka.producer.node.request.latency.avg',
    'org.apache.kafka.producer.node.request.latency.max',
    'org.apache.kafka.producer.record.queue.time.avg',
    'org.apache.kafka.producer.record.queue.time.max',
  ]);
  const avg = byName.get('org.apache.kafka.producer.node.request.latency.avg')!;
  assert.deepEqual(
    avg.points.map((p) => [p.attributes['node.id'], p.value]),
    [
      ['1', 6],
      ['-1', 1],
    ],
  );
  assert.equal(byName.get('org.apache.kafka.producer.node.request.latency.max')!.points[0]!.value, 8);
  assert.equal(byName.get('org.apache.kafka.producer.connection.creation.total')!.kind, 'sum');
  assert.equal(byName.get('org.apache.kafka.producer.connection.creation.rate')!.points[0]!.value, 2, '2 connections in the 1 s since start');
  // The windows were read: a second push without new observations carries only the connection counts.
  const second = c.collect(3000, ALL).metrics;
  assert.deepEqual(
    second.map((m) => m.name),
    ['org.apache.kafka.producer.connection.creation.total', 'org.apache.kafka.producer.connection.creation.rate'],
  );
  assert.equal(second[1]!.points[0]!.value, 0);
});

test('prefix filter: [] is nothing, [""] everything, otherwise names starting with a prefix', () => {
  assert.equal(isRequested('org.apache.kafka.producer.x', []), false);
  assert.equal(isRequested('org.apache.kafka.producer.x', ['']), true);
  assert.equal(isRequested('org.apache.kafka.producer.node.request.latency.avg', ['org.apache.kafka.producer.node']), true);
  assert.equal(isRequested('org.apache.kafka.producer.record.queue.time.avg', ['org.apache.kafka.producer.node', 'org.apache.kafka.consumer']), false);
  const c = new TelemetryCollector('producer', producerStats(), () => 1, 0);
  const names = c.collect(1, { requestedMetrics: ['org.apache.kafka.producer.record.queue'], deltaTemporality: false }).metrics.map((m) => m.name);
  assert.deepEqual(names, ['org.apache.kafka.producer.record.queue.time.avg', 'org.apache.kafka.producer.record.queue.time.max']);
});

test('delta temporality sends the change since the previous push, starting at it; cumulative starts at the client start', () => {
  const stats = new ClientStats();
  const c = new TelemetryCollector('admin', stats, () => 1, 1000);
  stats.connectionCreations = 3;
  const delta = { requestedMetrics: [''], deltaTemporality: true };
  const first = c.collect(2000, delta);
  assert.equal(first.metrics[0]!.name, 'org.apache.kafka.admin.client.connection.creation.total');
  assert.equal(first.metrics[0]!.points[0]!.value, 3);
  assert.equal(first.startTimeMs, 1000);
  stats.connectionCreations = 5;
  const second = c.collect(3000, delta);
  assert.equal(second.metrics[0]!.points[0]!.value, 2);
  assert.equal(second.startTimeMs, 2000);
  const cumulative = c.collect(4000, ALL);
  assert.equal(cumulative.metrics[0]!.points[0]!.value, 5);
  assert.equal(cumulative.startTimeMs, 1000);
});

test('a consumer reports fetch and commit latency, poll idle ratio and assigned partitions', () => {
  const stats = new ClientStats();
  stats.fetchLatency.record(10);
  stats.commitLatency.record(2);
  stats.pollIdle.pollStarted(0);
  stats.pollIdle.pollEnded(30); // 30 ms in poll
  stats.pollIdle.pollStarted(100); // 70 ms of application work
  stats.pollIdle.pollEnded(130); // then 30 ms in poll: 30 / 100
  stats.assignedPartitions = () => 4;
  const m = new Map(new TelemetryCollector('consumer', stats, () => 1, 0).collect(1, ALL).metrics.map((x) => [x.name, x.points[0]!.value]));
  assert.equal(m.get('org.apache.kafka.consumer.fetch.manager.fetch.latency.avg'), 10);
  assert.equal(m.get('org.apache.kafka.consumer.coordinator.commit.latency.max'), 2);
  assert.equal(m.get('org.apache.kafka.consumer.poll.idle.ratio.avg'), (1 + 0.3) / 2);
  assert.equal(m.get('org.apache.kafka.consumer.coordinator.assigned.partitions'), 4);
});

test('the payload is OTLP MetricsData, compressed with the first accepted codec the client writes', () => {
  assert.equal(chooseCompression([]), 0);
  assert.equal(chooseCompression([9, 4, 1]), 4, 'unknown codec 9 skipped, zstd first');
  const stats = producerStats();
  const batch = new TelemetryCollector('producer', stats, () => 1, 1000).collect(2000, { requestedMetrics: [''], deltaTemporality: true });
  for (const accepted of [[], [1], [4, 3], [2], [3]]) {
    const payload = encodePayload(toMetricsData(batch, { group_id: 'g' }), accepted);
    assert.equal(payload.compressionType, accepted[0] ?? 0);
    const data = decodeMetricsData(decompress(payload.compressionType, payload.metrics));
    const rm = data.resourceMetrics[0]!;
    assert.deepEqual(rm.resource?.attributes, [{ key: 'group_id', value: 'g' }]);
    const metrics = rm.scopeMetrics[0]!.metrics;
    const total = metrics.find((m) => m.name === 'org.apache.kafka.producer.connection.creation.total')!;
    assert.equal(total.data?.type, 'sum');
    if (total.data?.type !== 'sum') return;
    assert.equal(total.data.aggregationTemporality, 'delta');
    assert.equal(total.data.isMonotonic, true);
    assert.equal(total.data.dataPoints[0]!.value, 2n);
    assert.equal(total.data.dataPoints[0]!.startTimeUnixNano, 1000n * 1_000_000n);
    assert.equal(total.data.dataPoints[0]!.timeUnixNano, 2000n * 1_000_000n);
    const avg = metrics.find((m) => m.name === 'org.apache.kafka.producer.node.request.latency.avg')!;
    assert.equal(avg.data?.type, 'gauge');
    assert.equal(avg.data?.dataPoints[0]?.value, 6);
    assert.deepEqual(avg.data?.dataPoints[0]?.attributes, [{ key: 'node.id', value: '1' }]);
  }
});
