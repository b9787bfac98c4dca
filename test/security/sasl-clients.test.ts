// Real clients over SASL_PLAINTEXT: kcat and confluent-kafka (librdkafka) with SCRAM-SHA-512 and
// PLAIN, kafkajs with scram-sha-256 and plain, kafka-python with PLAIN; wrong password and unknown
// user fail with SASL_AUTHENTICATION_FAILED while the broker keeps serving; hostile input
// cannot be sent before authentication.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { kcat } from '../interop/kcat-helpers.js';
import { CONFLUENT_SASL_SCRIPT, kcatSasl as kcatSaslArgs } from '../interop/sasl-client-helpers.js';
import { encodeRequest } from '../helpers/raw-client.js';
import { v2Bomb } from '../helpers/bombs.js';
import { CompressionType } from '../../src/protocol/records/index.js';
import { ProduceRequestCodec, SaslHandshakeRequestCodec } from '../../src/protocol/messages/index.js';
import { Admin } from '../../src/client/index.js';
import { alterUserScramCredentials } from '../../src/client/admin-scram.js';

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_plainy="plain-secret";';
let b: TestBroker;
let sasl: string;
let admin: Admin;

before(async () => {
  b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'connection.failed.authentication.delay.ms': '100',
  });
  sasl = `127.0.0.1:${b.broker.boundPorts().get('SASL_PLAINTEXT')!}`;
  admin = new Admin({ bootstrapServers: b.bootstrap });
  await alterUserScramCredentials(admin.cluster, [
    { user: 'alice', mechanism: 'SCRAM-SHA-512', op: 'upsert', password: 'alice-512', iterations: 8192 },
    { user: 'alice', mechanism: 'SCRAM-SHA-256', op: 'upsert', password: 'alice-256' },
  ]);
});
after(async () => {
  await admin.close();
  await b.stop();
});

const kcatSasl = (mechanism: string, user: string, password: string): string[] => kcatSaslArgs(sasl, 'SASL_PLAINTEXT', mechanism, user, password);

for (const [mechanism, user, password] of [
  ['SCRAM-SHA-512', 'alice', 'alice-512'],
  ['PLAIN', 'plainy', 'plain-secret'],
] as const) {
  test(`kcat over SASL_PLAINTEXT with ${mechanism}: produce and consume; a wrong password fails with the broker's message`, { timeout: 120_000 }, async (t) => {
    if (!requirePeer(t, 'kcat')) return;
    const topic = `kcat-${mechanism.toLowerCase()}`;
    await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
    const p = await kcat(['-P', ...kcatSasl(mechanism, user, password), '-t', topic], 'one\ntwo\nthree\n');
    assert.equal(p.code, 0, p.stderr);
    const c = await kcat(['-C', ...kcatSasl(mechanism, user, password), '-t', topic, '-e', '-o', 'beginning']);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.toString(), 'one\ntwo\nthree\n');
    const bad = await kcat(['-L', ...kcatSasl(mechanism, user, 'wrong'), '-m', '5']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /Authentication failed/);
  });
}

for (const [mechanism, user, password] of [
  ['SCRAM-SHA-512', 'alice', 'alice-512'],
  ['PLAIN', 'plainy', 'plain-secret'],
] as const) {
  test(`confluent-kafka over SASL_PLAINTEXT with ${mechanism}: produce, group consume; wrong password is an authentication error`, {
    timeout: 180_000,
  }, async (t) => {
    if (!requirePeer(t, 'python3-confluent-kafka')) return;
    const topic = `ck-${mechanism.toLowerCase()}`;
    const ok = await run(PYTHON, ['-c', CONFLUENT_SASL_SCRIPT, sasl, mechanism, user, password, topic], { timeoutMs: 150_000 });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trim(), Array.from({ length: 10 }, (_, i) => `v${i}`).join(','));
    const bad = await run(PYTHON, ['-c', CONFLUENT_SASL_SCRIPT, sasl, mechanism, user === 'alice' ? 'alice' : 'nobody', 'wrong', '-'], { timeoutMs: 60_000 });
    assert.equal(bad.code, 0, bad.stderr);
    assert.match(bad.stdout, /^AUTH_ERROR/);
    assert.match(bad.stdout, /Authentication failed/);
  });
}

