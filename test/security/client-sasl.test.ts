// Client-side SASL: the tools map security.protocol / sasl.mechanism / sasl.jaas.config from
// --command-config; SCRAM's derivation checked against RFC 7677's SCRAM-SHA-256 example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker } from '../helpers/broker.js';
import { runCli } from '../cli/helpers.js';
import { clientSaslSecurity } from '../../src/cli/common/client-sasl.js';
import { CliError } from '../../src/cli/common/tool.js';
import { authMessage, clientKey, hash, hmac, saltedPassword, serverKey, xor } from '../../src/security/sasl/scram.js';

test('RFC 7677 SCRAM-SHA-256 example: client proof and server signature', () => {
  const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
  const salted = saltedPassword('SCRAM-SHA-256', 'pencil', salt, 4096);
  const first = 'n=user,r=rOprNGfwEbeRWgbNEkqO';
  const serverFirst = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096';
  const auth = authMessage(first, serverFirst, 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0');
  const ck = clientKey('SCRAM-SHA-256', salted);
  assert.equal(xor(ck, hmac('SCRAM-SHA-256', hash('SCRAM-SHA-256', ck), auth)).toString('base64'), 'dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=');
  assert.equal(hmac('SCRAM-SHA-256', serverKey('SCRAM-SHA-256', salted), auth).toString('base64'), '6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
});

test("clientSaslSecurity: Kafka's client config names; one clear error for what cannot work", () => {
  const props = (o: Record<string, string>) => new Map(Object.entries(o));
  assert.equal(clientSaslSecurity(props({})), undefined);
  assert.equal(clientSaslSecurity(props({ 'security.protocol': 'PLAINTEXT' })), undefined);
  assert.deepEqual(
    clientSaslSecurity(
      props({
        'security.protocol': 'sasl_plaintext',
        'sasl.mechanism': 'SCRAM-SHA-512',
        'sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="a;b=c";',
      }),
    ),
    { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'a;b=c' } },
  );
  assert.throws(
    () => clientSaslSecurity(props({ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.jaas.config': 'x required username="a" password="b";' })),
    (e: unknown) => e instanceof CliError && /sasl.mechanism GSSAPI is not supported/.test(e.message),
  );
  assert.throws(
    () => clientSaslSecurity(props({ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN' })),
    (e: unknown) => e instanceof CliError && /needs sasl.jaas.config/.test(e.message),
  );
  assert.throws(
    () =>
      clientSaslSecurity(
        props({
          'security.protocol': 'SASL_PLAINTEXT',
          'sasl.mechanism': 'PLAIN',
          'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="a"',
        }),
      ),
    (e: unknown) => e instanceof CliError && /Invalid sasl.jaas.config/.test(e.message),
  );
});

test('tools over SASL with --command-config: kafka-topics and kafka-configs work; a wrong password is one line, exit 1', { timeout: 120_000 }, async () => {
  const b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";',
    'security.inter.broker.protocol': 'PLAINTEXT',
  });
  const dir = await mkdtemp(join(tmpdir(), 'fjord-client-sasl-'));
  try {
    const sasl = `127.0.0.1:${b.broker.boundPorts().get('SASL_PLAINTEXT')!}`;
    const good = join(dir, 'admin.properties');
    await writeFile(
      good,
      'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";\n',
    );
    const created = await runCli(
      'kafka-topics',
      ['--bootstrap-server', sasl, '--command-config', good, '--create', '--topic', 'secured', '--partitions', '1', '--replication-factor', '1'],
      { timeoutMs: 60_000 },
    );
    assert.equal(created.code, 0, created.stderr);
    const user = await runCli(
      'kafka-configs',
      [
        '--bootstrap-server',
        sasl,
        '--command-config',
        good,
        '--alter',
        '--add-config',
        'SCRAM-SHA-256=[password=alice-secret]',
        '--entity-type',
        'users',
        '--entity-name',
        'alice',
      ],
      { timeoutMs: 60_000 },
    );
    assert.equal(user.stdout, 'Completed updating config for user alice.\n');
    const alice = join(dir, 'alice.properties');
    await writeFile(
      alice,
      'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";\n',
    );
    const list = await runCli('kafka-topics', ['--bootstrap-server', sasl, '--command-config', alice, '--list'], { timeoutMs: 60_000 });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^secured$/m);
    const wrong = join(dir, 'wrong.properties');
    await writeFile(
      wrong,
      'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="nope";\n',
    );
    const bad = await runCli('kafka-topics', ['--bootstrap-server', sasl, '--command-config', wrong, '--list'], { timeoutMs: 60_000 });
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    assert.match(bad.stderr, /Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256/);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await b.stop();
  }
});
