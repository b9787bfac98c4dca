// SASL_SSL with real clients, on the broker that docs/security.md's "A complete secure set-up"
// describes: its server.properties block is read from the doc (only the certificate directory, the
// ports and the host name are replaced) and its commands (first admin user over the SSL listener
// with the broker's certificate, users, ACLs, quotas) are run as written, through Fjord's tools.
// Then kcat and confluent-kafka produce and consume over SASL_SSL with SCRAM-SHA-512 and PLAIN;
// a wrong password fails with SASL_AUTHENTICATION_FAILED while the broker keeps serving.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import tls from 'node:tls';
import { once } from 'node:events';
import { encodeRequest } from '../helpers/raw-client.js';
import { v2Bomb } from '../helpers/bombs.js';
import { CompressionType } from '../../src/protocol/records/index.js';
import { MetadataRequestCodec, ProduceRequestCodec } from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { makeTestCerts, type TestCerts } from '../helpers/tls-certs.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { kcat } from './kcat-helpers.js';
import { CONFLUENT_SASL_SCRIPT, kcatSasl } from './sasl-client-helpers.js';
import { greedyProducer, MB } from './quota-clients.js';
import { runCli } from '../cli/helpers.js';
import { Admin } from '../../src/client/index.js';
import { KafkaError } from '../../src/protocol/errors.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'security.md'), 'utf8');
const SECTION = DOC.slice(DOC.indexOf('## A complete secure set-up'), DOC.indexOf('\n## TLS'));
const blocks = (lang: string): string[] => [...SECTION.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

/** Lines of a properties block as key/value pairs (comments and blank lines dropped). */
function parseProps(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const l = line.trim();
    if (l === '' || l.startsWith('#')) continue;
    const eq = l.indexOf('=');
    out.set(l.slice(0, eq), l.slice(eq + 1));
  }
  return out;
}

