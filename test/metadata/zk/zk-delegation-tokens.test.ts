/**
 * Delegation tokens in a real Apache ZooKeeper, as two brokers of a cluster keep them: one
 * broker's token manager creates, renews and expires a token; the other learns each change from
 * /delegation_token/token_changes and can authenticate the token (the same HMAC and SCRAM
 * credentials, derived from the shared secret); the token znode is Kafka's (version 3, sanitized
 * principals, no HMAC); a manager opened later loads what is kept.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { requirePeer } from '../../helpers/peers.js';
import { ZOOKEEPER_JAR, startZooKeeper, type ZooKeeperServer } from '../../helpers/zookeeper.js';
import { ZkSession } from '../../../src/metadata/zk/zk-session.js';
import { TOKEN_CHANGES_PATH, TOKENS_PATH, ZkDelegationTokens } from '../../../src/metadata/zk/zk-delegation-tokens.js';
import { DelegationTokenManager } from '../../../src/security/delegation-tokens/token-manager.js';
import type { DelegationTokenConfig } from '../../../src/security/delegation-tokens/token-info.js';
import { userPrincipal } from '../../../src/security/principal.js';
import { credentialFromSaltedPassword, saltedPassword } from '../../../src/security/sasl/scram.js';
import { waitFor } from '../../helpers/wait-for.js';

let zk: ZooKeeperServer | undefined;
const sessions: ZkSession[] = [];
const managers: DelegationTokenManager[] = [];

const CONFIG: DelegationTokenConfig = { secretKey: 'shared-secret', maxLifetimeMs: 7 * 86_400_000, expiryTimeMs: 86_400_000, expiryCheckIntervalMs: 3_600_000 };

before(async () => {
  if (existsSync(ZOOKEEPER_JAR)) zk = await startZooKeeper();
});

after(async () => {
  for (const m of managers) m.close();
  for (const s of sessions) await s.close();
  await zk?.stop();
});

async function broker(): Promise<{ session: ZkSession; manager: DelegationTokenManager }> {
  const session = await ZkSession.open({ connect: `${zk!.connect}/tokens`, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
  sessions.push(session);
  const manager = await DelegationTokenManager.open(CONFIG, () => new ZkDelegationTokens(session));
  managers.push(manager);
  return { session, manager };
}

const until = (what: string, cond: () => boolean) => waitFor(what, 15_000, cond);

test('a token created, renewed and expired on one broker is seen by another through ZooKeeper, in Kafka znodes', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const a = await broker();
  const b = await broker();
  const alice = userPrincipal('alice');
  const created = await a.manager.create(alice, alice, [userPrincipal('bob:x')], -1);
  assert.ok('token' in created);
  const { info, hmac } = created.token;

  // Kafka's token znode: no HMAC, principals sanitized as Kafka's Sanitizer does.
  const znode = JSON.parse((await a.session.get(`${TOKENS_PATH}/${info.tokenId}`)).data.toString());
  assert.deepEqual(znode, {
    version: 3,
    owner: 'User%3Aalice',
    tokenRequester: 'User%3Aalice',
    renewers: ['User%3Abob%3Ax'],
    issueTimestamp: info.issueTimestamp,
    maxTimestamp: info.maxTimestamp,
    expiryTimestamp: info.expiryTimestamp,
    tokenId: info.tokenId,
  });
  const changes = await a.session.children(TOKEN_CHANGES_PATH);
  assert.ok(
    changes.some((c) => /^token_change_\d{10}$/.test(c)),
    changes.join(','),
  );

  // The other broker derives the same HMAC and credentials from the id and the shared secret.
  await until('broker b to learn the token', () => b.manager.tokens().length === 1);
  const seen = b.manager.tokens()[0]!;
  assert.deepEqual(seen.hmac, hmac);
  assert.deepEqual(seen.info.renewers, [userPrincipal('bob:x')]);
  for (const m of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
    const found = b.manager.tokenCredential(info.tokenId, m)!;
    assert.deepEqual(found.owner, alice);
    // Each broker salts its own credential (as Kafka): the password it checks is the base64 HMAC.
    const { salt, iterations } = found.credential;
    assert.equal(iterations, 4096);
    const expected = credentialFromSaltedPassword(m, salt, saltedPassword(m, hmac.toString('base64'), salt, iterations), iterations);
    assert.deepEqual(found.credential.storedKey, expected.storedKey);
  }

  // A renewal on b (by the renewer) reaches a; an expiry on a removes it from b.
  const renewed = await b.manager.renew(userPrincipal('bob:x'), hmac, 60_000);
  assert.equal(renewed.errorCode, 0);
  await until('broker a to learn the renewal', () => a.manager.tokens()[0]?.info.expiryTimestamp === renewed.expiryTimestamp);

  // A broker started now loads what is kept.
  const c = await broker();
  assert.deepEqual(
    c.manager.tokens().map((x) => [x.info.tokenId, x.info.expiryTimestamp]),
    [[info.tokenId, renewed.expiryTimestamp]],
  );

  const expired = await a.manager.expire(alice, hmac, -1);
  assert.equal(expired.errorCode, 0);
  await until('brokers b and c to drop the token', () => b.manager.tokens().length === 0 && c.manager.tokens().length === 0);
  assert.equal(b.manager.tokenCredential(info.tokenId, 'SCRAM-SHA-256'), undefined);
  assert.equal(await a.session.exists(`${TOKENS_PATH}/${info.tokenId}`), null);
});
