// SCRAM credentials: DescribeUserScramCredentials / AlterUserScramCredentials with Kafka's errors,
// kafka-configs.sh --entity-type users with --bootstrap-server and --zookeeper, Kafka's output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { runCli } from '../cli/helpers.js';
import { requirePeer } from '../helpers/peers.js';
import { startZooKeeper } from '../helpers/zookeeper.js';
import { Admin } from '../../src/client/index.js';
import { Api } from '../../src/client/apis.js';
import { alterUserScramCredentials, describeUserScramCredentials } from '../../src/client/admin-scram.js';
import type { KafkaError } from '../../src/protocol/errors.js';
import { credentialFromSaltedPassword, parseCredential, saltedPassword } from '../../src/security/sasl/scram.js';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { KafkaZkClient } from '../../src/metadata/zk/kafka-zk-client.js';

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";';
const saslProps = {
  listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
  'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
  'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
  'connection.failed.authentication.delay.ms': '0',
};

test("AlterUserScramCredentials / DescribeUserScramCredentials: upsert, describe, delete, and Kafka's errors; the credential authenticates", async () => {
  const b = await startTestBroker(saslProps);
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  try {
    const done = await alterUserScramCredentials(admin.cluster, [
      { user: 'alice', mechanism: 'SCRAM-SHA-256', op: 'upsert', password: 'alice-secret', iterations: 8192 },
      { user: 'alice', mechanism: 'SCRAM-SHA-512', op: 'upsert', password: 'alice-512' },
      { user: 'carol', mechanism: 'SCRAM-SHA-512', op: 'upsert', password: 'carol-secret' },
    ]);
    assert.deepEqual(
      [...done],
      [
        ['alice', null],
        ['carol', null],
      ],
    );
    const stored = parseCredential(b.broker.services.clientEntities.get('users/alice')['SCRAM-SHA-256']!)!;
    assert.equal(stored.iterations, 8192);
    assert.deepEqual(
      credentialFromSaltedPassword('SCRAM-SHA-256', stored.salt, saltedPassword('SCRAM-SHA-256', 'alice-secret', stored.salt, 8192), 8192),
      stored,
    );

    const all = await describeUserScramCredentials(admin.cluster);
    assert.deepEqual(
      [...all],
      [
        [
          'alice',
          [
            { mechanism: 'SCRAM-SHA-256', iterations: 8192 },
            { mechanism: 'SCRAM-SHA-512', iterations: 4096 },
          ],
        ],
        ['carol', [{ mechanism: 'SCRAM-SHA-512', iterations: 4096 }]],
      ],
    );
    const some = await describeUserScramCredentials(admin.cluster, ['carol', 'nobody']);
    assert.deepEqual(some.get('carol'), [{ mechanism: 'SCRAM-SHA-512', iterations: 4096 }]);
    const nobody = some.get('nobody') as KafkaError;
    assert.equal(nobody.code, 91);
    assert.equal(nobody.message, 'Attempt to describe a user credential that does not exist: nobody');
    const conn = await admin.cluster.anyConnection();
    const dup = await conn.send(Api.DescribeUserScramCredentials, { users: [{ name: 'carol' }, { name: 'carol' }] });
    assert.deepEqual(
      dup.results.map((r) => [r.errorCode, r.errorMessage]),
      [[92, 'Cannot describe SCRAM credentials for the same user twice in a single request: carol']],
    );

    // SCRAM-SHA-256 login works right away on the SASL listener.
    const port = b.broker.boundPorts().get('SASL_PLAINTEXT')!;
    const asAlice = new Admin({
      bootstrapServers: `127.0.0.1:${port}`,
      security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'SCRAM-SHA-256', username: 'alice', password: 'alice-secret' } },
    });
    await asAlice.listTopics();
    await asAlice.close();

    // Errors, per user; a refused user keeps what it had.
    const salt = Buffer.from('salt');
    const sp = Buffer.alloc(32, 1);
    const bad = await conn.send(Api.AlterUserScramCredentials, {
      deletions: [
        { name: 'carol', mechanism: 1 },
        { name: 'dave', mechanism: 0 },
      ],
      upsertions: [
        { name: 'erin', mechanism: 1, iterations: 100, salt, saltedPassword: sp },
        { name: 'frank', mechanism: 1, iterations: 20000, salt, saltedPassword: sp },
        { name: 'alice', mechanism: 2, iterations: 4096, salt, saltedPassword: Buffer.alloc(64, 1) },
        { name: 'alice', mechanism: 2, iterations: 4096, salt, saltedPassword: Buffer.alloc(64, 1) },
        { name: '', mechanism: 1, iterations: 4096, salt, saltedPassword: sp },
      ],
    });
    assert.deepEqual(
      bad.results.map((r) => [r.user, r.errorCode, r.errorMessage]),
      [
        ['carol', 91, 'Attempt to delete a user credential that does not exist'],
        ['dave', 33, 'Unknown SCRAM mechanism'],
        ['erin', 93, 'Too few iterations'],
        ['frank', 93, 'Too many iterations'],
        ['alice', 92, 'A user credential cannot be altered twice in the same request'],
        ['', 93, 'Username must not be empty'],
      ],
    );
    assert.equal(parseCredential(b.broker.services.clientEntities.get('users/alice')['SCRAM-SHA-256']!)!.iterations, 8192);

    const deleted = await alterUserScramCredentials(admin.cluster, [{ user: 'alice', mechanism: 'SCRAM-SHA-512', op: 'delete' }]);
    assert.equal(deleted.get('alice'), null);
    assert.deepEqual(Object.keys(b.broker.services.clientEntities.get('users/alice')), ['SCRAM-SHA-256']);
  } finally {
    await admin.close();
    await b.stop();
  }
});

