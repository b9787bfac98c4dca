/**
 * Per-partition metrics and consumer lag cover every shard's partitions (issue 26): at
 * num.io.threads=3 a user topic's partitions live on two shard workers, yet the scrape shows
 * their log families (size, log start and end, segments), kafka-exporter's partition offsets
 * and a group's lag (records and seconds, read live at scrape time), with the values a
 * single-threaded broker shows for the same records; the scrape's families share one pass over the shards.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { createTopic } from '../handlers/data-plane-helpers.js';
import { shardsOf } from '../../../src/server/broker-services.js';
import { encodeBatch } from '../../../src/protocol/records/index.js';
import { commit, parse, sampleValue, type Sample } from './lag-helpers.js';

const TOPIC = 'spread';
const PARTITIONS = 4;
/** Record i of a partition is stamped BASE + i minutes: an hour ago, a minute apart. */
const BASE = Date.now() - 3_600_000;
const STEP = 60_000;

/** Appends `count` records to `partition` through the seam (whichever thread owns it), stamped from record `first` on. */
async function append(b: TestBroker, partition: number, first: number, count: number): Promise<void> {
  const records = Array.from({ length: count }, (_, i) => ({
    attributes: 0,
    timestampDelta: i * STEP,
    offsetDelta: i,
    key: null,
    value: Buffer.from(`r${first + i}`),
    headers: [],
  }));
  const [r] = await shardsOf(b.broker.services).produce(
    [{ topic: TOPIC, partition, records: encodeBatch({ records, baseTimestamp: BigInt(BASE + first * STEP) }) }],
    {
      requiredAcks: -1,
      origin: 'client',
      produceVersion: 9,
      timeoutMs: 5000,
    },
  );
  assert.equal(r!.errorCode, 0);
}

/**
 * One scrape, in a turn of its own as an HTTP scrape is: the families share one pass per turn of
 * the event loop, and an in-thread append (num.io.threads=1) can complete without leaving the turn.
 */
async function scrape(b: TestBroker): Promise<Sample[]> {
  await new Promise((resolve) => setImmediate(resolve));
  return parse(await b.broker.metrics.metrics());
}

for (const threads of [1, 3]) {
  let b: TestBroker;
  before(async () => {
    b = await startTestBroker({ 'num.io.threads': String(threads), 'metrics.consumer.lag.refresh.ms': '600000', 'offsets.topic.num.partitions': '1' });
    await createTopic(b, TOPIC, PARTITIONS);
    // Partition p holds p + 2 records.
    for (let p = 0; p < PARTITIONS; p++) await append(b, p, 0, p + 2);
    await commit(b.port, TOPIC, 'behind', 1);
  });
  after(() => b.stop());

  test(`at ${threads} thread(s): every partition's log families, whichever shard hosts it`, async () => {
    const shards = shardsOf(b.broker.services);
    if (threads > 1) {
      const hosts = new Set(Array.from({ length: PARTITIONS }, (_, p) => shards.shardOf(TOPIC, p)));
      assert.deepEqual([...hosts].sort(), [1, 2], 'the topic spans both workers, none on shard 0');
    }
    // Count the scrape's asks (background topic syncs post messages too, so count calls, not messages).
    const asks: string[] = [];
    const ask = shards.partitionStates.bind(shards);
    shards.partitionStates = (filter, opts) => {
      asks.push(filter ? 'filtered' : 'all');
      return ask(filter, opts);
    };
    let s: Sample[];
    try {
      s = await scrape(b);
    } finally {
      shards.partitionStates = ask;
    }
    // At 3: one pass over every shard shared by all the partition families, and the group's partitions for its lag.
    assert.deepEqual(asks.sort(), threads > 1 ? ['all', 'filtered'] : [], 'the partition families share one pass; none at 1');
    for (let p = 0; p < PARTITIONS; p++) {
      const labels = { topic: TOPIC, partition: String(p) };
      assert.equal(sampleValue(s, 'kafka_log_log_logendoffset', labels), p + 2, `log end of ${p}`);
      assert.equal(sampleValue(s, 'kafka_log_log_logstartoffset', labels), 0);
      assert.equal(sampleValue(s, 'kafka_log_log_numlogsegments', labels), 1);
      assert.ok((sampleValue(s, 'kafka_log_log_size', labels) ?? 0) > 0, `size of ${p}`);
      assert.equal(sampleValue(s, 'kafka_topic_partition_current_offset', labels), p + 2, `high watermark of ${p}`);
      assert.equal(sampleValue(s, 'kafka_topic_partition_oldest_offset', labels), 0);
      assert.equal(sampleValue(s, 'kafka_topic_partition_leader', labels), 0);
      assert.equal(sampleValue(s, 'kafka_topic_partition_in_sync_replica', labels), 1);
    }
    // Shard 0's internal topic is still there, once.
    assert.ok((sampleValue(s, 'kafka_log_log_size', { topic: '__consumer_offsets', partition: '0' }) ?? 0) > 0);
    // The JSON view (each family's get(), not the preformatted text) reads the same partitions.
    const json = await b.broker.metrics.getMetricsAsJSON();
    for (const name of ['kafka_log_log_logendoffset', 'kafka_topic_partition_current_offset']) {
      const values = json.find((m) => m.name === name)!.values.filter((v) => v.labels.topic === TOPIC);
      assert.deepEqual(
        values.map((v) => [Number(v.labels.partition), v.value]).sort((x, y) => x[0]! - y[0]!),
        Array.from({ length: PARTITIONS }, (_, p) => [p, p + 2]),
        name,
      );
    }
  });

  test(`at ${threads} thread(s): a group's lag on a partition, live at the scrape, and in seconds after the refresh`, async () => {
    const g = { consumergroup: 'behind', topic: TOPIC, partition: '0' };
    let s = await scrape(b);
    assert.equal(sampleValue(s, 'kafka_consumergroup_current_offset', g), 1);
    assert.equal(sampleValue(s, 'kafka_consumergroup_lag', g), 1, 'high watermark 2 - committed 1');
    // New records raise the lag at the next scrape, without a refresh.
    await append(b, 0, 2, 3);
    s = await scrape(b);
    assert.equal(sampleValue(s, 'kafka_consumergroup_lag', g), 4);
    assert.equal(sampleValue(s, 'kafka_consumergroup_lag_sum', { consumergroup: 'behind', topic: TOPIC }), 4);
    await b.broker.observability.consumerLag!.refresh();
    s = await scrape(b);
    const seconds = sampleValue(s, 'kafka_consumergroup_lag_seconds', g);
    const expected = (Date.now() - (BASE + STEP)) / 1000;
    assert.ok(seconds !== undefined && Math.abs(seconds - expected) < 5, `lag_seconds ${seconds}, expected about ${expected} (record 1's age)`);
  });
}
