// Real clients over SSL listeners: kcat (with and without a client certificate), confluent-kafka,
// kafka-python, the project's own client library and tools with Kafka's client config names.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { makeTestCerts, type TestCerts } from '../helpers/tls-certs.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { kcat } from './kcat-helpers.js';
import { runCli } from '../cli/helpers.js';
import { Admin, Producer } from '../../src/client/index.js';
import type { ClientSecurity } from '../../src/security/client-security.js';

let certs: TestCerts;
let b: TestBroker;
let ssl: string;
let mtls: string;
let plain: string;

before(async () => {
  certs = makeTestCerts();
  b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL',
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': certs.broker.keystore,
    'listener.name.mtls.ssl.client.auth': 'required',
    'listener.name.mtls.ssl.truststore.type': 'PEM',
    'listener.name.mtls.ssl.truststore.location': certs.caFile,
    'num.partitions': '1',
  });
  const ports = b.broker.boundPorts();
  ssl = `127.0.0.1:${ports.get('SSL')!}`;
  mtls = `127.0.0.1:${ports.get('MTLS')!}`;
  plain = `127.0.0.1:${ports.get('PLAINTEXT')!}`;
});
after(async () => {
  await b.stop();
  certs.cleanup();
});

const sslSecurity = (): ClientSecurity => ({ protocol: 'SSL', tls: { ca: certs.ca } });

test('client library: Admin and Producer over SSL; a wrong CA or host name fails with one clear message', async () => {
  const admin = new Admin({ bootstrapServers: ssl, security: sslSecurity() });
  try {
    const created = await admin.createTopics([{ name: 'lib-ssl', numPartitions: 1, replicationFactor: 1 }]);
    assert.equal(created.get('lib-ssl'), null);
    const producer = new Producer({ bootstrapServers: ssl, security: sslSecurity() });
    try {
      const md = await producer.send({ topic: 'lib-ssl', value: 'over tls' });
      assert.equal(md.offset, 0n);
    } finally {
      await producer.close();
    }
  } finally {
    await admin.close();
  }
  const other = certs.client('other-ca-leaf', '/CN=x', { selfSigned: true });
  const bad = new Admin({ bootstrapServers: ssl, security: { protocol: 'SSL', tls: { ca: other.cert } }, requestTimeoutMs: 5000, connectTimeoutMs: 5000 });
  await assert.rejects(bad.listTopics(), /certificate|TLS/);
  await bad.close();
  // Connected as "localhost" the name matches; a name outside the certificate does not, unless verification is off.
  const port = ssl.split(':')[1];
  const ok = new Admin({ bootstrapServers: `localhost:${port}`, security: sslSecurity() });
  assert.ok((await ok.listTopics()).length >= 0);
  await ok.close();
});

test('Fjord tools with --command-config / --producer.config / --consumer.config over SSL; PLAINTEXT settings on the SSL port fail in one line', async () => {
  const props = join(certs.dir, 'client-ssl.properties');
  writeFileSync(props, `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${certs.caFile}\n`);
  const created = await runCli('kafka-topics', ['--bootstrap-server', ssl, '--command-config', props, '--create', '--topic', 'tools-ssl', '--partitions', '1']);
  assert.equal(created.code, 0, created.stderr);
  const prod = await runCli('kafka-console-producer', ['--bootstrap-server', ssl, '--producer.config', props, '--topic', 'tools-ssl'], { input: 'a\nb\nc\n' });
  assert.equal(prod.code, 0, prod.stderr);
  const cons = await runCli('kafka-console-consumer', [
    '--bootstrap-server',
    ssl,
    '--consumer.config',
    props,
    '--topic',
    'tools-ssl',
    '--from-beginning',
    '--max-messages',
    '3',
  ]);
  assert.equal(cons.code, 0, cons.stderr);
  assert.equal(cons.stdout, 'a\nb\nc\n');
  // The client certificate listener, with the client's PEM key store.
  const bob = certs.client('tools-bob', '/O=Acme/CN=bob');
  const mprops = join(certs.dir, 'client-mtls.properties');
  writeFileSync(
    mprops,
    `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${certs.caFile}\nssl.keystore.type=PEM\nssl.keystore.location=${bob.keystore}\n`,
  );
  const listed = await runCli('kafka-topics', ['--bootstrap-server', mtls, '--command-config', mprops, '--list']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^tools-ssl$/m);
  // The perf tools take the same file.
  const perf = await runCli(
    'kafka-producer-perf-test',
    ['--bootstrap-server', ssl, '--producer.config', props, '--topic', 'tools-ssl', '--num-records', '200', '--record-size', '100', '--throughput', '-1'],
    { timeoutMs: 60_000 },
  );
  assert.equal(perf.code, 0, perf.stderr);
  assert.match(perf.stdout, /^200 records sent/m);
  const cperf = await runCli('kafka-consumer-perf-test', ['--bootstrap-server', ssl, '--consumer.config', props, '--topic', 'tools-ssl', '--messages', '203'], {
    timeoutMs: 60_000,
  });
  assert.equal(cperf.code, 0, cperf.stderr);
  assert.match(cperf.stdout, /, 203(, |$)/m);
  // No client certificate for the listener that requires one: one line, exit 1.
  const refused = await runCli('kafka-topics', ['--bootstrap-server', mtls, '--command-config', props, '--list']);
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr.trimEnd().split('\n').length, 1, refused.stderr);
  assert.match(refused.stderr, /certificate required|closed/);
  const badProps = join(certs.dir, 'client-bad.properties');
  writeFileSync(badProps, 'security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=/x/truststore.jks\n');
  const bad = await runCli('kafka-topics', ['--bootstrap-server', ssl, '--command-config', badProps, '--list']);
  assert.equal(bad.code, 1);
  assert.equal(bad.stderr.trimEnd().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /ssl\.truststore\.type JKS is not supported/);
});

