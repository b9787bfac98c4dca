/**
 * docs/operations.md lists every metric family a broker serves: one in-process broker (embedded
 * mode) with its metrics listener, scraped over HTTP as Prometheus does, after a little traffic.
 * Fails when a served family is missing from the doc's tables, or a documented one is neither
 * served here nor one of the cluster-mode families (NOT_ON_ONE_BROKER, checked on a cluster by
 * state-gaps-cluster.test.ts). Also Kafka's BrokerState gauge through start and stop.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { Producer } from '../../../src/client/index.js';
import { BrokerHealth } from '../../../src/server/metrics/health.js';
import { brokerStateOf } from '../../../src/server/metrics/kafka-server-metrics.js';
import { NOT_ON_ONE_BROKER, documentedFamilies, expandBraces, servedFamilies } from './operations-doc.js';
import { parsePromText, value } from './state-prom-text.js';

let b: TestBroker;

before(async () => {
  b = await startTestBroker({ 'metrics.listener': 'http://127.0.0.1:0' });
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  try {
    await producer.send({ topic: 'doc-check', value: 'v' });
  } finally {
    await producer.close();
  }
});
after(async () => {
  await b?.stop();
});

const scrapeHttp = async (): Promise<string> => {
  const res = await fetch(`http://127.0.0.1:${b.broker.observability.port}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
};

test('every family the broker serves is in docs/operations.md, and every documented one is served', async () => {
  const text = await scrapeHttp();
  const served = servedFamilies(text);
  const documented = documentedFamilies();
  assert.ok(served.size > 100, `${served.size} families served`);
  const undocumented = [...served].filter((name) => !documented.has(name)).sort();
  assert.deepEqual(undocumented, [], 'served but missing from the tables of docs/operations.md');
  const unserved = [...documented.keys()].filter((name) => !served.has(name) && !(name in NOT_ON_ONE_BROKER)).sort();
  assert.deepEqual(
    unserved.map((n) => `${n} (docs/operations.md:${documented.get(n)})`),
    [],
    'documented but not served (add the reason to NOT_ON_ONE_BROKER if it is cluster-only)',
  );
  const stale = Object.keys(NOT_ON_ONE_BROKER).filter((n) => served.has(n) || !documented.has(n));
  assert.deepEqual(stale, [], 'NOT_ON_ONE_BROKER names a family served here, or one the doc no longer lists');
});

test("the doc's {a,b} alternatives expand to each name", () => {
  assert.deepEqual(expandBraces('x_{a,b}_y_{1,2}'), ['x_a_y_1', 'x_a_y_2', 'x_b_y_1', 'x_b_y_2']);
  const doc = documentedFamilies('| `nodejs_heap_size_{total,used}_bytes`, `process_open_fds` | gauge |\n| `not_a_metric` |\n`kafka_outside_a_table`\n');
  assert.deepEqual([...doc.keys()], ['nodejs_heap_size_total_bytes', 'nodejs_heap_size_used_bytes', 'process_open_fds']);
});

test('BrokerState: 3 on a running broker; 1 before start-up is over, 7 once stopping', async () => {
  assert.equal(value(parsePromText(await scrapeHttp()), 'kafka_server_kafkaserver_brokerstate'), 3);
  const h = new BrokerHealth();
  assert.equal(brokerStateOf(h), 1);
  h.started = true;
  assert.equal(brokerStateOf(h), 3);
  h.started = false;
  assert.equal(brokerStateOf(h), 7);
  assert.deepEqual(h.readiness().missing, ['log recovery', 'start-up'], 'readiness reads the same flag');
});
