/**
 * ACLs with real clients (kcat, confluent-kafka, kafkajs) as User:ANONYMOUS over PLAINTEXT, with
 * `allow.everyone.if.no.acl.found=false` and no super user. The operator's own bootstrap grant
 * (ALTER and DESCRIBE on the cluster, so kafka-acls.sh works) is added in-process; everything
 * else goes through kafka-acls.sh.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { kcat } from '../interop/kcat-helpers.js';
import { CONFLUENT_CONSUME_ONE_SCRIPT } from '../interop/sasl-client-helpers.js';
import { runCli } from '../cli/helpers.js';
import { createTopic } from '../server/handlers/data-plane-helpers.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/authorizer/acl-model.js';

const PROPS = { 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer', 'allow.everyone.if.no.acl.found': 'false' };

async function acls(b: TestBroker, ...args: string[]): Promise<string> {
  const r = await runCli('kafka-acls', ['--bootstrap-server', b.bootstrap, ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

async function produce(b: TestBroker, topic: string, value: string): Promise<{ ok: boolean; stderr: string }> {
  const r = await kcat(['-P', '-b', b.bootstrap, '-t', topic, '-p', '0', '-X', 'message.timeout.ms=5000'], `${value}\n`);
  return { ok: r.code === 0 && !/ERROR|failed/i.test(r.stderr), stderr: r.stderr };
}

test('real clients: no ACL, producer ACL, group ACL, prefixed ACL, deny over allow, ACLs survive a restart', async (t) => {
  if (!requirePeer(t, 'kcat') || !requirePeer(t, 'python3-confluent-kafka')) return;
  let b = await startTestBroker(PROPS);
  const dir = b.dir;
  try {
    await b.broker.services.authorizer!.create(
      [AclOperation.ALTER, AclOperation.DESCRIBE].map((operation) => ({
        pattern: { resourceType: ResourceType.CLUSTER, name: 'kafka-cluster', patternType: PatternType.LITERAL },
        entry: { principal: 'User:ANONYMOUS', host: '*', operation, permissionType: AclPermissionType.ALLOW },
      })),
    );
    for (const topic of ['orders', 'logs-app', 'other']) await createTopic(b, topic);

    // No ACL: no topic in Metadata, produce refused.
    const list = await kcat(['-L', '-b', b.bootstrap]);
    assert.match(list.stdout.toString(), /\b0 topics:/);
    const denied = await produce(b, 'orders', 'x');
    assert.equal(denied.ok, false);
    assert.match(denied.stderr, /Topic authorization failed/i);

    // --producer: may produce to orders, may not read it.
    await acls(b, '--add', '--allow-principal', 'User:ANONYMOUS', '--producer', '--topic', 'orders');
    const ok = await produce(b, 'orders', 'hello');
    assert.equal(ok.ok, true, ok.stderr);
    const read = await kcat(['-C', '-b', b.bootstrap, '-t', 'orders', '-e', '-o', 'beginning']);
    assert.match(read.stderr, /Topic authorization failed/i);
    const list2 = await kcat(['-L', '-b', b.bootstrap]);
    assert.match(list2.stdout.toString(), /\b1 topics:\n\s+topic "orders"/);

    // A group ACL decides who joins: READ on orders and group team-b only.
    await acls(b, '--add', '--allow-principal', 'User:ANONYMOUS', '--consumer', '--topic', 'orders', '--group', 'team-b');
    const other = await run(PYTHON, ['-c', CONFLUENT_CONSUME_ONE_SCRIPT, b.bootstrap, 'team-a', 'orders'], { timeoutMs: 60_000 });
    assert.equal(other.stdout.trim(), 'GROUP_AUTHORIZATION_FAILED', other.stderr);
    const mine = await run(PYTHON, ['-c', CONFLUENT_CONSUME_ONE_SCRIPT, b.bootstrap, 'team-b', 'orders'], { timeoutMs: 60_000 });
    assert.equal(mine.stdout.trim(), 'GOT hello', mine.stderr);

    // Prefixed: logs-* writable, other not.
    await acls(
      b,
      '--add',
      '--allow-principal',
      'User:ANONYMOUS',
      '--operation',
      'Write',
      '--operation',
      'Describe',
      '--topic',
      'logs-',
      '--resource-pattern-type',
      'prefixed',
    );
    assert.equal((await produce(b, 'logs-app', 'l1')).ok, true);
    assert.equal((await produce(b, 'other', 'o1')).ok, false);

    // kafkajs, too: allowed on logs-app.
    const kafka = new kafkajs.Kafka({ brokers: [b.bootstrap], clientId: 'acl-test', logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 1 } });
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({ topic: 'logs-app', messages: [{ value: 'kj' }] });
      await assert.rejects(producer.send({ topic: 'other', messages: [{ value: 'no' }] }), /authoriz/i);
    } finally {
      await producer.disconnect();
    }

    // A deny overrides the allow.
    await acls(b, '--add', '--deny-principal', 'User:ANONYMOUS', '--operation', 'Write', '--topic', 'orders');
    assert.equal((await produce(b, 'orders', 'after-deny')).ok, false);

    // Restart: the ACLs are still there.
    await b.stop({ keepDir: true });
    b = await startTestBroker(PROPS, dir);
    assert.equal((await produce(b, 'logs-app', 'l2')).ok, true);
    assert.equal((await produce(b, 'orders', 'still-denied')).ok, false);
    const listed = await acls(b, '--list');
    assert.match(listed, /name=logs-, patternType=PREFIXED/);
    assert.match(listed, /operation=WRITE, permissionType=DENY/);
  } finally {
    await b.stop({ keepDir: true });
    const { rm } = await import('node:fs/promises');
    await rm(dir, { recursive: true, force: true });
  }
});

test("transactions under ACLs: the broker's own markers need ClusterAction for its principal (User:ANONYMOUS on PLAINTEXT)", async () => {
  const b = await startTestBroker(PROPS);
  try {
    await createTopic(b, 'tx-orders');
    const allow = (resourceType: ResourceType, name: string, operation: AclOperation, host = '*') => ({
      pattern: { resourceType, name, patternType: PatternType.LITERAL },
      entry: { principal: 'User:ANONYMOUS', host, operation, permissionType: AclPermissionType.ALLOW },
    });
    await b.broker.services.authorizer!.create([
      allow(ResourceType.TOPIC, 'tx-orders', AclOperation.WRITE),
      allow(ResourceType.TRANSACTIONAL_ID, 'tx-1', AclOperation.WRITE),
      // What the broker itself needs for WriteTxnMarkers, from its own address only.
      allow(ResourceType.CLUSTER, 'kafka-cluster', AclOperation.CLUSTER_ACTION, '127.0.0.1'),
    ]);
    const kafka = new kafkajs.Kafka({ brokers: [b.bootstrap], clientId: 'acl-tx', logLevel: kafkajs.logLevel.NOTHING });
    const producer = kafka.producer({ transactionalId: 'tx-1', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      for (let i = 0; i < 3; i++) {
        const txn = await producer.transaction();
        await txn.send({ topic: 'tx-orders', messages: [{ value: `v${i}` }] });
        await txn.commit(); // the next one waits for this one's markers
      }
    } finally {
      await producer.disconnect();
    }
    const other = kafka.producer({ transactionalId: 'tx-2', idempotent: true, maxInFlightRequests: 1, retry: { retries: 1 } });
    // FindCoordinator answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED; kafkajs reports it as a coordinator failure.
    await assert.rejects(
      other.connect().then(() => other.transaction()),
      /authoriz|coordinator/i,
      'no access to transactional id tx-2',
    );
    await other.disconnect();
  } finally {
    await b.stop();
  }
});
