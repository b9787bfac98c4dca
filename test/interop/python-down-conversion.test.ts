/**
 * kafka-python pinned to old protocol versions reads v2 gzip batches through down-conversion:
 * api_version (0, 10, 1) fetches with v3 (magic 1), (0, 9) with v1 (magic 0). Each stored
 * batch (500 records, a few KB of gzip) fits max_partition_fetch_bytes (16 KiB) but converts to
 * about 60 KB, so every response stops at the byte budget in the middle of a batch: the consumer
 * only gets all 2,000 records in order if each response ends on a whole message and the next
 * fetch, from inside the same batch, resumes right after it (records below the fetch offset are
 * left out, as Kafka does).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { RawClient } from '../helpers/raw-client.js';
import { run } from '../helpers/run.js';
import { CompressionType, encodeBatch } from '../../src/protocol/records/index.js';
import { createTopic, produce } from '../server/handlers/data-plane-helpers.js';

let b: TestBroker;
const TOPIC = 'old-fetchers';
const RECORDS = 2000;

before(async () => {
  b = await startTestBroker();
  await createTopic(b, TOPIC);
  const c = await RawClient.connect(b.port);
  try {
    for (let start = 0; start < RECORDS; start += 500) {
      const batch = encodeBatch({
        records: Array.from({ length: 500 }, (_, i) => ({
          attributes: 0,
          timestampDelta: i,
          offsetDelta: i,
          key: Buffer.from(`k${start + i}`),
          value: Buffer.from(`v${start + i}-${'x'.repeat(100)}`),
          headers: [],
        })),
        baseTimestamp: 1_700_000_000_000n,
        compression: CompressionType.Gzip,
      });
      const res = await produce(c, 3, TOPIC, 0, batch);
      assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, 0);
    }
  } finally {
    c.close();
  }
});
after(() => b.stop());

const CONSUME = `
import sys, json
from kafka import KafkaConsumer, TopicPartition
bootstrap, topic, api, n = sys.argv[1], sys.argv[2], tuple(int(x) for x in sys.argv[3].split('.')), int(sys.argv[4])
c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000, api_version=api, max_partition_fetch_bytes=16384)
tp = TopicPartition(topic, 0)
c.assign([tp])
c.seek(tp, 0)
out = []
for m in c:
    out.append([m.offset, m.key.decode(), m.value.decode()[:8]])
    if len(out) == n: break
c.close()
print(json.dumps(out))
`;

for (const api of ['0.10.1', '0.9']) {
  test(`kafka-python api_version ${api}: down-converted gzip batches arrive whole and in order within max_partition_fetch_bytes, resuming inside batches`, async (t) => {
    if (!requirePeer(t, 'python3-kafka')) return;
    const res = await run(PYTHON, ['-c', CONSUME, b.bootstrap, TOPIC, api, String(RECORDS)], { timeoutMs: 120_000 });
    assert.equal(res.code, 0, res.stderr);
    const got = JSON.parse(res.stdout) as [number, string, string][];
    assert.equal(got.length, RECORDS);
    got.forEach(([offset, key, value], i) => {
      assert.equal(offset, i);
      assert.equal(key, `k${i}`);
      assert.equal(value, `v${i}-xxxxxxx`.slice(0, 8));
    });
  });
}
