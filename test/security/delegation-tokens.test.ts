/**
 * Delegation tokens on one broker with a SASL_PLAINTEXT SCRAM listener, as a user meets them:
 * kafka-delegation-tokens.sh (child processes of bin/, Kafka's output) creates, renews, describes
 * and expires tokens as SCRAM users; Fjord's own client logs in with a token (SCRAM,
 * tokenauth=true) and produces and fetches as the token's owner (an ACL only the owner passes);
 * a token's connection may not manage tokens; an expired token is refused; tokens survive a
 * restart; without delegation.token.secret.key the APIs answer DELEGATION_TOKEN_AUTH_DISABLED.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { run, type RunResult } from '../helpers/run.js';
import { Admin, Consumer, KafkaError, Producer, type ClientOptions } from '../../src/client/index.js';
import { alterUserScramCredentials } from '../../src/client/admin-scram.js';
import { createAcls } from '../../src/client/admin-acls.js';
import { createDelegationToken, renewDelegationToken } from '../../src/client/admin-delegation-tokens.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/authorizer/acl-model.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOOL = join(ROOT, 'bin', 'kafka-delegation-tokens.sh');
const SECRET = 'fjord-delegation-secret';
const SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule';

let dir: string;
let b: TestBroker;
let admin: Admin;

function brokerProps(secret: string | null): Record<string, string> {
  return {
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'security.inter.broker.protocol': 'PLAINTEXT',
    'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'allow.everyone.if.no.acl.found': 'true',
    'connection.failed.authentication.delay.ms': '0',
    ...(secret === null ? {} : { 'delegation.token.secret.key': secret }),
  };
}

const saslServer = (): string => `127.0.0.1:${b.broker.boundPorts().get('SASL_PLAINTEXT')!}`;

/** A --command-config file for a SCRAM user, or for a token (tokenauth="true"). */
async function commandConfig(name: string, username: string, password: string, tokenAuth = false): Promise<string> {
  const file = join(dir, `${name}.properties`);
  const jaas = `${SCRAM} required username="${username}" password="${password}"${tokenAuth ? ' tokenauth="true"' : ''};`;
  await writeFile(file, `security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config=${jaas}\n`);
  return file;
}

function tool(config: string, ...args: string[]): Promise<RunResult> {
  return run(TOOL, ['--bootstrap-server', saslServer(), '--command-config', config, ...args], { timeoutMs: 30_000 });
}

function tokenClient(tokenId: string, hmac: string, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512' = 'SCRAM-SHA-512'): ClientOptions {
  return {
    bootstrapServers: saslServer(),
    requestTimeoutMs: 5000,
    security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism, username: tokenId, password: hmac, tokenAuth: true } },
  };
}

function userClient(user: string): ClientOptions {
  return {
    bootstrapServers: saslServer(),
    requestTimeoutMs: 5000,
    security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'SCRAM-SHA-256', username: user, password: `${user}-secret` } },
  };
}

