/**
 * ACLs decided by SASL principals, end to end: a broker with a SASL_PLAINTEXT listener, SCRAM-SHA-512
 * users admin, bob and carol (made with kafka-configs.sh before the authorizer is turned on, then
 * the broker restarts with `authorizer.class.name=kafka.security.authorizer.AclAuthorizer` and
 * `super.users=User:admin`), ACLs added with kafka-acls.sh --command-config admin.properties, and
 * kcat / confluent-kafka / kafka-topics.sh as bob and carol.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { kcat } from '../interop/kcat-helpers.js';
import { CONFLUENT_CONSUME_ONE_SCRIPT, kcatSasl } from '../interop/sasl-client-helpers.js';
import { runCli } from '../cli/helpers.js';

const PASSWORDS: Record<string, string> = { admin: 'admin-secret', bob: 'bob-secret', carol: 'carol-secret' };
const SASL_PROPS = {
  listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
  'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
  // The only listener is also the inter-broker one: the broker logs in as admin.
  'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
  'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config':
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";',
  'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
  'super.users': 'User:admin',
  'num.partitions': '1',
};

let dir: string;
let b: TestBroker;
const props = (user: string): string => join(dir, `${user}.properties`);

async function tool(name: string, user: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(name, ['--bootstrap-server', b.bootstrap, '--command-config', props(user), ...args], { timeoutMs: 60_000 });
}
async function asAdmin(name: string, args: string[]): Promise<string> {
  const r = await tool(name, 'admin', args);
  assert.equal(r.code, 0, `${name} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const as = (user: string): string[] => kcatSasl(b.bootstrap, 'SASL_PLAINTEXT', 'SCRAM-SHA-512', user, PASSWORDS[user]!);
async function produce(user: string, topic: string, value: string): Promise<{ ok: boolean; stderr: string }> {
  const r = await kcat(['-P', ...as(user), '-t', topic, '-p', '0', '-X', 'message.timeout.ms=8000'], `${value}\n`);
  return { ok: r.code === 0 && !/ERROR|failed/i.test(r.stderr), stderr: r.stderr };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fjord-acl-sasl-'));
  for (const [user, password] of Object.entries(PASSWORDS)) {
    await writeFile(
      props(user),
      'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n' +
        `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${password}";\n`,
    );
  }
  // The users first, on a broker without an authorizer (as an operator bootstraps), through AlterUserScramCredentials.
  const logDir = join(dir, 'logs');
  const setup = await startTestBroker({}, logDir);
  try {
    for (const [user, password] of Object.entries(PASSWORDS)) {
      const r = await runCli('kafka-configs', [
        '--bootstrap-server',
        setup.bootstrap,
        '--alter',
        '--add-config',
        `SCRAM-SHA-512=[password=${password}]`,
        '--entity-type',
        'users',
        '--entity-name',
        user,
      ]);
      assert.equal(r.code, 0, r.stderr);
    }
  } finally {
    await setup.stop({ keepDir: true });
  }
  b = await startTestBroker(SASL_PROPS, logDir);
  for (const topic of ['orders', 'team-a-x', 'team-b-x', 'shared', 'secret']) {
    await asAdmin('kafka-topics', ['--create', '--topic', topic, '--partitions', '1']);
  }
  await asAdmin('kafka-acls', ['--add', '--allow-principal', 'User:bob', '--producer', '--topic', 'orders']);
  await asAdmin('kafka-acls', ['--add', '--allow-principal', 'User:carol', '--consumer', '--topic', 'orders', '--group', 'billing']);
  await asAdmin('kafka-acls', ['--add', '--allow-principal', 'User:bob', '--operation', 'Write', '--topic', 'team-a-', '--resource-pattern-type', 'prefixed']);
  await asAdmin('kafka-acls', ['--add', '--allow-principal', 'User:*', '--operation', 'Write', '--operation', 'Read', '--topic', 'shared']);
  await asAdmin('kafka-acls', ['--add', '--deny-principal', 'User:bob', '--operation', 'All', '--topic', 'shared']);
});
after(async () => {
  await b?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('bob may produce to orders but not read it (TOPIC_AUTHORIZATION_FAILED)', { timeout: 120_000 }, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const ok = await produce('bob', 'orders', 'from-bob');
  assert.equal(ok.ok, true, ok.stderr);
  const read = await kcat(['-C', ...as('bob'), '-t', 'orders', '-p', '0', '-e', '-o', 'beginning']);
  assert.notEqual(read.code, 0);
  assert.match(read.stderr, /Topic authorization failed/i);
  assert.doesNotMatch(read.stdout.toString(), /from-bob/);
  // carol (consumer ACL) reads it.
  const carol = await kcat(['-C', ...as('carol'), '-t', 'orders', '-p', '0', '-e', '-o', 'beginning']);
  assert.equal(carol.code, 0, carol.stderr);
  assert.match(carol.stdout.toString(), /^from-bob$/m);
});

test('bob may not create topics: kafka-topics.sh --create with his --command-config fails with one clear line', async () => {
  const r = await tool('kafka-topics', 'bob', ['--create', '--topic', 'bobs-own', '--partitions', '1']);
  assert.notEqual(r.code, 0);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /authoriz/i);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.doesNotMatch(await asAdmin('kafka-topics', ['--list']), /bobs-own/);
});

test('Metadata (kcat -L) shows bob only the topics he may describe; admin sees all', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const topicsOf = async (user: string): Promise<string[]> => {
    const r = await kcat(['-L', ...as(user)]);
    assert.equal(r.code, 0, r.stderr);
    return [...r.stdout.toString().matchAll(/topic "([^"]+)"/g)]
      .map((m) => m[1]!)
      .filter((n) => !n.startsWith('__'))
      .sort();
  };
  assert.deepEqual(await topicsOf('bob'), ['orders', 'team-a-x']);
  assert.deepEqual(await topicsOf('carol'), ['orders', 'shared']);
  assert.deepEqual(await topicsOf('admin'), ['orders', 'secret', 'shared', 'team-a-x', 'team-b-x']);
});

test('a group ACL lets carol join billing; bob is refused GROUP_AUTHORIZATION_FAILED', { timeout: 120_000 }, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka') || !requirePeer(t, 'kcat')) return;
  assert.equal((await produce('bob', 'orders', 'for-billing')).ok, true);
  const conf = (user: string): string =>
    JSON.stringify({ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanisms': 'SCRAM-SHA-512', 'sasl.username': user, 'sasl.password': PASSWORDS[user] });
  const carol = await run(PYTHON, ['-c', CONFLUENT_CONSUME_ONE_SCRIPT, b.bootstrap, 'billing', 'orders', conf('carol')], { timeoutMs: 60_000 });
  assert.match(carol.stdout.trim(), /^GOT from-bob(,|$)/, carol.stderr); // the group's first batch, from the beginning
  const bob = await run(PYTHON, ['-c', CONFLUENT_CONSUME_ONE_SCRIPT, b.bootstrap, 'billing', 'orders', conf('bob')], { timeoutMs: 60_000 });
  assert.equal(bob.stdout.trim(), 'GROUP_AUTHORIZATION_FAILED', bob.stderr);
});

test('a prefixed ACL (team-a-) lets bob write team-a-x, not team-b-x', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const a = await produce('bob', 'team-a-x', 'a1');
  assert.equal(a.ok, true, a.stderr);
  const other = await produce('bob', 'team-b-x', 'b1');
  assert.equal(other.ok, false);
  assert.match(other.stderr, /authorization failed/i);
});

test('a DENY for bob on a topic overrides an ALLOW on User:*', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const carol = await produce('carol', 'shared', 'c1');
  assert.equal(carol.ok, true, carol.stderr);
  const bob = await produce('bob', 'shared', 'b1');
  assert.equal(bob.ok, false);
  assert.match(bob.stderr, /Topic authorization failed/i);
  const listed = await asAdmin('kafka-acls', ['--list', '--topic', 'shared']);
  assert.match(listed, /principal=User:bob, host=\*, operation=ALL, permissionType=DENY/);
  assert.match(listed, /principal=User:\*, host=\*, operation=WRITE, permissionType=ALLOW/);
});

test('what bob may not describe stays hidden: named in Metadata it is TOPIC_AUTHORIZATION_FAILED, auto-creation does not happen, groups and ACLs are refused', {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const named = await kcat(['-L', ...as('bob'), '-t', 'secret']);
  assert.match(named.stdout.toString() + named.stderr, /Topic authorization failed/i);
  assert.doesNotMatch(named.stdout.toString(), /partition 0, leader/);
  const auto = await produce('bob', 'bob-auto', 'x');
  assert.equal(auto.ok, false);
  assert.match(auto.stderr, /authorization failed/i);
  assert.doesNotMatch(await asAdmin('kafka-topics', ['--list']), /bob-auto/);
  const aclList = await tool('kafka-acls', 'bob', ['--list']);
  assert.notEqual(aclList.code, 0);
  assert.equal(aclList.stderr.trim().split('\n').length, 1, aclList.stderr);
  assert.match(aclList.stderr, /authoriz/i);
  const groups = await tool('kafka-consumer-groups', 'bob', ['--list']);
  assert.equal(groups.code, 0, groups.stderr);
  assert.doesNotMatch(groups.stdout, /billing/);
  const describe = await tool('kafka-consumer-groups', 'bob', ['--describe', '--group', 'billing']);
  assert.notEqual(describe.code, 0);
  assert.match(describe.stderr, /authoriz/i);
});

test("Fjord's console tools as bob (--producer.config / --consumer.config): producing to orders works, consuming it fails in one line", {
  timeout: 120_000,
}, async () => {
  const prod = await runCli('kafka-console-producer', ['--bootstrap-server', b.bootstrap, '--producer.config', props('bob'), '--topic', 'orders'], {
    input: 'console-bob\n',
    timeoutMs: 60_000,
  });
  assert.equal(prod.code, 0, prod.stderr);
  const cons = await runCli(
    'kafka-console-consumer',
    [
      '--bootstrap-server',
      b.bootstrap,
      '--consumer.config',
      props('bob'),
      '--topic',
      'orders',
      '--from-beginning',
      '--max-messages',
      '1',
      '--timeout-ms',
      '20000',
    ],
    { timeoutMs: 60_000 },
  );
  assert.notEqual(cons.code, 0);
  assert.doesNotMatch(cons.stdout, /console-bob/);
  const lines = cons.stderr
    .trim()
    .split('\n')
    .filter((l) => !/^Processed a total/.test(l));
  assert.equal(lines.length, 1, cons.stderr);
  assert.match(lines[0]!, /authoriz/i);
});
