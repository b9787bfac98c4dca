import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec, MetadataRequestCodec, MetadataResponseCodec } from '../../../src/protocol/messages/index.js';
import { batchOf, createTopic, fetchOne, produce } from '../handlers/data-plane-helpers.js';

// Two windows of one second: a new rate is measured over one second, so a burst of twice the
// bound is throttled for one second (Kafka's default 11 windows would allow a 10 s burst first).
let b: TestBroker;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false', 'quota.window.num': '2', 'quota.window.size.seconds': '1' });
  await createTopic(b, 'q', 1);
});
after(async () => {
  await b.stop();
});

const setQuota = (path: string, configs: Record<string, string>): Promise<void> => b.broker.services.clientEntities.set(path, configs);
const bigBatch = (bytes: number): Buffer => batchOf(['x'.repeat(bytes)]);

async function apiVersionsAnsweredAfter(c: RawClient): Promise<number> {
  const t = Date.now();
  await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
  return Date.now() - t;
}

test('no quota: throttle_time_ms 0 and nothing muted', async () => {
  const c = await RawClient.connect(b.port);
  const res = await produce(c, 9, 'q', 0, bigBatch(5000));
  assert.equal(res.throttleTimeMs, 0);
  assert.ok((await apiVersionsAnsweredAfter(c)) < 500);
  c.close();
});

test('produce over producer_byte_rate: appended, answered at once with the throttle time, then the connection is muted', async () => {
  await setQuota('clients/raw-client', { producer_byte_rate: '1000' });
  const c = await RawClient.connect(b.port);
  const t0 = Date.now();
  const res = await produce(c, 9, 'q', 0, bigBatch(1950));
  const answeredIn = Date.now() - t0;
  const p = res.responses[0]!.partitionResponses[0]!;
  assert.equal(p.errorCode, ErrorCode.NONE, 'appended regardless');
  // ~2000 bytes over 1 s against 1000/s: (2 - 1) × 1000 ms.
  assert.ok(res.throttleTimeMs >= 900 && res.throttleTimeMs <= 1200, `throttle ${res.throttleTimeMs}`);
  assert.ok(answeredIn < res.throttleTimeMs, `the response came at once (${answeredIn} ms)`);
  const next = await apiVersionsAnsweredAfter(c);
  assert.ok(answeredIn + next >= res.throttleTimeMs - 50, `the next request waited the throttle (${answeredIn + next} ms)`);
  c.close();

  // Another client id on the same broker is not limited.
  await setQuota('clients/raw-client', {});
  const other = await RawClient.connect(b.port);
  assert.equal((await produce(other, 9, 'q', 0, bigBatch(5000))).throttleTimeMs, 0, 'the quota removed at run time no longer applies');
  other.close();
});

test('pipelined produces over producer_byte_rate: the connection is muted as the first is handed over, so the second is read after its throttle', async () => {
  await setQuota('clients/raw-client', { producer_byte_rate: '1000' });
  const c = await RawClient.connect(b.port);
  const t0 = Date.now();
  const timed = (bytes: number) => produce(c, 9, 'q', 0, bigBatch(bytes)).then((res) => ({ res, at: Date.now() - t0 }));
  // Both sent before either is answered, as a producer with several requests in flight does.
  const [first, second] = await Promise.all([timed(1950), timed(1950)]);
  assert.ok(first.res.throttleTimeMs >= 900, `first throttled: ${first.res.throttleTimeMs} ms`);
  assert.ok(first.at < first.res.throttleTimeMs, `the first answered at once (${first.at} ms)`);
  // Read while the first was being appended (on a shard worker at num.io.threads > 1), the
  // second would be counted at once: answered within milliseconds, with twice the throttle.
  assert.ok(second.at >= first.res.throttleTimeMs - 50, `the second was read after the first's throttle: answered at ${second.at} ms`);
  c.close();
  await setQuota('clients/raw-client', {});
});

test('a pre-KIP-219 produce (v5) gets its response only after the throttle time', async () => {
  await setQuota('clients/raw-client', { producer_byte_rate: '1000' });
  const c = await RawClient.connect(b.port);
  const t0 = Date.now();
  const res = await produce(c, 5, 'q', 0, bigBatch(1950));
  const answeredIn = Date.now() - t0;
  assert.ok(res.throttleTimeMs >= 900, `throttle ${res.throttleTimeMs}`);
  assert.ok(answeredIn >= res.throttleTimeMs - 20, `held back ${answeredIn} ms`);
  c.close();
  await setQuota('clients/raw-client', {});
});

test('fetch over consumer_byte_rate: an empty answer with the throttle time; fetch.max.bytes is capped to the quota window', async () => {
  await createTopic(b, 'qf', 1);
  const writer = await RawClient.connect(b.port);
  for (let i = 0; i < 4; i++) await produce(writer, 9, 'qf', 0, bigBatch(600));
  writer.close();
  await setQuota('clients/raw-client', { consumer_byte_rate: '1000' });
  const c = await RawClient.connect(b.port);
  // Cap: 1000 × (2 − 1) × 1 s = 1000 bytes, so one ~680-byte batch of the four fits.
  const first = await fetchOne(c, 12, 'qf', 0, 0, { maxBytes: 1 << 20 });
  const records = first.responses[0]!.partitions[0]!.records!;
  assert.equal(first.throttleTimeMs, 0);
  assert.ok(records.length > 600 && records.length < 1000, `one batch: ${records.length} bytes`);
  const second = await fetchOne(c, 12, 'qf', 0, 1, { maxBytes: 1 << 20 });
  assert.ok(second.throttleTimeMs > 0, 'over the quota');
  assert.deepEqual(second.responses, [], 'empty answer');
  assert.equal(second.errorCode, ErrorCode.NONE);
  c.close();
  await setQuota('clients/raw-client', {});
});

test('request_percentage throttles any API and the answer carries the throttle time', async () => {
  await setQuota('users/ANONYMOUS', { request_percentage: '0.0001' });
  const c = await RawClient.connect(b.port);
  const res = await c.request(3, MetadataRequestCodec, MetadataResponseCodec, 12, { topics: null, allowAutoTopicCreation: false });
  assert.ok(res.throttleTimeMs > 0, `metadata throttle ${res.throttleTimeMs}`);
  c.close();
  await setQuota('users/ANONYMOUS', {});
  const d = await RawClient.connect(b.port);
  const again = await d.request(3, MetadataRequestCodec, MetadataResponseCodec, 12, { topics: null, allowAutoTopicCreation: false });
  assert.equal(again.throttleTimeMs, 0);
  d.close();
});
