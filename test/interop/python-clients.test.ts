import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker();
});
after(() => b.stop());

const CONFLUENT = `
import sys, json
from confluent_kafka import Producer, Consumer, TopicPartition, OFFSET_BEGINNING
bootstrap, topic, codec = sys.argv[1], sys.argv[2], sys.argv[3]
p = Producer({'bootstrap.servers': bootstrap, 'enable.idempotence': True, 'compression.type': codec, 'linger.ms': 5})
errors = []
def cb(err, msg):
    if err is not None: errors.append(str(err))
for i in range(1000):
    p.produce(topic, key=b'k%d' % i, value=b'v%d' % i, partition=0, headers=[('h', b'%d' % i)], on_delivery=cb)
    p.poll(0)
left = p.flush(30)
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'unused', 'enable.auto.commit': False, 'enable.partition.eof': True})
c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
out = []
while True:
    m = c.poll(10)
    if m is None: break
    if m.error():
        if m.error().code() == -191: break  # _PARTITION_EOF
        errors.append(str(m.error())); break
    out.append([m.offset(), m.key().decode(), m.value().decode(), m.headers()[0][1].decode()])
c.close()
print(json.dumps({'left': left, 'errors': errors, 'records': out}))
`;

const KAFKA_PYTHON = `
import sys, json
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
bootstrap, topic, codec = sys.argv[1], sys.argv[2], sys.argv[3]
p = KafkaProducer(bootstrap_servers=bootstrap, compression_type=None if codec == 'none' else codec, acks='all')
futures = [p.send(topic, key=b'k%d' % i, value=b'v%d' % i, partition=0) for i in range(500)]
offsets = [f.get(timeout=30).offset for f in futures]
p.close()
c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=3000)
tp = TopicPartition(topic, 0)
c.assign([tp])
c.seek_to_beginning(tp)
out = []
for m in c:
    out.append([m.offset, m.key.decode(), m.value.decode()])
    if len(out) == 500: break
c.close()
print(json.dumps({'offsets': offsets, 'records': out}))
`;

for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
  test(`confluent-kafka (librdkafka) idempotent producer + assign() consumer with ${codec}`, async (t) => {
    if (!requirePeer(t, 'python3-confluent-kafka')) return;
    const topic = `py-ck-${codec}`;
    const res = await run(PYTHON, ['-c', CONFLUENT, b.bootstrap, topic, codec], { timeoutMs: 90_000 });
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout) as { left: number; errors: string[]; records: [number, string, string, string][] };
    assert.deepEqual(out.errors, []);
    assert.equal(out.left, 0);
    assert.deepEqual(
      out.records,
      Array.from({ length: 1000 }, (_, i) => [i, `k${i}`, `v${i}`, String(i)]),
    );
  });
}

// Debian's kafka-python has no lz4/zstd/snappy libraries (python3-lz4 etc. are not installed): gzip is the codec it can do.
for (const codec of ['none', 'gzip']) {
  test(`kafka-python producer + assign() consumer with ${codec}`, async (t) => {
    if (!requirePeer(t, 'python3-kafka')) return;
    const topic = `py-kp-${codec}`;
    const res = await run(PYTHON, ['-c', KAFKA_PYTHON, b.bootstrap, topic, codec], { timeoutMs: 90_000 });
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout) as { offsets: number[]; records: [number, string, string][] };
    assert.deepEqual(
      out.offsets,
      Array.from({ length: 500 }, (_, i) => i),
    );
    assert.deepEqual(
      out.records,
      Array.from({ length: 500 }, (_, i) => [i, `k${i}`, `v${i}`]),
    );
  });
}
