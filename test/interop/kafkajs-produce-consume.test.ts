import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { requirePeer } from '../helpers/peers.js';
import { kcatConsume } from './kcat-helpers.js';

const require = createRequire(import.meta.url);
type CodecFactory = () => { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> };
const LZ4Codec = require('kafkajs-lz4') as new () => { codec: CodecFactory };
const codecs = kafkajs.CompressionCodecs as unknown as { [type: number]: CodecFactory };
codecs[kafkajs.CompressionTypes.Snappy] = require('kafkajs-snappy') as CodecFactory;
codecs[kafkajs.CompressionTypes.LZ4] = new LZ4Codec().codec;

let b: TestBroker;
before(async () => {
  b = await startTestBroker();
});
after(() => b.stop());

const client = () => new kafkajs.Kafka({ clientId: 'fjord-test', brokers: [b.bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 5 } });

const CODECS = [
  ['none', kafkajs.CompressionTypes.None],
  ['gzip', kafkajs.CompressionTypes.GZIP],
  ['snappy', kafkajs.CompressionTypes.Snappy],
  ['lz4', kafkajs.CompressionTypes.LZ4],
] as const;

for (const [name, compression] of CODECS) {
  test(`kafkajs idempotent producer with ${name}; kcat reads keys, values and headers back`, async (t) => {
    if (!requirePeer(t, 'kcat')) return;
    const topic = `kjs-${name}`;
    const producer = client().producer({ idempotent: true, allowAutoTopicCreation: true });
    await producer.connect();
    try {
      for (let batch = 0; batch < 5; batch++) {
        const res = await producer.send({
          topic,
          acks: -1,
          compression,
          messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${batch * 20 + i}`, value: `v${batch * 20 + i}`, partition: 0, headers: { h: 'x' } })),
        });
        assert.equal(res[0]!.errorCode, 0);
        assert.equal(res[0]!.baseOffset, String(batch * 20));
      }
    } finally {
      await producer.disconnect();
    }
    const out = await kcatConsume(b.bootstrap, topic, ['-o', 'beginning', '-f', '%k=%s;%h\n']);
    assert.deepEqual(
      out.trim().split('\n'),
      Array.from({ length: 100 }, (_, i) => `k${i}=v${i};h=x`),
    );
  });
}

test('kafkajs consumer (group) reads what the kafkajs producer wrote', async () => {
  const topic = 'kjs-consume';
  const kafka = client();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: Array.from({ length: 50 }, (_, i) => ({ value: `m${i}`, partition: 0 })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: 'kjs-group', maxWaitTimeInMs: 100 });
  await consumer.connect();
  const seen: string[] = [];
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${seen.length} messages consumed`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === 50) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  assert.deepEqual(
    seen,
    Array.from({ length: 50 }, (_, i) => `m${i}`),
  );
});