/** Connects and asks for metadata: resolves when the login works, rejects with the broker's error when not. */
async function login(opts: ClientOptions): Promise<void> {
  const a = new Admin(opts);
  try {
    await a.cluster.anyConnection();
  } finally {
    await a.close();
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;
const HEADER = `${'TOKENID'.padEnd(15)} ${'HMAC'.padEnd(30)} ${'OWNER'.padEnd(15)} ${'REQUESTER'.padEnd(15)} ${'RENEWERS'.padEnd(25)} ${'ISSUEDATE'.padEnd(15)} ${'EXPIRYDATE'.padEnd(15)} ${'MAXDATE'.padEnd(15)}`;

/** The token rows of Kafka's printToken table (each cell padded, separated by a space). */
function tableRows(stdout: string): string[][] {
  const lines = stdout.split('\n');
  const at = lines.indexOf(HEADER);
  assert.ok(at >= 0, `no token table header in:\n${stdout}`);
  return lines
    .slice(at + 1)
    .filter((l) => l !== '')
    .map((l) => l.trim().split(/ +/));
}

const expectedHmac = (tokenId: string): string => crypto.createHmac('sha512', SECRET).update(tokenId).digest('base64');

let alice: string;
let bob: string;
let carol: string;
/** The token alice creates with bob as renewer (test 1), used by the later tests. */
let token: { id: string; hmac: string };
/** The 1 ms token of test 4, expired but kept until the periodic check. */
let shortId: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fjord-tokens-'));
  b = await startTestBroker(brokerProps(SECRET), dir);
  admin = new Admin({ bootstrapServers: b.bootstrap });
  await alterUserScramCredentials(
    admin.cluster,
    ['alice', 'bob', 'carol'].map((user) => ({ user, mechanism: 'SCRAM-SHA-256' as const, op: 'upsert' as const, password: `${user}-secret` })),
  );
  await admin.createTopics([{ name: 'owned', numPartitions: 1, replicationFactor: 1 }]);
  const allow = (resourceType: ResourceType, name: string, principal: string, operation: AclOperation) => ({
    pattern: { resourceType, name, patternType: PatternType.LITERAL },
    entry: { principal, host: '*', operation, permissionType: AclPermissionType.ALLOW },
  });
  // Only alice may use topic "owned"; only carol may create tokens for bob; describing others'
  // tokens is for User:admin alone (with no ACL at all on a resource, everyone would be allowed).
  const errors = await createAcls(admin.cluster, [
    allow(ResourceType.TOPIC, 'owned', 'User:alice', AclOperation.ALL),
    allow(ResourceType.USER, 'User:bob', 'User:carol', AclOperation.CREATE_TOKENS),
    allow(ResourceType.USER, '*', 'User:admin', AclOperation.DESCRIBE_TOKENS),
    allow(ResourceType.DELEGATION_TOKEN, '*', 'User:admin', AclOperation.DESCRIBE),
  ]);
  assert.deepEqual(errors, [null, null, null, null]);
  alice = await commandConfig('alice', 'alice', 'alice-secret');
  bob = await commandConfig('bob', 'bob', 'bob-secret');
  carol = await commandConfig('carol', 'carol', 'carol-secret');
});

after(async () => {
  await admin?.close();
  await b?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('--create as a SCRAM user prints the token table; the token logs in (tokenauth) as its owner and produces and fetches', async () => {
  const r = await tool(alice, '--create', '--max-life-time-period', '-1', '--renewer-principal', 'User:bob');
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.equal(lines[0], 'Calling create token operation with renewers :[User:bob] , max-life-time-period :-1');
  const id = /^Created delegation token with tokenId : (\S+)$/.exec(lines[1]!)?.[1];
  assert.ok(id, r.stdout);
  assert.equal(lines[2], '');
  assert.equal(lines[3], HEADER);
  const rows = tableRows(r.stdout);
  assert.equal(rows.length, 1);
  const [tokenId, hmac, owner, requester, renewers, issue, expiry, max] = rows[0]!;
  assert.equal(tokenId, id);
  assert.match(tokenId!, /^[A-Za-z0-9_-]{22}$/); // a UUID in base64url, as Kafka's generateUuidAsBase64
  assert.equal(hmac, expectedHmac(tokenId!)); // HMAC-SHA512(tokenId, secret), base64
  assert.deepEqual([owner, requester, renewers], ['User:alice', 'User:alice', '[User:bob]']);
  for (const d of [issue, expiry, max]) assert.match(d!, DATE);
  // Defaults: expiry one day after issue, maximum seven days.
  const day = 86_400_000;
  assert.equal(Date.parse(expiry!) - Date.parse(issue!), day);
  assert.equal(Date.parse(max!) - Date.parse(issue!), 7 * day);
  token = { id: tokenId!, hmac: hmac! };

  // Produce and fetch over a token login: only User:alice may use "owned".
  const producer = new Producer({ ...tokenClient(token.id, token.hmac), deliveryTimeoutMs: 10_000 });
  try {
    await producer.send({ topic: 'owned', value: Buffer.from('by-token') });
  } finally {
    await producer.close();
  }
  const consumer = new Consumer({ ...tokenClient(token.id, token.hmac, 'SCRAM-SHA-256') });
  try {
    consumer.assign([{ topic: 'owned', partition: 0 }]);
    await consumer.seekToBeginning();
    const deadline = Date.now() + 10_000;
    let values: string[] = [];
    while (values.length === 0 && Date.now() < deadline) values = (await consumer.poll(500)).map((m) => m.value?.toString() ?? '');
    assert.deepEqual(values, ['by-token']);
  } finally {
    await consumer.close();
  }
  // The ACL is in force: carol may not write there.
  const other = new Producer({ ...userClient('carol'), deliveryTimeoutMs: 5000, retries: 0 });
  try {
    await assert.rejects(
      other.send({ topic: 'owned', value: Buffer.from('x') }),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    );
  } finally {
    await other.close();
  }
  // Without tokenauth the token id is no user; a wrong HMAC fails too.
  await assert.rejects(
    login({ ...userClient('x'), security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'SCRAM-SHA-512', username: token.id, password: token.hmac } } }),
    /SASL_AUTHENTICATION_FAILED/,
  );
  await assert.rejects(login(tokenClient(token.id, expectedHmac('other'))), /SASL_AUTHENTICATION_FAILED/);
});

