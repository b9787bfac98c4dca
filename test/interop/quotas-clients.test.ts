/**
 * Client quotas with real clients (confluent-kafka / librdkafka): a 1 MB/s producer_byte_rate on
 * client id `greedy` holds a greedy producer near 1 MB/s while client id `normal` on the same
 * broker keeps its speed; librdkafka sees throttle_time_ms; raising the quota at run time raises
 * the rate; a consumer_byte_rate holds a consumer near its rate.
 *
 * The broker measures over quota.window.num=2 windows of 1 s (Kafka's default is 11): with 11,
 * a new sensor first allows a burst of bound × 10 s before throttling, so the rate over a few
 * seconds says little; with 2 the burst is one second's worth and a 6 s measurement is near the
 * bound. bench/quotas.ts measures Kafka's default windows over a longer run.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { requirePeer } from '../helpers/peers.js';
import { greedyProducer, meteredConsumer, rateBetween, MB } from './quota-clients.js';
import { Admin } from '../../src/client/index.js';

let b: TestBroker;
let admin: Admin;
before(async () => {
  b = await startTestBroker({ 'quota.window.num': '2', 'quota.window.size.seconds': '1' });
  admin = new Admin({ bootstrapServers: b.bootstrap });
  await admin.createTopics([
    { name: 'greedy-t', numPartitions: 1, replicationFactor: 1 },
    { name: 'normal-t', numPartitions: 1, replicationFactor: 1 },
    { name: 'read-t', numPartitions: 1, replicationFactor: 1 },
  ]);
});
after(async () => {
  await admin.close();
  await b.stop();
});

const fmt = (bps: number): string => `${(bps / MB).toFixed(2)} MB/s`;

test('producer_byte_rate=1048576 holds a greedy producer near 1 MB/s, another client id keeps its speed, throttle_time_ms reaches the client, a raised quota raises the rate', {
  timeout: 240_000,
}, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  await admin.alterClientQuotas([{ entity: [{ entityType: 'client-id', entityName: 'greedy' }], ops: [{ key: 'producer_byte_rate', value: 1048576 }] }]);
  const launched = Date.now();
  const greedyRun = greedyProducer(b.bootstrap, 'greedy-t', 'greedy', 17);
  const normalRun = greedyProducer(b.bootstrap, 'normal-t', 'normal', 4);
  // Raise the quota at run time, 10 s after launching the greedy producer.
  await new Promise((r) => setTimeout(r, 10_000 - (Date.now() - launched))); // a point in the run, not a synchronisation
  await admin.alterClientQuotas([{ entity: [{ entityType: 'client-id', entityName: 'greedy' }], ops: [{ key: 'producer_byte_rate', value: 3 * 1048576 }] }]);
  const changedAt = Date.now() / 1000;
  const [greedy, normal] = await Promise.all([greedyRun, normalRun]);
  const g0 = greedy.start;
  const limited = rateBetween(greedy, g0 + 2, g0 + 8);
  const normalRate = rateBetween(normal, normal.start + 1, normal.end);
  const raised = rateBetween(greedy, changedAt + 2, greedy.end);
  t.diagnostic(
    `greedy (quota 1 MB/s) ${fmt(limited)} over 6 s; normal ${fmt(normalRate)} at the same time (its run ${(normal.end - normal.start).toFixed(1)} s); greedy after raising the quota to 3 MB/s ${fmt(raised)}`,
  );
  t.diagnostic(
    `throttle events seen by librdkafka: ${greedy.throttles.length}, max ${Math.round(1000 * Math.max(0, ...greedy.throttles.map((x) => x[1])))} ms`,
  );
  assert.deepEqual(greedy.errors, []);
  assert.ok(limited >= 0.7 * MB && limited <= 1.4 * MB, `greedy held near 1 MB/s: ${fmt(limited)}`);
  assert.ok(normalRate >= 3 * limited, `normal keeps its speed: ${fmt(normalRate)} vs greedy ${fmt(limited)}`);
  assert.ok(greedy.throttles.length > 0 && greedy.throttles.some((x) => x[1] > 0), 'librdkafka reported throttle_time_ms');
  assert.equal(normal.throttles.filter((x) => x[1] > 0).length, 0, 'the normal client is never throttled');
  assert.ok(raised >= 1.8 * MB, `raised quota raises the rate: ${fmt(raised)}`);
});

test('consumer_byte_rate=1048576 holds a consumer near 1 MB/s', { timeout: 240_000 }, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const fill = await greedyProducer(b.bootstrap, 'read-t', 'filler', 6);
  const filled = fill.buckets.reduce((s, [, n]) => s + n, 0);
  assert.ok(filled > 12 * MB, `enough data to read: ${filled}`);
  await admin.alterClientQuotas([{ entity: [{ entityType: 'client-id', entityName: 'reader' }], ops: [{ key: 'consumer_byte_rate', value: 1048576 }] }]);
  const reader = await meteredConsumer(b.bootstrap, 'read-t', 'reader', 9);
  const rate = rateBetween(reader, reader.start + 2, reader.start + 9);
  t.diagnostic(`consumer (quota 1 MB/s) ${fmt(rate)} over 7 s; throttle events ${reader.throttles.length}`);
  // The quota is a ceiling: above it is the failure. Below it, librdkafka's own back-off after
  // each throttled (empty) fetch costs more on a loaded machine: 0.85 MB/s alone, 0.57 MB/s seen
  // in a full CI run. The floor only says the consumer is not starved.
  assert.ok(rate >= 0.4 * MB && rate <= 1.4 * MB, `consumer held near 1 MB/s: ${fmt(rate)}`);
  assert.ok(
    reader.throttles.some((x) => x[1] > 0),
    'librdkafka reported throttle_time_ms on fetches',
  );
});
