// Request, broker topic, connection, SASL and quota metrics read from a live in-process broker's
// registry (the Prometheus text it would serve): a kafkajs producer and consumer's traffic
// counted where Kafka counts it, errors by code, histogram counts equal to request counts,
// connections up then down, SASL failures and successes, a throttled client's throttle time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { Admin } from '../../../src/client/index.js';
import { KafkaError } from '../../../src/protocol/errors.js';
import { batchOf, produce } from '../handlers/data-plane-helpers.js';
import { API_SLOTS, BUCKETS, TimeHistograms } from '../../../src/server/metrics/request-stats.js';
import { quantile } from '../../../src/server/metrics/request-metrics.js';
import { waitFor } from '../../helpers/wait-for.js';

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_alice="alice-secret";';

let b: TestBroker;
let saslPort: number;
before(async () => {
  b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'connection.failed.authentication.delay.ms': '10',
    'auto.create.topics.enable': 'false',
    'quota.window.num': '2',
    'quota.window.size.seconds': '1',
  });
  saslPort = b.broker.boundPorts().get('SASL_PLAINTEXT')!;
});
after(async () => {
  await b.stop();
});

interface Line {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The broker's Prometheus text, parsed line by line (comments skipped). */
async function scrape(): Promise<Line[]> {
  const text = await b.broker.metrics.metrics();
  const lines: Line[] = [];
  for (const row of text.split('\n')) {
    if (row === '' || row.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(row);
    assert.ok(m, `a line of the text format: ${row}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    lines.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return lines;
}

/** The value of the one line with exactly these labels (undefined: none). */
function value(lines: Line[], name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels);
  const found = lines.filter((l) => l.name === name && Object.keys(l.labels).length === want.length && want.every(([k, v]) => l.labels[k] === v));
  assert.ok(found.length <= 1, `one ${name} line for ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** Sum over the lines of a family matching these labels (others free). */
function sum(lines: Line[], name: string, labels: Record<string, string> = {}): number {
  return lines.filter((l) => l.name === name && Object.entries(labels).every(([k, v]) => l.labels[k] === v)).reduce((n, l) => n + l.value, 0);
}

const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 10000) => waitFor(what, ms, f);

const N = 40;
const PAYLOAD = 100;

test('a kafkajs producer and consumer: messages and bytes in and out per topic and in total, requests, errors and times per API', async () => {
  const admin = new Admin({ bootstrapServers: b.bootstrap, requestTimeoutMs: 10000 });
  await admin.createTopics([{ name: 'metered', numPartitions: 2, replicationFactor: 1 }]);
  await admin.close();
  const kafka = new kafkajs.Kafka({ brokers: [b.bootstrap], clientId: 'metrics-test', logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  const messages = Array.from({ length: N }, (_, i) => ({ key: `k${i}`, value: 'v'.repeat(PAYLOAD) }));
  await producer.send({ topic: 'metered', messages: messages.slice(0, N / 2) });
  await producer.send({ topic: 'metered', acks: 1, messages: messages.slice(N / 2) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: 'metrics-group', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'metered', fromBeginning: true });
  let consumed = 0;
  const all = new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async () => {
        if (++consumed === N) resolve();
      },
    });
  });
  await all;
  await consumer.disconnect();

  const m = await scrape();
  // Messages in: the records the leader appended for the client, per topic and in total.
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_messagesin_total', { topic: 'metered' }), N);
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_messagesin_total'), N);
  const bytesIn = value(m, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: 'metered' })!;
  assert.ok(bytesIn >= N * PAYLOAD && bytesIn < N * PAYLOAD * 3, `bytes in ${bytesIn}`);
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_bytesin_total'), bytesIn);
  const bytesOut = value(m, 'kafka_server_brokertopicmetrics_bytesout_total', { topic: 'metered' })!;
  assert.ok(bytesOut >= N * PAYLOAD, `bytes out ${bytesOut}`);
  // One partition append per partition of each send; kafkajs spreads the keys over both.
  const appends = value(m, 'kafka_server_brokertopicmetrics_totalproducerequests_total')!;
  assert.ok(appends >= 2 && appends <= 4, `partition appends ${appends}`);
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_totalproducerequests_total', { topic: 'metered' }), appends);
  assert.ok(value(m, 'kafka_server_brokertopicmetrics_totalfetchrequests_total', { topic: 'metered' })! > 0);
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_failedproducerequests_total'), 0);
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_replicationbytesout_total'), 0, 'no follower fetched');
  // __consumer_offsets appends are the coordinator's, not a client produce: not counted in.
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_messagesin_total', { topic: '__consumer_offsets' }), undefined);

  for (const request of ['Produce', 'Fetch', 'Metadata', 'ApiVersions', 'JoinGroup', 'OffsetCommit']) {
    const requests = sum(m, 'kafka_network_requestmetrics_requests_total', { request });
    assert.ok(requests > 0, `${request} requests counted`);
    // Every request answered is in each time part's histogram, in both forms.
    for (const part of ['totaltimems', 'requestqueuetimems', 'localtimems', 'remotetimems', 'responsequeuetimems', 'responsesendtimems', 'throttletimems']) {
      assert.equal(value(m, `kafka_network_requestmetrics_${part}_count`, { request }), requests, `${part} count of ${request}`);
    }
    assert.equal(value(m, 'fjord_network_request_total_time_seconds_count', { request }), requests);
    assert.equal(value(m, 'fjord_network_request_total_time_seconds_bucket', { request, le: '+Inf' }), requests);
    const p99 = value(m, 'kafka_network_requestmetrics_totaltimems', { request, quantile: '0.99' })!;
    const p50 = value(m, 'kafka_network_requestmetrics_totaltimems', { request, quantile: '0.50' })!;
    assert.ok(p99 > 0 && p99 >= p50, `${request} p50 ${p50} p99 ${p99}`);
  }
  // Requests by version: kafkajs's Produce and Fetch versions.
  assert.ok(m.some((l) => l.name === 'kafka_network_requestmetrics_requests_total' && l.labels.request === 'Produce' && /^\d+$/.test(l.labels.version ?? '')));
  // Errors: NONE per partition answered.
  assert.equal(value(m, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NONE' }), appends);
  // Fetch is also counted as Kafka's FetchConsumer (a consumer, not a follower).
  assert.equal(
    value(m, 'kafka_network_requestmetrics_totaltimems_count', { request: 'FetchConsumer' }),
    value(m, 'kafka_network_requestmetrics_totaltimems_count', { request: 'Fetch' }),
  );
  assert.equal(value(m, 'kafka_network_requestmetrics_totaltimems_count', { request: 'FetchFollower' }), undefined);
  // A consumer's long poll waits: remote time, not local.
  assert.ok(value(m, 'kafka_network_requestmetrics_remotetimems_sum', { request: 'Fetch' })! > 0);
  assert.ok(value(m, 'fjord_network_response_bytes_total', { request: 'Fetch' })! >= bytesOut);
});

test('an error is counted by its Kafka name: produce to a partition that does not exist', async () => {
  const before = await scrape();
  const c = await RawClient.connect(b.port);
  const res = await produce(c, 9, 'metered', 7, batchOf(['x']));
  assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, 3);
  c.close();
  const m = await scrape();
  const name = 'kafka_network_requestmetrics_errors_total';
  const labels = { request: 'Produce', error: 'UNKNOWN_TOPIC_OR_PARTITION' };
  assert.equal((value(m, name, labels) ?? 0) - (value(before, name, labels) ?? 0), 1);
  // An unknown partition is the client's stale view, not the broker failing (Kafka leaves it out).
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_failedproducerequests_total'), 0);
  assert.equal(value(m, 'kafka_server_brokertopicmetrics_messagesin_total'), N);
  // A topic that does not exist gets no series: clients naming random topics cannot grow the families.
  const c2 = await RawClient.connect(b.port);
  assert.equal((await produce(c2, 9, 'no-such-topic', 0, batchOf(['x']))).responses[0]!.partitionResponses[0]!.errorCode, 3);
  c2.close();
  assert.ok(!(await scrape()).some((l) => l.labels.topic === 'no-such-topic'));
});

test('connections per listener: count up while open, down once closed; created and closed totals', async () => {
  const labels = { listener: 'PLAINTEXT', networkProcessor: '0' };
  const count = async () => value(await scrape(), 'kafka_server_socket_server_metrics_connection_count', labels)!;
  // The earlier tests' clients are gone (closed on their side; the broker sees it shortly).
  await until('no connection open', async () => ((await count()) === 0 ? true : undefined));
  const before = await scrape();
  const created0 = value(before, 'kafka_server_socket_server_metrics_connection_creation_total', labels)!;
  const closed0 = value(before, 'kafka_server_socket_server_metrics_connection_close_total', labels)!;
  assert.equal(created0, closed0);
  const clients = await Promise.all([RawClient.connect(b.port), RawClient.connect(b.port)]);
  await until('two connections', async () => ((await count()) === 2 ? true : undefined));
  for (const c of clients) c.close();
  await until('back down', async () => ((await count()) === 0 ? true : undefined));
  const m = await scrape();
  assert.equal(value(m, 'kafka_server_socket_server_metrics_connection_creation_total', labels), created0 + 2);
  assert.equal(value(m, 'kafka_server_socket_server_metrics_connection_close_total', labels), closed0 + 2);
  assert.equal(value(m, 'kafka_server_socket_server_metrics_connection_count', { listener: 'SASL_PLAINTEXT', networkProcessor: '0' }), 0);
});

test('SASL authentications: a wrong password counted as failed, a right one as successful, per listener', async () => {
  const sasl = (password: string) =>
    new Admin({
      bootstrapServers: `127.0.0.1:${saslPort}`,
      requestTimeoutMs: 10000,
      security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'PLAIN', username: 'alice', password } },
    });
  const bad = sasl('wrong');
  await assert.rejects(bad.listTopics(), (e: unknown) => e instanceof KafkaError && e.code === 58);
  await bad.close();
  const good = sasl('alice-secret');
  assert.ok((await good.listTopics()).includes('metered'));
  await good.close();
  const m = await scrape();
  const labels = { listener: 'SASL_PLAINTEXT', networkProcessor: '0' };
  assert.equal(value(m, 'kafka_server_socket_server_metrics_failed_authentication_total', labels), 1);
  assert.equal(value(m, 'kafka_server_socket_server_metrics_successful_authentication_total', labels), 1);
  assert.equal(value(m, 'kafka_server_socket_server_metrics_failed_authentication_total', { listener: 'PLAINTEXT', networkProcessor: '0' }), undefined);
});

