/**
 * The web console with security on (docs/console.md, "Security"): one broker whose only listener
 * is SASL_PLAINTEXT (PLAIN user admin from the JAAS line, a super user; SCRAM-SHA-512 user
 * reader, allowed only READ on topic `public`) with the ACL authorizer, serving the console on
 * metrics.listener. The console asks for a login checked against the cluster; a wrong password
 * is refused; reader sees only `public` and is refused what it may not do with the broker's
 * authorization error; admin lists and adds an ACL in the page, which reader's session obeys at
 * once. Headless Chromium via playwright-core; screenshots of each page visited: screenshots.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { Screenshots } from './screenshots.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { hasPeer, requirePeer } from '../helpers/peers.js';
import { Admin } from '../../src/client/index.js';
import { alterUserScramCredentials } from '../../src/client/admin-scram.js';
import { ConsoleSessions } from '../../src/console/console-sessions.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { AclOperation, AclPermissionType, ANY_FILTER, PatternType, ResourceType } from '../../src/security/authorizer/acl-model.js';
import { launchChromium } from '../helpers/chromium.js';
import { startConsoleCli } from '../helpers/console-cli.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const shots = new Screenshots('console-security');
const READER_PASSWORD = 'reader-secret-7f3a';

let b: TestBroker;
let base: string;
let admin: Admin;
let browser: Browser | undefined;

before(async () => {
  assert.ok(existsSync(join(ROOT, 'dist', 'console', 'assets', 'index.html')), 'the console is not built: run npm run build first');
  b = await startTestBroker({
    listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config':
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";',
    'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
    'super.users': 'User:admin',
    'num.partitions': '1',
    'metrics.listener': 'http://127.0.0.1:0',
  });
  base = `http://127.0.0.1:${b.broker.observability.port}`;
  admin = new Admin({
    bootstrapServers: b.bootstrap,
    security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'PLAIN', username: 'admin', password: 'admin-secret' } },
  });
  const created = await admin.createTopics([{ name: 'public' }, { name: 'private' }]);
  assert.deepEqual([...created.values()], [null, null]);
  assert.equal(
    (await alterUserScramCredentials(admin.cluster, [{ user: 'reader', mechanism: 'SCRAM-SHA-512', op: 'upsert', password: READER_PASSWORD }])).get('reader'),
    null,
  );
  const acl = await admin.createAcls([
    {
      pattern: { resourceType: ResourceType.TOPIC, name: 'public', patternType: PatternType.LITERAL },
      entry: { principal: 'User:reader', host: '*', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW },
    },
  ]);
  assert.deepEqual(acl, [null]);
  // A group with committed offsets that reader may not see.
  await admin.alterGroupOffsets('g1', [{ topic: 'public', partition: 0, offset: 0n }]);
  if (hasPeer('chromium')) browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await admin?.close();
  await b?.stop();
});

async function api(path: string, init: { method?: string; body?: unknown; cookie?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.body !== undefined || (init.method ?? 'GET') !== 'GET') headers['Content-Type'] = 'application/json';
  if (init.cookie) headers.Cookie = init.cookie;
  const res = await fetch(`${base}/api${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? null : JSON.stringify(init.body) });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, text, setCookie: res.headers.get('set-cookie') };
}

async function login(user: string, password: string, mechanism: string): Promise<string> {
  const r = await api('/login', { method: 'POST', body: { user, password, mechanism } });
  assert.equal(r.status, 200, r.text);
  return r.setCookie!.split(';')[0]!;
}

const openPage = () => shots.open(browser!);

async function alertText(page: Page): Promise<string> {
  const alert = page.getByRole('alert').first();
  await alert.waitFor();
  return (await alert.textContent()) ?? '';
}

async function uiLogin(page: Page, user: string, password: string, mechanism: string): Promise<void> {
  const form = page.getByRole('form', { name: 'Log in' });
  await form.getByLabel('User').fill(user);
  await form.getByLabel('Password').fill(password);
  await form.getByLabel('Mechanism').selectOption(mechanism);
  await form.getByRole('button', { name: 'Log in' }).click();
}

const shot = (page: Page, name: string, doc?: string) => shots.take(page, name, doc);

test('the API needs a login; a wrong password is refused without echoing it; the session cookie is HttpOnly, SameSite=Strict, random; logout ends it', async () => {
  const session = await api('/session');
  assert.deepEqual(session.body, { loginRequired: true, mechanisms: ['SCRAM-SHA-512', 'SCRAM-SHA-256', 'PLAIN'] });
  const anonymous = await api('/topics');
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.body.login, true);

  const wrong = await api('/login', { method: 'POST', body: { user: 'reader', password: 'not-the-password-91', mechanism: 'SCRAM-SHA-512' } });
  assert.equal(wrong.status, 401);
  assert.match(String(wrong.body.error), /^login refused: .*SASL_AUTHENTICATION_FAILED|^login refused: .*[Aa]uthentication failed/);
  assert.ok(!wrong.text.includes('not-the-password-91'), wrong.text);
  assert.equal(wrong.setCookie, null);
  const badMechanism = await api('/login', { method: 'POST', body: { user: 'reader', password: READER_PASSWORD, mechanism: 'GSSAPI' } });
  assert.equal(badMechanism.status, 400);

  const first = await api('/login', { method: 'POST', body: { user: 'reader', password: READER_PASSWORD, mechanism: 'SCRAM-SHA-512' } });
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(first.body, { user: 'reader' });
  assert.match(first.setCookie!, /^fjord_console_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
  const cookie = first.setCookie!.split(';')[0]!;
  assert.notEqual(await login('reader', READER_PASSWORD, 'SCRAM-SHA-512'), cookie);
  assert.deepEqual((await api('/session', { cookie })).body, { loginRequired: true, mechanisms: ['SCRAM-SHA-512', 'SCRAM-SHA-256', 'PLAIN'], user: 'reader' });
  assert.equal((await api('/topics', { cookie })).status, 200);
  // A made-up cookie is no session.
  assert.equal((await api('/topics', { cookie: `fjord_console_session=${'A'.repeat(43)}` })).status, 401);

  const out = await api('/logout', { method: 'POST', cookie });
  assert.equal(out.status, 200);
  assert.match(out.setCookie!, /^fjord_console_session=; .*Max-Age=0/);
  assert.equal((await api('/topics', { cookie })).status, 401);
});

test('reader, allowed only READ on public, sees only public and is refused the rest with the broker authorization error', async () => {
  const cookie = await login('reader', READER_PASSWORD, 'SCRAM-SHA-512');
  const topics = await api('/topics', { cookie });
  assert.deepEqual(
    (topics.body.topics as { name: string }[]).map((t) => t.name),
    ['public'],
  );
  assert.deepEqual((await api('/groups', { cookie })).body, []);
  const group = await api('/groups/g1', { cookie });
  assert.equal(group.status, 403);
  assert.match(String(group.body.error), /^GROUP_AUTHORIZATION_FAILED/);
  const produce = await api('/topics/public/messages', { method: 'POST', body: { value: 'x' }, cookie });
  assert.equal(produce.status, 403, produce.text);
  // The idempotent producer's InitProducerId is refused first (no Write anywhere), as Kafka's.
  assert.match(String(produce.body.error), /^(TOPIC|CLUSTER)_AUTHORIZATION_FAILED/);
  const remove = await api('/topics/public', { method: 'DELETE', cookie });
  assert.equal(remove.status, 403);
  assert.match(String(remove.body.error), /^TOPIC_AUTHORIZATION_FAILED/);
  const acls = await api('/acls', { cookie });
  assert.equal(acls.status, 403);
  assert.match(String(acls.body.error), /^CLUSTER_AUTHORIZATION_FAILED/);
  const reset = await api('/groups/g1/reset', { method: 'POST', body: { to: 'latest', execute: true }, cookie });
  assert.equal(reset.status, 403, reset.text);
  assert.match(String(reset.body.error), /^GROUP_AUTHORIZATION_FAILED/);
  const g1 = await admin.listGroupOffsets('g1', [{ topic: 'public', partition: 0 }]);
  assert.equal(g1.get('public')?.get(0)?.offset, 0n, 'g1 keeps the offset reader could not reset');
  // The broker still holds what reader could not see or change.
  assert.deepEqual((await admin.listTopics()).filter((t) => !t.startsWith('__')).sort(), ['private', 'public']);
});

test('in the page: a wrong password is refused; reader sees only public; no groups; the ACL page shows the refusal', async (t) => {
  if (!requirePeer(t, 'chromium')) return;
  const { page, errors } = await openPage();
  try {
    await page.goto(`${base}/#/topics`);
    await page.getByRole('form', { name: 'Log in' }).waitFor();
    await shot(page, 'login', 'security-login');
    await uiLogin(page, 'reader', 'wrong-password-xyz', 'SCRAM-SHA-512');
    assert.match(await alertText(page), /^login refused: /);
    assert.ok(!(await page.content()).includes('wrong-password-xyz'));
    await shot(page, 'login-refused');
    await uiLogin(page, 'reader', READER_PASSWORD, 'SCRAM-SHA-512');
    await page.getByTestId('user').filter({ hasText: 'reader' }).waitFor();
    await page.getByTestId('topic-row').first().waitFor();
    assert.deepEqual(await page.getByTestId('topic-row').locator('td:first-child').allTextContents(), ['public']);
    await shot(page, 'reader-topics');
    await page.goto(`${base}/#/groups`);
    await page.getByRole('status').filter({ hasText: 'No groups.' }).waitFor();
    await shot(page, 'reader-groups');
    await page.goto(`${base}/#/groups/g1`);
    assert.match(await alertText(page), /^GROUP_AUTHORIZATION_FAILED/);
    await shot(page, 'reader-group-refused');
    await page.goto(`${base}/#/acls`);
    assert.match(await alertText(page), /^CLUSTER_AUTHORIZATION_FAILED/);
    await shot(page, 'reader-acls-refused');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('form', { name: 'Log in' }).waitFor();
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('admin (PLAIN) lists the ACLs and adds one in the page; reader sees the group at once', async (t) => {
  if (!requirePeer(t, 'chromium')) return;
  const readerCookie = await login('reader', READER_PASSWORD, 'SCRAM-SHA-512');
  const { page, errors } = await openPage();
  try {
    await page.goto(`${base}/#/acls`);
    await uiLogin(page, 'admin', 'admin-secret', 'PLAIN');
    await page.getByTestId('user').filter({ hasText: 'admin' }).waitFor();
    const rows = page.getByTestId('acl-row');
    await rows.first().waitFor();
    assert.deepEqual(await rows.first().locator('td').allTextContents(), ['User:reader', 'ALLOW', 'READ', 'TOPIC', 'LITERAL', 'public', '*', 'Delete']);
    const add = page.getByRole('form', { name: 'Add ACL' });
    await add.getByLabel('Principal').fill('User:reader');
    await add.getByLabel('Operation').selectOption('DESCRIBE');
    await add.getByLabel('Resource type').selectOption('GROUP');
    await add.getByLabel('Resource name').fill('g1');
    await add.getByRole('button', { name: 'Add' }).click();
    await page.getByRole('status').filter({ hasText: 'Added: ALLOW User:reader DESCRIBE on GROUP LITERAL g1' }).waitFor();
    await page.getByTestId('acl-row').nth(1).waitFor();
    await shot(page, 'admin-acls');
    const stored = await admin.describeAcls(ANY_FILTER);
    assert.ok(
      stored.some((a) => a.pattern.resourceType === ResourceType.GROUP && a.pattern.name === 'g1' && a.entry.operation === AclOperation.DESCRIBE),
      JSON.stringify(stored),
    );
    // A refused ACL shows the broker's message.
    await add.getByLabel('Resource type').selectOption('CLUSTER');
    await add.getByLabel('Resource name').fill('not-the-cluster');
    await add.getByRole('button', { name: 'Add' }).click();
    assert.match(await alertText(page), /^INVALID_REQUEST: The only valid name for the CLUSTER resource is kafka-cluster/);
    await page.goto(`${base}/#/users`);
    await page.getByTestId('user-row').first().waitFor();
    assert.deepEqual(await page.getByTestId('user-row').first().locator('td').allTextContents(), ['reader', 'SCRAM-SHA-512', '4096', 'Delete']);
    await shot(page, 'admin-users');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
  const groups = await api('/groups', { cookie: readerCookie });
  assert.deepEqual(
    (groups.body as unknown as { groupId: string }[]).map((g) => g.groupId),
    ['g1'],
  );
});

test('SCRAM users and client quotas through the API as admin; reader may not', async () => {
  const cookie = await login('admin', 'admin-secret', 'PLAIN');
  const set = await api('/users', { method: 'POST', body: { user: 'carol', password: 'carol-secret', mechanism: 'SCRAM-SHA-512' }, cookie });
  assert.deepEqual(set.body, { user: 'carol', mechanism: 'SCRAM-SHA-512' });
  assert.ok(!set.text.includes('carol-secret'));
  const carol = await login('carol', 'carol-secret', 'SCRAM-SHA-512');
  assert.equal((await api('/topics', { cookie: carol })).status, 200);
  assert.equal((await api('/users/carol/SCRAM-SHA-512', { method: 'DELETE', cookie })).status, 200);
  assert.deepEqual(
    ((await api('/users', { cookie })).body as unknown as { user: string }[]).map((u) => u.user),
    ['reader'],
  );
  const quota = await api('/quotas', {
    method: 'PUT',
    body: { entity: [{ entityType: 'user', entityName: 'reader' }], set: { producer_byte_rate: 1024 } },
    cookie,
  });
  assert.equal(quota.status, 200, quota.text);
  assert.deepEqual((await api('/quotas', { cookie })).body, [{ entity: [{ entityType: 'user', entityName: 'reader' }], values: { producer_byte_rate: 1024 } }]);
  const reader = await login('reader', READER_PASSWORD, 'SCRAM-SHA-512');
  const refused = await api('/quotas', {
    method: 'PUT',
    body: { entity: [{ entityType: 'user', entityName: 'reader' }], set: { producer_byte_rate: 1e9 } },
    cookie: reader,
  });
  assert.equal(refused.status, 403, refused.text);
  assert.match(String(refused.body.error), /^CLUSTER_AUTHORIZATION_FAILED/);
  assert.equal((await api('/users', { cookie: reader })).status, 403);
});

test('bin/fjord-console.sh with a SASL --command-config asks each user to log in, the file mechanism first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-console-sasl-'));
  const props = join(dir, 'admin.properties');
  writeFileSync(
    props,
    'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n' +
      'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";\n',
  );
  const { child, line, stderr, exited } = await startConsoleCli(['--bootstrap-server', b.bootstrap, '--command-config', props, '--listen', '127.0.0.1:0']);
  try {
    const url = /^Fjord console at (http:\/\/127\.0\.0\.1:\d+\/) /.exec(line)?.[1];
    assert.ok(url, line);
    assert.deepEqual(await (await fetch(`${url}api/session`)).json(), { loginRequired: true, mechanisms: ['PLAIN', 'SCRAM-SHA-512', 'SCRAM-SHA-256'] });
    // The file's identity (a super user) is not lent to whoever opens the page.
    assert.equal((await fetch(`${url}api/topics`)).status, 401);
    const login = await fetch(`${url}api/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user: 'reader', password: READER_PASSWORD, mechanism: 'SCRAM-SHA-512' }),
    });
    assert.equal(login.status, 200);
    const topics = await fetch(`${url}api/topics`, { headers: { Cookie: login.headers.get('set-cookie')!.split(';')[0]! } });
    assert.deepEqual(
      ((await topics.json()) as { topics: { name: string }[] }).topics.map((t) => t.name),
      ['public'],
    );
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(await exited, 0, stderr());
  assert.equal(stderr(), '');
});

test('a session ends after its idle time, and at its maximum age however busy', async () => {
  const options = () => ({ bootstrapServers: b.bootstrap, security: { protocol: 'SASL_PLAINTEXT' as const } });
  const idle = new ConsoleSessions(options, { idleMs: 300, maxAgeMs: 60_000 });
  const aged = new ConsoleSessions(options, { idleMs: 60_000, maxAgeMs: 1000 });
  try {
    const body = { user: 'reader', password: READER_PASSWORD, mechanism: 'SCRAM-SHA-512' };
    const idleCookie = `fjord_console_session=${(await idle.login(body)).id}`;
    assert.ok(idle.apiFor(idleCookie));
    // Time must pass here: nothing else tells a session it is idle.
    await sleep(450);
    assert.equal(idle.apiFor(idleCookie), undefined);
    const agedCookie = `fjord_console_session=${(await aged.login(body)).id}`;
    const started = Date.now();
    while (Date.now() - started < 800) {
      assert.ok(aged.apiFor(agedCookie), 'a busy session lives until its maximum age');
      await sleep(100);
    }
    await sleep(Math.max(0, 1150 - (Date.now() - started)));
    assert.equal(aged.apiFor(agedCookie), undefined);
  } finally {
    await Promise.all([idle.close(), aged.close()]);
  }
});
