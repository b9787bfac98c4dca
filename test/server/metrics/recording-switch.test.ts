/**
 * metrics.recording.enable=false: a broker that produces and serves fetches as usual but records
 * no request metrics and no broker topic metrics (their families are absent from the scrape, and
 * the stats behind them stay at zero), while the other families (logs, replica manager) remain.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { parsePromText, value } from './state-prom-text.js';

/** The families metrics.recording.enable turns off (request-metrics.ts, topic-metrics.ts). */
const RECORDED = /^(kafka_network_requestmetrics_|fjord_network_request_|fjord_network_response_bytes|kafka_server_brokertopicmetrics_)/;
const N = 20;

let b: TestBroker;
before(async () => {
  b = await startTestBroker({ 'metrics.recording.enable': 'false', 'metrics.listener': 'http://127.0.0.1:0', 'offsets.topic.num.partitions': '1' });
});
after(async () => {
  await b?.stop();
});

test('recording off: produce and consume work, no request or topic family is exported, nothing is counted', async () => {
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, groupId: 'g-off', autoOffsetReset: 'earliest' });
  try {
    await admin.createTopics([{ name: 'quiet', numPartitions: 1, replicationFactor: 1 }]);
    for (let i = 0; i < N; i++) await producer.send({ topic: 'quiet', partition: 0, value: `v${i}` });
    consumer.assign([{ topic: 'quiet', partition: 0 }]);
    let consumed = 0;
    const deadline = Date.now() + 15_000;
    while (consumed < N && Date.now() < deadline) consumed += (await consumer.poll(200)).length;
    assert.equal(consumed, N, 'every record produced is consumed');
  } finally {
    await consumer.close();
    await producer.close();
    await admin.close();
  }

  // Scraped over HTTP, as Prometheus would.
  const res = await fetch(`http://127.0.0.1:${b.broker.observability.port}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  const lines = parsePromText(text);
  assert.deepEqual(
    lines.filter((l) => RECORDED.test(l.name)).map((l) => l.name),
    [],
  );
  assert.doesNotMatch(text, /^# (HELP|TYPE) (kafka_network_requestmetrics_|kafka_server_brokertopicmetrics_)/m, 'the families are absent, not zero');
  // The rest of the metrics are there: the log's end offset shows the records produced.
  assert.equal(value(lines, 'kafka_log_log_logendoffset', { topic: 'quiet', partition: '0' }), N);
  assert.equal(value(lines, 'kafka_server_replicamanager_partitioncount'), 2);
  assert.ok(lines.some((l) => l.name === 'process_cpu_seconds_total'));
  // Nothing was recorded behind the families either: the hot paths skipped every step.
  const { requestStats, topicStats } = b.broker.observability;
  assert.equal(
    requestStats.requests.reduce((a, n) => a + n, 0),
    0,
  );
  assert.equal(
    requestStats.times.reduce((a, h) => a + h.counts.reduce((x, n) => x + n, 0), 0),
    0,
  );
  assert.equal(
    requestStats.errors.reduce((a, n) => a + n, 0),
    0,
  );
  assert.equal(topicStats.all.messagesIn + topicStats.all.totalFetchRequests + topicStats.all.bytesOut, 0);
  assert.equal([...topicStats.entries()].length, 0);
});