test("quotas: a throttled client's throttle time and byte rate, per user and client id; throttle time in the request metrics", async () => {
  await b.broker.services.clientEntities.set('clients/raw-client', { producer_byte_rate: '1000' });
  try {
    const c = await RawClient.connect(b.port);
    const res = await produce(c, 9, 'metered', 0, batchOf(['x'.repeat(1950)]));
    assert.ok(res.throttleTimeMs > 0);
    c.close();
    const m = await scrape();
    const labels = { resource: 'Produce', user: '', clientId: 'raw-client' };
    assert.equal(value(m, 'kafka_server_quota_throttle_time', labels), res.throttleTimeMs);
    assert.equal(value(m, 'fjord_server_quota_throttle_time_ms_total', labels), res.throttleTimeMs);
    assert.ok(value(m, 'kafka_server_quota_byte_rate', labels)! > 500);
    assert.ok(value(m, 'kafka_network_requestmetrics_throttletimems_sum', { request: 'Produce' })! >= res.throttleTimeMs);
  } finally {
    await b.broker.services.clientEntities.set('clients/raw-client', {});
  }
});

test("a deleted topic's series go; the all-topics counts stay", async () => {
  const admin = new Admin({ bootstrapServers: b.bootstrap, requestTimeoutMs: 10000 });
  await admin.deleteTopics(['metered']);
  await admin.close();
  await until('the topic series gone', async () => {
    const m = await scrape();
    return m.some((l) => l.labels.topic === 'metered') ? undefined : m;
  });
  const m = await scrape();
  assert.ok(value(m, 'kafka_server_brokertopicmetrics_messagesin_total')! >= N);
});

test('quantiles from the fixed buckets: interpolated within the bucket that holds the rank; 0 without requests; the last bucket its lower edge', () => {
  const counts = new Float64Array(API_SLOTS * BUCKETS);
  assert.equal(quantile(counts, 3, 0.99), 0);
  const h = new TimeHistograms();
  for (let i = 0; i < 100; i++) h.observe(3, i < 90 ? 0.7 : 7); // 90 in (0.5, 1], 10 in (5, 10]
  assert.equal(quantile(h.counts, 3, 0.5), 0.5 + (0.5 * 50) / 90);
  assert.equal(quantile(h.counts, 3, 0.95), 5 + (5 * 5) / 10);
  assert.equal(h.count(3), 100);
  assert.ok(Math.abs(h.sums[3]! - (90 * 0.7 + 10 * 7)) < 1e-9);
  h.observe(4, 90_000);
  assert.equal(quantile(h.counts, 4, 0.99), 30_000);
});