test('a connection authenticated with a token may not create or describe tokens (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)', async () => {
  const viaToken = await commandConfig('token', token.id, token.hmac, true);
  for (const args of [['--create', '--max-life-time-period', '-1'], ['--describe']]) {
    const r = await tool(viaToken, ...args);
    assert.equal(r.code, 1, r.stdout);
    assert.equal(
      r.stderr,
      'kafka-delegation-tokens.sh: Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.\n',
    );
  }
});

test('--renew by a renewer, --describe by owner, renewer and others, --create for another owner under the CreateTokens ACL', async () => {
  const renewed = await tool(bob, '--renew', '--hmac', token.hmac, '--renew-time-period', '3600000');
  assert.equal(renewed.code, 0, renewed.stderr);
  const m = /^Calling renew token operation with hmac :(\S+) , renew-time-period :3600000\nCompleted renew operation\. New expiry date : (\S+)$/.exec(
    renewed.stdout,
  );
  assert.ok(m, renewed.stdout);
  assert.equal(m[1], token.hmac);
  assert.match(m[2]!, DATE);
  const notMine = await tool(carol, '--renew', '--hmac', token.hmac, '--renew-time-period', '-1');
  assert.equal(notMine.code, 1);
  assert.equal(notMine.stderr, 'kafka-delegation-tokens.sh: Specified Principal is not valid Owner/Renewer.\n');

  const described = await tool(alice, '--describe');
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /^Calling describe token operation for current user\.\nTotal number of tokens : 1\n/);
  const row = tableRows(described.stdout)[0]!;
  assert.deepEqual(row.slice(0, 5), [token.id, token.hmac, 'User:alice', 'User:alice', '[User:bob]']);
  assert.equal(row[6], m[2]); // the renewed expiry
  const count = async (config: string, ...owners: string[]): Promise<number> => {
    const r = await tool(config, '--describe', ...owners.flatMap((o) => ['--owner-principal', o]));
    assert.equal(r.code, 0, r.stderr);
    return tableRows(r.stdout).length;
  };
  // A renewer sees the token, others do not without DESCRIBE on it; --owner-principal names owners or renewers.
  assert.deepEqual(await Promise.all([count(bob), count(carol), count(alice, 'User:bob'), count(alice, 'User:carol')]), [1, 0, 1, 0]);
  const granted = await createAcls(admin.cluster, [
    {
      pattern: { resourceType: ResourceType.DELEGATION_TOKEN, name: token.id, patternType: PatternType.LITERAL },
      entry: { principal: 'User:carol', host: '*', operation: AclOperation.DESCRIBE, permissionType: AclPermissionType.ALLOW },
    },
  ]);
  assert.deepEqual(granted, [null]);
  assert.equal(await count(carol), 1); // DESCRIBE on the token shows it

  // KIP-373: creating for another owner needs CreateTokens on that User (only carol has it for bob).
  const refused = await tool(alice, '--create', '--max-life-time-period', '-1', '--owner-principal', 'User:bob');
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr, 'kafka-delegation-tokens.sh: Delegation Token authorization failed.\n');
  const forBob = await tool(carol, '--create', '--max-life-time-period', '60000', '--owner-principal', 'User:bob');
  assert.equal(forBob.code, 0, forBob.stderr);
  const [, , owner, requester, renewers, issue, expiry, max] = tableRows(forBob.stdout)[0]!;
  assert.deepEqual([owner, requester, renewers], ['User:bob', 'User:carol', '[]']);
  // The lifetime asked for caps both the expiry and the maximum.
  assert.equal(Date.parse(expiry!) - Date.parse(issue!), Date.parse(max!) - Date.parse(issue!));
  assert.deepEqual(await Promise.all([count(carol), count(bob)]), [2, 2]); // the requester sees it, and the owner

  const [usage, two] = await Promise.all([tool(alice, '--renew', '--hmac', token.hmac), tool(alice, '--renew', '--expire')]);
  assert.equal(usage.code, 1);
  assert.equal(usage.stderr, 'kafka-delegation-tokens.sh: Missing required argument "[renew-time-period]"\n');
  assert.equal(two.stderr, 'kafka-delegation-tokens.sh: Command must include exactly one action: --create, --renew, --expire or --describe\n');
});

