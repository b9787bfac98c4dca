import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { requirePeer } from '../helpers/peers.js';
import { kcatConsume, kcatProduce } from './kcat-helpers.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker();
});
after(() => b.stop());

for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
  test(`kcat produces and consumes with ${codec} compression, keys and headers`, async (t) => {
    if (!requirePeer(t, 'kcat')) return;
    const topic = `kcat-${codec}`;
    const lines = Array.from({ length: 500 }, (_, i) => `key${i}:value-${codec}-${i}-${'x'.repeat(i % 50)}`);
    await kcatProduce(b.bootstrap, topic, lines.join('\n') + '\n', ['-z', codec, '-K', ':', '-H', 'h1=v1', '-H', 'h2=v2', '-p', '0']);
    const out = await kcatConsume(b.bootstrap, topic, ['-o', 'beginning', '-f', '%k|%s|%h|%o\n']);
    const rows = out.trim().split('\n');
    assert.equal(rows.length, 500);
    rows.forEach((row, i) => {
      const [k, v, h, o] = row.split('|');
      assert.equal(k, `key${i}`);
      assert.equal(v, `value-${codec}-${i}-${'x'.repeat(i % 50)}`);
      assert.equal(h, 'h1=v1,h2=v2');
      assert.equal(o, String(i));
    });
  });
}

test('kcat -o beginning | end | <offset> | s@<timestamp>', async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const topic = 'kcat-offsets';
  await kcatProduce(b.bootstrap, topic, 'a\nb\nc\n', ['-p', '0']);
  const split = Date.now() + 1;
  // Make sure the next batch's CreateTime is strictly after `split`.
  while (Date.now() <= split) await new Promise((r) => setTimeout(r, 2));
  await kcatProduce(b.bootstrap, topic, 'd\ne\n', ['-p', '0']);
  assert.equal(await kcatConsume(b.bootstrap, topic, ['-o', 'beginning', '-f', '%s\n']), 'a\nb\nc\nd\ne\n');
  assert.equal(await kcatConsume(b.bootstrap, topic, ['-o', '3', '-f', '%s\n']), 'd\ne\n');
  assert.equal(await kcatConsume(b.bootstrap, topic, ['-o', 'end', '-f', '%s\n']), '');
  assert.equal(await kcatConsume(b.bootstrap, topic, ['-o', '-2', '-f', '%s\n']), 'd\ne\n');
  assert.equal(await kcatConsume(b.bootstrap, topic, ['-o', `s@${split}`, '-f', '%s\n']), 'd\ne\n');
});

test('kcat produces to several partitions and reads them all back', async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const topic = 'kcat-multi';
  await b.broker.services.metadata.createTopic({ name: topic, numPartitions: 4, replicationFactor: 1 });
  await b.broker.services.replicaManager.syncTopic(topic);
  const lines = Array.from({ length: 400 }, (_, i) => `k${i}:v${i}`).join('\n') + '\n';
  await kcatProduce(b.bootstrap, topic, lines, ['-K', ':']);
  const out = await kcatConsume(b.bootstrap, topic, ['-o', 'beginning', '-f', '%p %s\n']);
  const rows = out.trim().split('\n');
  assert.equal(rows.length, 400);
  assert.deepEqual(new Set(rows.map((r) => r.split(' ')[1])), new Set(Array.from({ length: 400 }, (_, i) => `v${i}`)));
  assert.ok(new Set(rows.map((r) => r.split(' ')[0])).size > 1);
});