test('kcat over SSL: produce and consume', async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const common = ['-b', ssl, '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caFile}`];
  const p = await kcat(['-P', ...common, '-t', 'kcat-ssl'], 'one\ntwo\nthree\n');
  assert.equal(p.code, 0, p.stderr);
  const c = await kcat(['-C', ...common, '-t', 'kcat-ssl', '-e', '-q']);
  assert.equal(c.code, 0, c.stderr);
  assert.equal(c.stdout.toString(), 'one\ntwo\nthree\n');
});

test('kcat with a client certificate on an ssl.client.auth=required listener; without one it is refused', async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const alice = certs.client('kcat-alice', '/O=Acme/OU=eng/CN=alice');
  const common = ['-b', mtls, '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caFile}`];
  const withCert = [...common, '-X', `ssl.certificate.location=${alice.certFile}`, '-X', `ssl.key.location=${alice.keyFile}`];
  const p = await kcat(['-P', ...withCert, '-t', 'kcat-mtls'], 'x\ny\n');
  assert.equal(p.code, 0, p.stderr);
  const c = await kcat(['-C', ...withCert, '-t', 'kcat-mtls', '-e', '-q']);
  assert.equal(c.stdout.toString(), 'x\ny\n');
  const refused = await kcat(['-L', ...common, '-m', '5'], undefined, 30_000);
  assert.notEqual(refused.code, 0);
  // The broker is still serving.
  const again = await kcat(['-C', ...withCert, '-t', 'kcat-mtls', '-e', '-q']);
  assert.equal(again.stdout.toString(), 'x\ny\n');
});

test('kcat in PLAINTEXT against the SSL port, and in SSL against the PLAINTEXT port: refused, broker serves on', async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const wrong1 = await kcat(['-L', '-b', ssl, '-m', '3'], undefined, 30_000);
  assert.notEqual(wrong1.code, 0);
  const wrong2 = await kcat(['-L', '-b', plain, '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caFile}`, '-m', '3'], undefined, 30_000);
  assert.notEqual(wrong2.code, 0);
  const ok = await kcat(['-L', '-b', ssl, '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caFile}`, '-m', '10']);
  assert.equal(ok.code, 0, ok.stderr);
});

const CONFLUENT = `
import sys, json
from confluent_kafka import Producer, Consumer, TopicPartition, OFFSET_BEGINNING
bootstrap, topic, ca = sys.argv[1], sys.argv[2], sys.argv[3]
conf = {'bootstrap.servers': bootstrap, 'security.protocol': 'SSL', 'ssl.ca.location': ca}
p = Producer(dict(conf, **{'enable.idempotence': True}))
errors = []
def cb(err, msg):
    if err is not None: errors.append(str(err))
for i in range(200):
    p.produce(topic, value=b'v%d' % i, partition=0, on_delivery=cb)
left = p.flush(30)
c = Consumer(dict(conf, **{'group.id': 'tls', 'enable.partition.eof': True}))
c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
out = []
while True:
    m = c.poll(10)
    if m is None: break
    if m.error():
        if m.error().code() == -191: break
        errors.append(str(m.error())); break
    out.append(m.value().decode())
c.close()
print(json.dumps({'left': left, 'errors': errors, 'n': len(out), 'last': out[-1] if out else None}))
`;

test('confluent-kafka over SSL: idempotent produce and consume', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const r = await run(PYTHON, ['-c', CONFLUENT, ssl, 'confluent-ssl', certs.caFile], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { left: 0, errors: [], n: 200, last: 'v199' });
});

const KAFKA_PYTHON = `
import sys, json
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
bootstrap, topic, ca = sys.argv[1], sys.argv[2], sys.argv[3]
p = KafkaProducer(bootstrap_servers=bootstrap, security_protocol='SSL', ssl_cafile=ca, acks='all')
offsets = [f.get(timeout=30).offset for f in [p.send(topic, value=b'v%d' % i, partition=0) for i in range(100)]]
p.close()
c = KafkaConsumer(bootstrap_servers=bootstrap, security_protocol='SSL', ssl_cafile=ca, enable_auto_commit=False, consumer_timeout_ms=5000)
tp = TopicPartition(topic, 0)
c.assign([tp])
c.seek_to_beginning(tp)
out = []
for m in c:
    out.append(m.value.decode())
    if len(out) == 100: break
c.close()
print(json.dumps({'offsets': [offsets[0], offsets[-1]], 'n': len(out), 'last': out[-1]}))
`;

test('kafka-python over SSL: produce and consume', async (t) => {
  if (!requirePeer(t, 'python3-kafka')) return;
  const r = await run(PYTHON, ['-c', KAFKA_PYTHON, ssl, 'kafka-python-ssl', certs.caFile], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { offsets: [0, 99], n: 100, last: 'v99' });
});