/** The doc's shell commands: continuation lines joined, words split, single quotes honoured. */
function shellCommands(text: string): string[][] {
  const cmds: string[][] = [];
  for (const line of text.replace(/\\\n\s*/g, ' ').split('\n')) {
    const l = line.trim();
    if (l === '' || l.startsWith('#')) continue;
    const words: string[] = [];
    for (const m of l.matchAll(/'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2]!);
    cmds.push(words);
  }
  return cmds;
}

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_plainy="plain-secret";';
let certs: TestCerts;
let b: TestBroker;
let clients: string;
let internal: string;
let dir: string;
const docProps = parseProps(blocks('properties')[0]!);

/** Runs a documented command line (bin/kafka-x.sh ...) with the test's addresses and files. */
async function runDocCommand(words: string[]): Promise<void> {
  const tool = words[0]!.replace(/^bin\//, '').replace(/\.sh$/, '');
  const args = words.slice(1).map((w) =>
    w
      .replace('broker1:9093', clients)
      .replace('broker1:9094', internal)
      .replace(/^(admin|broker)\.properties$/, (f) => join(dir, f)),
  );
  const r = await runCli(tool, args, { timeoutMs: 60_000 });
  assert.equal(r.code, 0, `${words.join(' ')}: ${r.stderr}`);
}

before(async () => {
  certs = makeTestCerts();
  dir = certs.dir;
  certs.server('broker', '/O=Example/CN=broker1'); // the doc's broker.keystore.pem, subject CN=broker1,O=Example
  const props: Record<string, string> = {};
  for (const [k, v] of docProps) {
    if (k === 'advertised.listeners') continue; // the broker advertises the ports it bound
    props[k] = v.replaceAll('/etc/fjord/ssl/', `${dir}/`).replace(/:\/\/:\d+/g, '://127.0.0.1:0');
  }
  // Beside the documented set-up, PLAIN as the doc's last paragraph says.
  props['sasl.enabled.mechanisms'] = 'SCRAM-SHA-512,PLAIN';
  props['listener.name.clients.plain.sasl.jaas.config'] = PLAIN_JAAS;
  props['connection.failed.authentication.delay.ms'] = '100';
  b = await startTestBroker(props);
  const ports = b.broker.boundPorts();
  clients = `127.0.0.1:${ports.get('CLIENTS')!}`;
  internal = `127.0.0.1:${ports.get('INTERNAL')!}`;

  // broker.properties from the doc's heredoc, admin.properties from its client block.
  const sh = blocks('sh');
  const heredoc = /cat > broker\.properties <<'EOT'\n([\s\S]*?)EOT\n/.exec(sh[1]!)![1]!;
  writeFileSync(join(dir, 'broker.properties'), heredoc.replaceAll('/etc/fjord/ssl/', `${dir}/`));
  writeFileSync(join(dir, 'admin.properties'), blocks('properties')[1]!.replaceAll('/etc/fjord/ssl/', `${dir}/`));
  for (const cmd of shellCommands(sh[1]!.replace(/cat > broker\.properties <<'EOT'\n[\s\S]*?EOT\n/, ''))) await runDocCommand(cmd);
  for (const cmd of shellCommands(sh[2]!)) await runDocCommand(cmd);
  // The test's own users: alice (SCRAM) and plainy (PLAIN) may do everything on sec-* topics and groups.
  await runDocCommand([
    'bin/kafka-configs.sh',
    '--bootstrap-server',
    'broker1:9093',
    '--command-config',
    'admin.properties',
    '--alter',
    '--add-config',
    'SCRAM-SHA-512=[password=alice-512]',
    '--entity-type',
    'users',
    '--entity-name',
    'alice',
  ]);
  for (const type of ['--topic', '--group', '--transactional-id']) {
    await runDocCommand([
      'bin/kafka-acls.sh',
      '--bootstrap-server',
      'broker1:9093',
      '--command-config',
      'admin.properties',
      '--add',
      '--allow-principal',
      'User:alice',
      '--allow-principal',
      'User:plainy',
      '--operation',
      'All',
      type,
      type === '--group' ? 'g-sec-' : 'sec-',
      '--resource-pattern-type',
      'prefixed',
    ]);
  }
});
after(async () => {
  await b?.stop();
  certs?.cleanup();
});

const tlsExtra = (): Record<string, string> => ({ 'ssl.ca.location': certs.caFile });

test('the documented set-up: SASL_SSL + SSL listeners, authorizer, users, ACLs and quotas are in place', async () => {
  assert.equal(docProps.get('listener.security.protocol.map'), 'CLIENTS:SASL_SSL,INTERNAL:SSL');
  const list = await runCli('kafka-acls', ['--bootstrap-server', clients, '--command-config', join(dir, 'admin.properties'), '--list', '--topic', 'orders']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /principal=User:bob, host=\*, operation=WRITE, permissionType=ALLOW/);
  assert.match(list.stdout, /principal=User:carol, host=\*, operation=READ, permissionType=ALLOW/);
  const quota = await runCli('kafka-configs', [
    '--bootstrap-server',
    clients,
    '--command-config',
    join(dir, 'admin.properties'),
    '--describe',
    '--entity-type',
    'users',
    '--entity-name',
    'bob',
  ]);
  assert.equal(quota.code, 0, quota.stderr);
  assert.match(quota.stdout, /Quota configs for user-principal 'bob' are producer_byte_rate=1048576\.0/);
  // No SASL on the SASL_SSL port: refused, one line.
  const noSasl = join(dir, 'ssl-only.properties');
  writeFileSync(noSasl, `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${certs.caFile}\n`);
  const bad = await runCli('kafka-topics', ['--bootstrap-server', clients, '--command-config', noSasl, '--list'], { timeoutMs: 60_000 });
  assert.notEqual(bad.code, 0);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
});

test("kcat over SASL_SSL with SCRAM-SHA-512 (the doc's bob and carol) and PLAIN: produce and consume; wrong password fails, broker keeps serving", {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const p = await kcat(
    ['-P', ...kcatSasl(clients, 'SASL_SSL', 'SCRAM-SHA-512', 'bob', 'bob-secret', tlsExtra()), '-t', 'orders', '-p', '0'],
    'one\ntwo\nthree\n',
  );
  assert.equal(p.code, 0, p.stderr);
  const c = await kcat([
    '-C',
    ...kcatSasl(clients, 'SASL_SSL', 'SCRAM-SHA-512', 'carol', 'carol-secret', tlsExtra()),
    '-t',
    'orders',
    '-p',
    '0',
    '-e',
    '-o',
    'beginning',
  ]);
  assert.equal(c.code, 0, c.stderr);
  assert.equal(c.stdout.toString(), 'one\ntwo\nthree\n');
  const pp = await kcat(['-P', ...kcatSasl(clients, 'SASL_SSL', 'PLAIN', 'plainy', 'plain-secret', tlsExtra()), '-t', 'sec-kcat-plain'], 'p1\np2\n');
  assert.equal(pp.code, 0, pp.stderr);
  const pc = await kcat([
    '-C',
    ...kcatSasl(clients, 'SASL_SSL', 'PLAIN', 'plainy', 'plain-secret', tlsExtra()),
    '-t',
    'sec-kcat-plain',
    '-e',
    '-o',
    'beginning',
  ]);
  assert.equal(pc.code, 0, pc.stderr);
  assert.equal(pc.stdout.toString(), 'p1\np2\n');
  for (const [mechanism, user] of [
    ['SCRAM-SHA-512', 'bob'],
    ['PLAIN', 'plainy'],
  ] as const) {
    const bad = await kcat(['-L', ...kcatSasl(clients, 'SASL_SSL', mechanism, user, 'wrong', tlsExtra()), '-m', '5']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /Authentication failed/);
  }
  const still = await kcat(['-L', ...kcatSasl(clients, 'SASL_SSL', 'SCRAM-SHA-512', 'bob', 'bob-secret', tlsExtra())]);
  assert.equal(still.code, 0, still.stderr);
  assert.match(still.stdout.toString(), /topic "orders"/);
});

for (const [mechanism, user, password] of [
  ['SCRAM-SHA-512', 'alice', 'alice-512'],
  ['PLAIN', 'plainy', 'plain-secret'],
] as const) {
  test(`confluent-kafka over SASL_SSL with ${mechanism}: produce, group consume; a wrong password is an authentication error`, {
    timeout: 180_000,
  }, async (t) => {
    if (!requirePeer(t, 'python3-confluent-kafka')) return;
    const topic = `sec-ck-${mechanism.toLowerCase()}`;
    const extra = JSON.stringify({ 'security.protocol': 'SASL_SSL', ...tlsExtra() });
    const ok = await run(PYTHON, ['-c', CONFLUENT_SASL_SCRIPT, clients, mechanism, user, password, topic, extra], { timeoutMs: 150_000 });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trim(), Array.from({ length: 10 }, (_, i) => `v${i}`).join(','));
    const bad = await run(PYTHON, ['-c', CONFLUENT_SASL_SCRIPT, clients, mechanism, user, 'wrong', '-', extra], { timeoutMs: 60_000 });
    assert.equal(bad.code, 0, bad.stderr);
    assert.match(bad.stdout, /^AUTH_ERROR/);
    assert.match(bad.stdout, /Authentication failed/);
  });
}

test('the error code of a wrong password or unknown user over SASL_SSL is SASL_AUTHENTICATION_FAILED; the broker keeps serving', {
  timeout: 60_000,
}, async () => {
  const admin = (mechanism: 'SCRAM-SHA-512' | 'PLAIN', username: string, password: string): Admin =>
    new Admin({
      bootstrapServers: clients,
      security: { protocol: 'SASL_SSL', tls: { ca: certs.ca }, sasl: { mechanism, username, password } },
      requestTimeoutMs: 10_000,
    });
  for (const [mechanism, user] of [
    ['SCRAM-SHA-512', 'bob'],
    ['PLAIN', 'plainy'],
    ['SCRAM-SHA-512', 'nobody'],
    ['PLAIN', 'nobody'],
  ] as const) {
    const bad = admin(mechanism, user, 'wrong');
    try {
      await assert.rejects(
        bad.listTopics(),
        (e: unknown) => e instanceof KafkaError && e.code === 58 && /^SASL_AUTHENTICATION_FAILED: Authentication failed/.test(e.message),
        `${mechanism} ${user}`,
      );
    } finally {
      await bad.close();
    }
  }
  // kafkajs (its own SCRAM) gets the broker's message too.
  const kjs = new kafkajs.Kafka({
    clientId: 'sasl-ssl',
    brokers: [clients],
    ssl: { ca: [certs.ca] },
    sasl: { mechanism: 'scram-sha-512', username: 'bob', password: 'wrong' },
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 0 },
  }).admin();
  await assert.rejects(kjs.connect(), /Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512/);
  await kjs.disconnect();
  const good = admin('SCRAM-SHA-512', 'alice', 'alice-512');
  try {
    const created = await good.createTopics([{ name: 'sec-lib', numPartitions: 1, replicationFactor: 1 }]);
    assert.equal(created.get('sec-lib'), null);
    assert.ok((await good.listTopics()).includes('sec-lib'));
  } finally {
    await good.close();
  }
});

test('transactions on the documented set-up: the broker writes its markers over the SSL inter-broker listener as User:broker1 (a super user)', {
  timeout: 90_000,
}, async () => {
  const kafka = new kafkajs.Kafka({
    clientId: 'sasl-ssl-tx',
    brokers: [clients],
    ssl: { ca: [certs.ca] },
    sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'alice-512' },
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'sec-tx', numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer({ transactionalId: 'sec-tx-1', idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let i = 0; i < 3; i++) {
      const txn = await producer.transaction();
      await txn.send({ topic: 'sec-tx', messages: [{ value: `t${i}` }] });
      await txn.commit(); // the next transaction of this id waits until this one's markers are written
    }
  } finally {
    await producer.disconnect();
  }
  // read_committed sees the three values (and the markers moved the last stable offset past them).
  const r = await kcat([
    '-C',
    ...kcatSasl(clients, 'SASL_SSL', 'SCRAM-SHA-512', 'alice', 'alice-512', { ...tlsExtra(), 'isolation.level': 'read_committed' }),
    '-t',
    'sec-tx',
    '-e',
    '-o',
    'beginning',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.toString(), 't0\nt1\nt2\n');
});

test('the documented quota holds bob (his SASL principal) to 1 MB/s: librdkafka reports throttling and his volume stays within the bound', {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const seconds = 12;
  const bob = await greedyProducer(clients, 'orders', 'greedy-bob', seconds, 10_000, {
    'security.protocol': 'SASL_SSL',
    'sasl.mechanisms': 'SCRAM-SHA-512',
    'sasl.username': 'bob',
    'sasl.password': 'bob-secret',
    ...tlsExtra(),
  });
  assert.deepEqual(bob.errors, []);
  const bytes = bob.buckets.reduce((n, [, b]) => n + b, 0);
  t.diagnostic(
    `bob: ${(bytes / MB).toFixed(2)} MB in ${(bob.end - bob.start).toFixed(1)} s, ${bob.throttles.length} throttle reports, max ${Math.max(0, ...bob.throttles.map(([, s]) => s))} s`,
  );
  // Kafka's measure: a first burst may reach bound x 10 windows (10 MB) before throttling starts
  // (see Quotas); at any speed above 1 MB/s he is throttled within these 12 s.
  assert.ok(
    bob.throttles.some(([, s]) => s > 0),
    `librdkafka reported no throttle time for bob (${(bytes / MB).toFixed(2)} MB sent)`,
  );
  assert.ok(bytes < (seconds + 11) * MB * 1.3, `bob delivered ${(bytes / MB).toFixed(2)} MB in ${seconds} s, over a 1 MB/s quota`);
});

test('unauthenticated on the SASL_SSL port, after the TLS handshake: a Metadata request or a compression bomb closes the connection and nothing is appended', {
  timeout: 60_000,
}, async () => {
  const [host, port] = [clients.split(':')[0]!, Number(clients.split(':')[1])];
  const admin = new Admin({
    bootstrapServers: clients,
    security: { protocol: 'SASL_SSL', tls: { ca: certs.ca }, sasl: { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'alice-512' } },
  });
  try {
    await admin.createTopics([{ name: 'sec-bombed', numPartitions: 1, replicationFactor: 1 }]);
    const requests = [
      encodeRequest(
        3,
        MetadataRequestCodec,
        9,
        { topics: null, allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false },
        1,
      ),
      encodeRequest(
        0,
        ProduceRequestCodec,
        8,
        {
          transactionalId: null,
          acks: 1,
          timeoutMs: 1000,
          topicData: [{ name: 'sec-bombed', partitionData: [{ index: 0, records: v2Bomb(CompressionType.Gzip, 16) }] }],
        },
        2,
      ),
    ];
    for (const request of requests) {
      const s = tls.connect({ host, port, ca: certs.ca, servername: 'localhost' });
      s.on('error', () => {});
      await once(s, 'secureConnect');
      const closed = once(s, 'close').then(() => true);
      s.write(request);
      assert.ok(
        await Promise.race([closed, new Promise<boolean>((r) => setTimeout(() => r(false), 10_000).unref())]),
        `api ${request.readInt16BE(4)} left the connection open`,
      );
    }
    const [end] = await admin.listOffsets([{ topic: 'sec-bombed', partition: 0, timestamp: -1n }]);
    assert.equal(end!.offset, 0n);
  } finally {
    await admin.close();
  }
});