for (const [mechanism, user, password] of [
  ['scram-sha-256', 'alice', 'alice-256'],
  ['plain', 'plainy', 'plain-secret'],
] as const) {
  test(`kafkajs with SASL ${mechanism}: produce and consume; wrong password and unknown user are refused`, { timeout: 120_000 }, async () => {
    const topic = `kjs-${mechanism}`;
    const kafka = (u: string, pw: string) =>
      new kafkajs.Kafka({
        clientId: 'sasl-test',
        brokers: [sasl],
        sasl: { mechanism, username: u, password: pw } as kafkajs.SASLOptions,
        logLevel: kafkajs.logLevel.NOTHING,
        retry: { retries: 2 },
      });
    const producer = kafka(user, password).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] });
    await producer.disconnect();
    const consumer = kafka(user, password).consumer({ groupId: `g-${mechanism}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timed out')), 60_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          got.push(message.value!.toString());
          if (got.length === 2) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    assert.deepEqual(got, ['a', 'b']);
    for (const [u, pw] of [
      [user, 'wrong'],
      ['nobody', 'x'],
    ] as const) {
      const bad = kafka(u, pw).admin();
      await assert.rejects(
        bad.connect(),
        (e: Error) => e.name === 'KafkaJSSASLAuthenticationError' && /SASL_AUTHENTICATION_FAILED|Authentication failed/.test(e.message),
      );
      await bad.disconnect();
    }
  });
}

const KAFKA_PYTHON = `
import sys, time
from kafka import KafkaProducer, KafkaConsumer
from kafka.errors import KafkaError
bootstrap, user, password, topic = sys.argv[1:5]
conf = dict(bootstrap_servers=bootstrap, security_protocol='SASL_PLAINTEXT', sasl_mechanism='PLAIN', sasl_plain_username=user, sasl_plain_password=password)
if topic == '-':
    try:
        KafkaProducer(**conf)
        print('CONNECTED')
    except Exception as e:
        print('FAILED', type(e).__name__, e)
    sys.exit(0)
p = KafkaProducer(acks='all', **conf)
for i in range(5): p.send(topic, ('kp%d' % i).encode())
p.flush(30)
c = KafkaConsumer(topic, auto_offset_reset='earliest', **conf)
out = []
def poll(ms):
    for records in c.poll(timeout_ms=ms).values(): out.extend(m.value.decode() for m in records)
deadline = time.time() + 20
while len(out) < 5 and time.time() < deadline: poll(500)
# anything after the five (a duplicate) is in the log already: one more poll would return it
poll(500)
print(','.join(out))
`;

test('kafka-python with SASL PLAIN: produce and consume; a wrong password does not connect', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'python3-kafka')) return;
  const topic = 'kp-plain';
  await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
  const ok = await run(PYTHON, ['-c', KAFKA_PYTHON, sasl, 'plainy', 'plain-secret', topic], { timeoutMs: 150_000 });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout.trim(), 'kp0,kp1,kp2,kp3,kp4');
  const bad = await run(PYTHON, ['-c', KAFKA_PYTHON, sasl, 'plainy', 'wrong', '-'], { timeoutMs: 90_000 });
  assert.match(bad.stdout, /^FAILED/);
});

async function closed(socket: net.Socket, ms: number): Promise<boolean> {
  if (socket.destroyed) return true;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      new Promise<boolean>((r) => socket.once('close', () => r(true))),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
    ]);
  } finally {
    clearTimeout(timer); // a timer left running would keep the test process alive for `ms` after the last test
  }
}

test('a compression bomb cannot be sent unauthenticated: the Produce closes the connection (or the frame limit does) and nothing is appended', {
  timeout: 60_000,
}, async () => {
  await admin.createTopics([{ name: 'bombed', numPartitions: 1, replicationFactor: 1 }]);
  for (const mb of [16, 600]) {
    const records = v2Bomb(CompressionType.Gzip, mb);
    for (const handshakeFirst of [false, true]) {
      const s = net.connect(Number(sasl.split(':')[1]), '127.0.0.1');
      await once(s, 'connect');
      s.on('error', () => {});
      // The handshake's answer may come before the close: read (and drop) it, or 'end' never fires.
      s.resume();
      if (handshakeFirst) s.write(encodeRequest(17, SaslHandshakeRequestCodec, 1, { mechanism: 'PLAIN' }, 1));
      s.write(
        encodeRequest(
          0,
          ProduceRequestCodec,
          8,
          { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'bombed', partitionData: [{ index: 0, records }] }] },
          2,
        ),
      );
      assert.ok(await closed(s, 10_000), `bomb of ${mb} MiB (${records.length} bytes), handshake first: ${handshakeFirst}`);
    }
  }
  const [end] = await admin.listOffsets([{ topic: 'bombed', partition: 0, timestamp: -1n }]);
  assert.equal(end!.offset, 0n);
});
