import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { startTestBroker } from '../helpers/broker.js';
import { requirePeer } from '../helpers/peers.js';
import { Admin, Consumer, Producer, partitionForKey, type ConsumerRecord } from '../../src/client/index.js';

/** Async: the broker runs in this process, so a blocking spawnSync would starve it. */
function run(cmd: string, args: string[], input = ''): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

test("kcat reads what the Fjord producer wrote (snappy, keys, headers) and the Fjord consumer reads kcat's", async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const b = await startTestBroker();
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: b.bootstrap, compression: 'snappy' });
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, autoOffsetReset: 'earliest' });
  try {
    await admin.createTopics([{ name: 'x', numPartitions: 3 }]);
    for (let i = 0; i < 6; i++) await producer.send({ topic: 'x', key: `key${i}`, value: `val${i}`, headers: { h: `v${i}` } });
    const out = await run('kcat', ['-b', b.bootstrap, '-C', '-t', 'x', '-e', '-q', '-f', '%k=%s@%p;%h\n']);
    assert.equal(out.status, 0, out.stderr);
    const lines = out.stdout.trim().split('\n').sort();
    assert.equal(lines.length, 6);
    for (let i = 0; i < 6; i++) assert.ok(lines.includes(`key${i}=val${i}@${partitionForKey(Buffer.from(`key${i}`), 3)};h=v${i}`), lines.join('|'));

    // kcat's librdkafka uses consistent_random by default; ask for murmur2 to compare with Java.
    const input = Array.from({ length: 5 }, (_, i) => `k${i}:from-kcat-${i}`).join('\n') + '\n';
    const prod = await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'x', '-K', ':', '-X', 'partitioner=murmur2_random', '-z', 'lz4'], input);
    assert.equal(prod.status, 0, prod.stderr);
    consumer.assign([0, 1, 2].map((partition) => ({ topic: 'x', partition })));
    const got: ConsumerRecord[] = [];
    const deadline = Date.now() + 10000;
    while (got.length < 11 && Date.now() < deadline) got.push(...(await consumer.poll(500)));
    const fromKcat = got.filter((r) => r.value?.toString().startsWith('from-kcat'));
    assert.equal(fromKcat.length, 5);
    for (const r of fromKcat) assert.equal(r.partition, partitionForKey(r.key!, 3), 'librdkafka murmur2 agrees with ours');
  } finally {
    await consumer.close();
    await producer.close();
    await admin.close();
    await b.stop();
  }
});

test('a kafkajs consumer in a group reads what the Fjord producer wrote; Fjord reads kafkajs', { timeout: 60000 }, async () => {
  const b = await startTestBroker();
  const kafka = new Kafka({ brokers: [b.bootstrap], logLevel: logLevel.NOTHING });
  const producer = new Producer({ bootstrapServers: b.bootstrap, compression: 'gzip' });
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  // A short fetch wait: disconnect waits for the fetch in flight (kafkajs's default: 5 s once drained).
  const kjsConsumer = kafka.consumer({ groupId: 'kjs', maxWaitTimeInMs: 100 });
  const kjsProducer = kafka.producer();
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, groupId: 'fjord', autoOffsetReset: 'earliest' });
  try {
    await admin.createTopics([{ name: 'mixed', numPartitions: 2 }]);
    await Promise.all(Array.from({ length: 20 }, (_, i) => producer.send({ topic: 'mixed', key: `k${i}`, value: `v${i}` })));
    await kjsConsumer.connect();
    await kjsConsumer.subscribe({ topic: 'mixed', fromBeginning: true });
    const seen = new Set<string>();
    await new Promise<void>((resolve, reject) => {
      kjsConsumer
        .run({
          eachMessage: async ({ message }) => {
            seen.add(message.value!.toString());
            if (seen.size === 20) resolve();
          },
        })
        .catch(reject);
    });
    assert.equal(seen.size, 20);
    await kjsProducer.connect();
    await kjsProducer.send({ topic: 'mixed', messages: [{ key: 'a', value: 'from-kafkajs' }] });
    consumer.subscribe(['mixed']);
    const got: string[] = [];
    const deadline = Date.now() + 15000;
    while (!got.includes('from-kafkajs') && Date.now() < deadline) got.push(...(await consumer.poll(500)).map((r) => r.value!.toString()));
    assert.equal(got.length, 21);
  } finally {
    await kjsConsumer.disconnect();
    await kjsProducer.disconnect();
    await consumer.close();
    await producer.close();
    await admin.close();
    await b.stop();
  }
});