test('an expired token is refused at login and renewal; --expire -1 removes a token at once', async () => {
  const client = new Admin(userClient('alice'));
  try {
    // A token that may live 1 ms: expired as soon as the clock moves past it.
    const short = await createDelegationToken(client.cluster, { maxLifetimeMs: 1 });
    assert.equal(short.maxTimestamp - short.issueTimestamp, 1);
    shortId = short.tokenId;
    while (Date.now() <= short.maxTimestamp + 1) await new Promise((r) => setTimeout(r, 2)); // the 1 ms lifetime passing
    await assert.rejects(login(tokenClient(short.tokenId, short.hmac.toString('base64'))), /SASL_AUTHENTICATION_FAILED/);
    await assert.rejects(
      renewDelegationToken(client.cluster, short.hmac, -1),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.DELEGATION_TOKEN_EXPIRED,
    );
  } finally {
    await client.close();
  }

  const other = await tool(alice, '--create', '--max-life-time-period', '-1');
  const [id, hmac] = tableRows(other.stdout)[0]!;
  await login(tokenClient(id!, hmac!));
  const expired = await tool(alice, '--expire', '--hmac', hmac!, '--expiry-time-period', '-1');
  assert.equal(expired.code, 0, expired.stderr);
  assert.match(expired.stdout, /^Calling expire token operation with hmac :\S+ , expire-time-period :-1\nCompleted expire operation\. New expiry date : \S+$/);
  await assert.rejects(login(tokenClient(id!, hmac!)), /SASL_AUTHENTICATION_FAILED/);
  const again = await tool(alice, '--renew', '--hmac', hmac!, '--renew-time-period', '-1');
  assert.equal(again.stderr, 'kafka-delegation-tokens.sh: Delegation Token is not found on server.\n');
});

test('tokens survive a restart; without delegation.token.secret.key the APIs answer DELEGATION_TOKEN_AUTH_DISABLED; the periodic check removes expired tokens', async () => {
  await b.stop({ keepDir: true });
  b = await startTestBroker(brokerProps(null), dir);
  const r = await tool(alice, '--create', '--max-life-time-period', '-1');
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'kafka-delegation-tokens.sh: Delegation Token feature is not enabled.\n');
  const d = await tool(alice, '--describe');
  assert.equal(d.stderr, 'kafka-delegation-tokens.sh: Delegation Token feature is not enabled.\n');
  await assert.rejects(login(tokenClient(token.id, token.hmac)), /SASL_AUTHENTICATION_FAILED/);

  await b.stop({ keepDir: true });
  b = await startTestBroker({ ...brokerProps(SECRET), 'delegation.token.expiry.check.interval.ms': '200' }, dir);
  await login(tokenClient(token.id, token.hmac));
  // Kept: alice's token, and the 1 ms one until the expiry check (every 200 ms here) removes it.
  const kept = () => b.broker.services.delegationTokens!.tokens().map((t) => t.info.tokenId);
  assert.ok(kept().includes(token.id));
  const deadline = Date.now() + 10_000;
  while (kept().includes(shortId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50)); // poll the check's effect
  assert.ok(!kept().includes(shortId), 'the expired token is still kept');
  assert.ok(kept().includes(token.id));
  const described = await tool(alice, '--describe');
  assert.deepEqual(
    tableRows(described.stdout).map((row) => row[0]),
    [token.id],
  );
});
