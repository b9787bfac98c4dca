/**
 * The broker-state metrics of one in-process broker (embedded mode), read as Prometheus text from
 * `broker.metrics.metrics()`: replica manager counts after topics are created, log metrics per
 * partition after producing, the group coordinator's counts once a group joins, the embedded
 * controller's gauges, log flushes, and metrics.partition.level.enable=false dropping the
 * per-partition families.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { parsePromText, samples, value, type PromSample } from './state-prom-text.js';

let b: TestBroker;
let admin: Admin;
let producer: Producer;

const scrape = async (tb: TestBroker = b): Promise<PromSample[]> => parsePromText(await tb.broker.metrics.metrics());

before(async () => {
  b = await startTestBroker({ 'offsets.topic.num.partitions': '2' });
  admin = new Admin({ bootstrapServers: b.bootstrap });
  producer = new Producer({ bootstrapServers: b.bootstrap });
});

after(async () => {
  await producer?.close();
  await admin?.close();
  await b?.stop();
});

test('replica manager and controller gauges count the partitions of created topics', async () => {
  let m = await scrape();
  assert.equal(value(m, 'kafka_server_replicamanager_partitioncount'), 0);
  assert.equal(value(m, 'kafka_controller_kafkacontroller_activecontrollercount'), 1, 'embedded: the broker is its own controller');
  await admin.createTopics([
    { name: 'a', numPartitions: 3, replicationFactor: 1 },
    { name: 'b', numPartitions: 2, replicationFactor: 1, configs: { 'min.insync.replicas': '2' } },
  ]);
  m = await scrape();
  assert.equal(value(m, 'kafka_server_replicamanager_partitioncount'), 5);
  assert.equal(value(m, 'kafka_server_replicamanager_leadercount'), 5);
  assert.equal(value(m, 'kafka_server_replicamanager_underreplicatedpartitions'), 0);
  // One replica: topic a (min ISR 1) is at its minimum, topic b (min ISR 2) below it.
  assert.equal(value(m, 'kafka_server_replicamanager_atminisrpartitioncount'), 3);
  assert.equal(value(m, 'kafka_server_replicamanager_underminisrpartitioncount'), 2);
  assert.equal(value(m, 'kafka_server_replicamanager_offlinereplicacount'), 0);
  assert.equal(value(m, 'kafka_server_replicamanager_isrshrinks_total'), 0);
  assert.equal(value(m, 'kafka_controller_kafkacontroller_globaltopiccount'), 2);
  assert.equal(value(m, 'kafka_controller_kafkacontroller_globalpartitioncount'), 5);
  assert.equal(value(m, 'kafka_controller_kafkacontroller_offlinepartitionscount'), 0);
  assert.equal(value(m, 'kafka_controller_kafkacontroller_activebrokercount'), 1);
  assert.equal(value(m, 'kafka_log_logmanager_offlinelogdirectorycount'), 0);
  assert.equal(value(m, 'kafka_log_logmanager_logdirectoryoffline', { logDirectory: b.dir }), 0);
  // Embedded mode has no ZooKeeper session nor controller events.
  assert.equal(samples(m, 'kafka_server_sessionexpirelistener_sessionstate').length, 0);
  assert.equal(samples(m, 'kafka_controller_controllereventmanager_eventqueuesize').length, 0);
});

test('log metrics per partition follow produced records; flushes are counted', async () => {
  await admin.createTopics([{ name: 'logs', numPartitions: 2, replicationFactor: 1, configs: { 'flush.messages': '1' } }]);
  const before = value(await scrape(), 'kafka_log_logflushstats_logflushrateandtimems_count');
  for (let i = 0; i < 5; i++) await producer.send({ topic: 'logs', partition: 0, value: `v${i}` });
  const m = await scrape();
  assert.equal(value(m, 'kafka_log_log_logendoffset', { topic: 'logs', partition: '0' }), 5);
  assert.equal(value(m, 'kafka_log_log_logstartoffset', { topic: 'logs', partition: '0' }), 0);
  assert.ok(value(m, 'kafka_log_log_size', { topic: 'logs', partition: '0' }) > 0);
  assert.equal(value(m, 'kafka_log_log_numlogsegments', { topic: 'logs', partition: '0' }), 1);
  assert.equal(value(m, 'kafka_log_log_logendoffset', { topic: 'logs', partition: '1' }), 0);
  assert.equal(value(m, 'kafka_log_log_size', { topic: 'logs', partition: '1' }), 0);
  // Written by the family itself (registry.ts' PreformattedFamily): one HELP and TYPE, the JSON view agrees.
  const text = await b.broker.metrics.metrics();
  assert.equal(text.match(/^# TYPE kafka_log_log_logendoffset gauge$/gm)?.length, 1);
  const json = (await b.broker.metrics.getMetricsAsJSON()).find((f) => f.name === 'kafka_log_log_logendoffset');
  assert.equal(json?.values.find((v) => v.labels.topic === 'logs' && v.labels.partition === 0)?.value, 5);
  assert.ok(value(m, 'kafka_log_logflushstats_logflushrateandtimems_count') >= before + 5, 'flush.messages=1 flushes each append');
  assert.ok(value(m, 'kafka_log_logflushstats_logflushrateandtimems_sum') > 0);
});

test('group coordinator counts a joined group and its committed offsets', async () => {
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, groupId: 'g-state', autoOffsetReset: 'earliest', heartbeatIntervalMs: 200 });
  try {
    consumer.subscribe(['logs']);
    const deadline = Date.now() + 15_000;
    let got = 0;
    while (got < 5) {
      assert.ok(Date.now() < deadline, 'the consumer did not get the records in time');
      got += (await consumer.poll(200)).length;
    }
    await consumer.commitSync();
    // The commit also makes the offset history topic (issue 25): written just after the commit's
    // answer, with two partitions as __consumer_offsets; hosted here once it is.
    const historyDeadline = Date.now() + 10_000;
    while (value(await scrape(), 'kafka_server_replicamanager_partitioncount') !== 11) {
      assert.ok(Date.now() < historyDeadline, 'the offset history partitions were not hosted');
      await new Promise((r) => setTimeout(r, 20));
    }
    const m = await scrape();
    assert.equal(value(m, 'kafka_coordinator_group_groupmetadatamanager_numgroups'), 1);
    assert.equal(value(m, 'kafka_coordinator_group_groupmetadatamanager_numgroupsstable'), 1);
    assert.equal(value(m, 'kafka_coordinator_group_groupmetadatamanager_numgroupsempty'), 0);
    assert.equal(value(m, 'kafka_coordinator_group_groupmetadatamanager_numoffsets'), 2);
    assert.equal(value(m, 'kafka_coordinator_group_groupmetadatamanager_partitionsloading'), 0);
    assert.equal(value(m, 'kafka_coordinator_transaction_transactionstatemanager_numtransactions', { state: 'Ongoing' }), 0);
    // __consumer_offsets' two partitions are hosted too, and __consumer_offsets_history's two.
    assert.equal(value(m, 'kafka_server_replicamanager_partitioncount'), 11);
    assert.ok(b.broker.services.metadata.topic('__consumer_offsets_history'));
  } finally {
    await consumer.close();
  }
  const m = await scrape();
  assert.equal(value(m, 'kafka_coordinator_group_groupmetadatamanager_numgroupsempty'), 1, 'the group is Empty once its member left');
});

test('metrics.partition.level.enable=false drops the per-partition families only', async () => {
  const m = await scrape();
  assert.ok(samples(m, 'kafka_log_log_size').length >= 9, 'on by default: one sample per hosted partition');
  const off = await startTestBroker({ 'metrics.partition.level.enable': 'false' });
  const offAdmin = new Admin({ bootstrapServers: off.bootstrap });
  try {
    await offAdmin.createTopics([{ name: 'quiet', numPartitions: 4, replicationFactor: 1 }]);
    const text = await off.broker.metrics.metrics();
    assert.doesNotMatch(text, /^kafka_log_log_/m);
    const mo = parsePromText(text);
    assert.equal(value(mo, 'kafka_server_replicamanager_partitioncount'), 4);
    assert.equal(value(mo, 'kafka_log_logmanager_offlinelogdirectorycount'), 0);
  } finally {
    await offAdmin.close();
    await off.stop();
  }
});