test("kafka-configs --bootstrap-server --entity-type users: add, describe, delete with Kafka's output", { timeout: 120_000 }, async () => {
  const b = await startTestBroker(saslProps);
  try {
    const configs = (...args: string[]) => runCli('kafka-configs', ['--bootstrap-server', b.bootstrap, ...args], { timeoutMs: 60_000 });
    const add = await configs(
      '--alter',
      '--add-config',
      'SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-512]',
      '--entity-type',
      'users',
      '--entity-name',
      'alice',
    );
    assert.equal(add.stderr, '');
    assert.equal(add.stdout, 'Completed updating config for user alice.\n');
    const one = await configs('--describe', '--entity-type', 'users', '--entity-name', 'alice');
    assert.equal(one.stdout, "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n");
    const del = await configs('--alter', '--delete-config', 'SCRAM-SHA-512', '--entity-type', 'users', '--entity-name', 'alice');
    assert.equal(del.stdout, 'Completed updating config for user alice.\n');
    const all = await configs('--describe', '--entity-type', 'users');
    assert.equal(all.stdout, "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n");
    const low = await configs('--alter', '--add-config', 'SCRAM-SHA-256=[iterations=100,password=x]', '--entity-type', 'users', '--entity-name', 'bob');
    assert.equal(low.code, 1);
    assert.match(low.stderr, /UNACCEPTABLE_CREDENTIAL: Too few iterations/);
    assert.equal(low.stderr.trim().split('\n').length, 1);
    const noPassword = await configs('--alter', '--add-config', 'SCRAM-SHA-256=[iterations=8192]', '--entity-type', 'users', '--entity-name', 'bob');
    assert.equal(noPassword.code, 1);
    assert.match(noPassword.stderr, /needs password=/);
  } finally {
    await b.stop();
  }
});

test("kafka-configs --zookeeper --entity-type users writes Kafka's credential form to /config/users/<user> and announces it", {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zk = await startZooKeeper();
  const session = await ZkSession.open({ connect: zk.connect, sessionTimeoutMs: 10_000, connectionTimeoutMs: 10_000 });
  try {
    const configs = (...args: string[]) => runCli('kafka-configs', ['--zookeeper', zk.connect, ...args], { timeoutMs: 60_000 });
    const add = await configs(
      '--alter',
      '--add-config',
      'SCRAM-SHA-512=[iterations=8192,password=zk-secret]',
      '--entity-type',
      'users',
      '--entity-name',
      'alice',
    );
    assert.equal(add.stdout, "Completed updating config for entity: user-principal 'alice'.\n");
    const client = new KafkaZkClient(session);
    const stored = await client.getEntityConfigs('users', 'alice');
    assert.match(stored['SCRAM-SHA-512']!, /^salt=[A-Za-z0-9+/=]+,stored_key=[A-Za-z0-9+/=]+,server_key=[A-Za-z0-9+/=]+,iterations=8192$/);
    const c = parseCredential(stored['SCRAM-SHA-512']!)!;
    assert.deepEqual(credentialFromSaltedPassword('SCRAM-SHA-512', c.salt, saltedPassword('SCRAM-SHA-512', 'zk-secret', c.salt, 8192), 8192), c);
    assert.ok((await session.children('/config/changes')).length >= 1);
    const described = await configs('--describe', '--entity-type', 'users', '--entity-name', 'alice');
    assert.equal(described.stdout, `Configs for user-principal 'alice' are SCRAM-SHA-512=${stored['SCRAM-SHA-512']}\n`);
    const del = await configs('--alter', '--delete-config', 'SCRAM-SHA-512', '--entity-type', 'users', '--entity-name', 'alice');
    assert.equal(del.code, 0);
    assert.deepEqual(await client.getEntityConfigs('users', 'alice'), {});
    const missing = await configs('--alter', '--delete-config', 'SCRAM-SHA-256', '--entity-type', 'users', '--entity-name', 'alice');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Invalid config\(s\): SCRAM-SHA-256/);
  } finally {
    await session.close();
    await zk.stop();
  }
});
