/**
 * The web console (docs/console.md) end to end: one broker with metrics.listener serves it at /;
 * Debian's headless Chromium, driven by playwright-core, creates a topic, produces, browses by
 * offset and by time, and watches a group's lag fall while a Fjord consumer consumes; bad input
 * shows the server's one-line message. The JSON API's bounds (a huge value cut, partitions paged)
 * and bin/fjord-console.sh (run as a user runs it, against the same broker) are checked here too.
 * Bad input through the page and the API (an unknown topic or group, an offset past the end, a
 * malformed time, a 5 MB value, a body too large or not JSON, a path out of the assets) gets a
 * clear message and leaves the page working. Screenshots of each page visited: screenshots.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { Screenshots } from './screenshots.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { hasPeer, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { Admin, ConfigResourceType, Consumer, Producer } from '../../src/client/index.js';
import { launchChromium } from '../helpers/chromium.js';
import { startConsoleCli } from '../helpers/console-cli.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const shots = new Screenshots('console');

let b: TestBroker;
let base: string;
let admin: Admin;
let browser: Browser | undefined;

before(async () => {
  assert.ok(existsSync(join(ROOT, 'dist', 'console', 'assets', 'index.html')), 'the console is not built: run npm run build first');
  b = await startTestBroker({ 'metrics.listener': 'http://127.0.0.1:0' });
  base = `http://127.0.0.1:${b.broker.observability.port}`;
  admin = new Admin({ bootstrapServers: b.bootstrap });
  if (hasPeer('chromium')) browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await admin?.close();
  await b?.stop();
});

const openPage = () => shots.open(browser!);

/** The text of the page's error line once it shows. */
async function alertText(page: Page): Promise<string> {
  const alert = page.getByRole('alert').first();
  await alert.waitFor();
  return (await alert.textContent()) ?? '';
}

const shot = (page: Page, name: string, doc?: string) => shots.take(page, name, doc);

async function api(path: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/api${path}`, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

test('the listener serves the page, hashed assets cached as immutable, the API uncached; /metrics unchanged', async () => {
  const index = await fetch(`${base}/`);
  assert.equal(index.status, 200);
  assert.equal(index.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(index.headers.get('cache-control'), 'no-cache');
  const html = await index.text();
  const script = /src="(\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
  const style = /href="(\/assets\/style-[A-Z0-9]+\.css)"/.exec(html)?.[1];
  assert.ok(script && style, html);
  const again = await fetch(`${base}/`, { headers: { 'If-None-Match': index.headers.get('etag')! } });
  assert.equal(again.status, 304);
  const js = await fetch(`${base}${script}`);
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.equal((await fetch(`${base}${style}`)).headers.get('content-type'), 'text/css; charset=utf-8');
  assert.equal((await fetch(`${base}/assets/nope.js`)).status, 404);
  const cluster = await fetch(`${base}/api/cluster`);
  assert.equal(cluster.headers.get('cache-control'), 'no-store');
  const view = (await cluster.json()) as { brokers: unknown[]; underReplicatedCount: number; offlineCount: number; logDirs: { logDir: string }[] };
  assert.deepEqual([view.brokers.length, view.underReplicatedCount, view.offlineCount], [1, 0, 0]);
  assert.deepEqual(
    view.logDirs.map((d) => d.logDir),
    [b.dir],
  );
  // A change without a JSON content type (what a cross-site form sends) is refused.
  const form = await fetch(`${base}/api/topics`, { method: 'POST', body: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.status, 415);
  const metrics = await fetch(`${base}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(await metrics.text(), /^# HELP /m);
  assert.equal((await fetch(`${base}/health/live`)).status, 200);
  assert.equal((await fetch(`${base}/nothing-here`)).status, 404);
});

test('the API bounds what it reads and sends: a huge value is cut with its size, partitions come a page at a time', async () => {
  assert.equal((await admin.createTopics([{ name: 'wide', numPartitions: 30 }])).get('wide'), null);
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  try {
    await producer.send({ topic: 'wide', partition: 3, value: 'x'.repeat(300_000) });
    await producer.send({ topic: 'wide', partition: 3, value: Buffer.from([0, 1, 2, 255]) });
    for (const fruit of ['apple', 'banana', 'cherry', 'banana split']) await producer.send({ topic: 'wide', partition: 4, key: fruit[0]!, value: fruit });
    await producer.send({ topic: 'wide', partition: 4, value: 'plain', headers: { origin: 'Banana republic' } });
  } finally {
    await producer.close();
  }
  const page = await api('/topics/wide?page=1&size=10');
  assert.equal(page.status, 200);
  assert.equal(page.body.partitionCount, 30);
  assert.deepEqual(
    (page.body.partitions as { partition: number }[]).map((p) => p.partition),
    [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
  );
  const read = await api('/topics/wide/partitions/3/messages?offset=0');
  const records = read.body.records as { value: { kind: string; text: string; size: number; truncated: boolean } }[];
  assert.equal(records.length, 2);
  assert.equal(records[0]!.value.kind, 'text');
  assert.equal(records[0]!.value.size, 300_000);
  assert.equal(records[0]!.value.truncated, true);
  assert.ok(records[0]!.value.text.length <= 16 * 1024, `${records[0]!.value.text.length} characters sent`);
  assert.deepEqual([records[1]!.value.kind, records[1]!.value.text], ['binary', '00 01 02 ff']);
  // The filter looks at keys, values and headers, case-insensitively; newest first or forward.
  const offsets = async (q: string) => ((await api(`/topics/wide/partitions/4/messages?${q}`)).body.records as { offset: string }[]).map((r) => r.offset);
  assert.deepEqual(await offsets('filter=BANANA'), ['4', '3', '1']);
  assert.deepEqual(await offsets('filter=banana&offset=2'), ['3', '4']);
  assert.deepEqual(await offsets('filter=banana&offset=0&limit=1'), ['1']);
  assert.deepEqual(await offsets('limit=2'), ['4', '3']);
});

/** A request sent as written (fetch would normalise the path), with its answer's status and body. */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('bad input to the JSON API and the static files: 413, 400 and 404 with one clear line, nothing outside the assets served', async () => {
  const post = (path: string, body: string) => api(path, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
  // Over the 1 MiB bound: refused before it is parsed.
  const huge = await post('/topics/wide/messages', JSON.stringify({ value: 'x'.repeat(2 * 1024 * 1024) }));
  assert.deepEqual([huge.status, huge.body], [413, { error: 'request body over 1048576 bytes' }]);
  assert.deepEqual(await post('/topics', '{"name": "half'), { status: 400, body: { error: 'the request body is not valid JSON' } });
  assert.deepEqual(await post('/topics', '["a"]'), { status: 400, body: { error: 'the request needs a JSON object body' } });
  assert.deepEqual(await post('/topics', '{"name": 5}'), { status: 400, body: { error: 'name must be a string' } });
  assert.deepEqual(await post('/topics', '{"name": "p", "partitions": "many"}'), { status: 400, body: { error: 'partitions must be an integer' } });
  assert.deepEqual(await post('/topics/no-such-topic/messages', '{"value": "v"}'), { status: 404, body: { error: 'topic no-such-topic does not exist' } });
  assert.deepEqual(await api('/topics/%E0%A4%A'), { status: 400, body: { error: 'malformed percent-encoding in the path: /topics/%E0%A4%A' } });
  assert.deepEqual(await api('/topics/wide/partitions/3/messages?offset=-1'), {
    status: 400,
    body: { error: 'offset must be a non-negative integer, not "-1"' },
  });
  assert.deepEqual(await api('/nothing'), { status: 404, body: { error: 'no such API: /nothing' } });
  // The same API still answers after all that.
  assert.equal((await api('/topics/wide')).status, 200);
  // Paths out of the assets folder, encoded or not, as a client may send them.
  for (const path of [
    '/..%2f..%2fetc/passwd',
    '/assets/..%2f..%2f..%2f..%2fetc%2fpasswd',
    '/assets/../../../../etc/passwd',
    '/assets/%2e%2e/%2e%2e/package.json',
    '/assets/..%5c..%5cpackage.json',
    '/assets/%2e%2e%2fconsole-http.js',
  ]) {
    const res = await rawGet(path);
    assert.equal(res.status, 404, path);
    assert.doesNotMatch(res.body, /root:|"name": "fjord"/, path);
  }
  assert.equal((await rawGet('/')).status, 200);
});

test('a 5 MB value: read once by the server, shown cut with a notice, the page sent at most a bound; a 2 MB one refused by the produce form', async (t) => {
  const FIVE_MB = 5 * 1024 * 1024;
  assert.equal((await admin.createTopics([{ name: 'huge', numPartitions: 1, configs: { 'max.message.bytes': String(FIVE_MB + 4096) } }])).get('huge'), null);
  const producer = new Producer({ bootstrapServers: b.bootstrap, lingerMs: 0 });
  try {
    await producer.send({ topic: 'huge', value: 'small before' });
    await producer.send({ topic: 'huge', key: 'big', value: Buffer.alloc(FIVE_MB, 'fjord ') });
    await producer.send({ topic: 'huge', value: 'small after' });
  } finally {
    await producer.close();
  }
  // The bytes the API sends for the 5 MB record, counted on the wire: its 16,384 characters and little else.
  const res = await fetch(`${base}/api/topics/huge/partitions/0/messages?offset=1&limit=1`);
  const bytes = Buffer.from(await res.arrayBuffer());
  assert.equal(res.status, 200);
  assert.equal(Number(res.headers.get('content-length')), bytes.length);
  assert.ok(bytes.length < 20_000, `${bytes.length} bytes sent`);
  const [record] = (JSON.parse(bytes.toString('utf8')) as { records: { value: { size: number; truncated: boolean; text: string } }[] }).records;
  assert.deepEqual([record!.value.size, record!.value.truncated, record!.value.text.length], [FIVE_MB, true, 16_384]);
  if (!requirePeer(t, 'chromium')) return;
  const { page, errors } = await openPage();
  try {
    // The size of each browse answer the page received (a read cut short by the page's close is NaN, never unhandled).
    const answers: Promise<number>[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/api/topics/huge/partitions/0/messages'))
        answers.push(
          r.body().then(
            (body) => body.length,
            () => Number.NaN,
          ),
        );
    });
    await page.goto(`${base}/#/topics/huge/messages?partition=0`);
    const big = page.locator('[data-testid=message-row][data-offset="1"]');
    await big.waitFor();
    assert.equal(await page.getByTestId('message-row').count(), 3);
    assert.equal(await big.locator('[data-part=value] [role=note]').textContent(), `truncated: showing part of ${FIVE_MB} bytes`);
    assert.equal((await big.locator('[data-part=value] > span').textContent())?.length, 16_384);
    await shot(page, 'huge-value');
    // The page is still usable: the browse form moves on to the next record.
    const browse = page.getByRole('form', { name: 'Browse' });
    await browse.getByLabel('From').selectOption('offset');
    await browse.getByLabel('Offset', { exact: true }).fill('2');
    await browse.getByRole('button', { name: 'Show' }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=message-row]').length === 1);
    assert.equal(await page.locator('[data-testid=message-row] [data-part=value]').textContent(), 'small after');
    const sizes = await Promise.all(answers);
    assert.ok(sizes.length >= 2 && sizes.every((n) => n < 20_000), `the page received answers of ${sizes} bytes`);
    // A value too large for the API's body bound, pasted into the produce form: refused in one line; a small one goes.
    const produce = page.getByRole('form', { name: 'Produce' });
    await produce.getByLabel('Value', { exact: true }).fill('y'.repeat(2 * 1024 * 1024));
    await produce.getByRole('button', { name: 'Produce' }).click();
    assert.equal(await alertText(page), 'request body over 1048576 bytes');
    await shot(page, 'produce-too-large');
    await produce.getByLabel('Value', { exact: true }).fill('small again');
    await produce.getByRole('button', { name: 'Produce' }).click();
    await page.getByRole('status').filter({ hasText: 'Produced to partition 0 at offset 3' }).waitFor();
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('in the browser: create a topic, produce, browse newest first, by offset and by time; bad input gets a clear message', async (t) => {
  if (!requirePeer(t, 'chromium')) return;
  const { page, errors } = await openPage();
  try {
    await page.goto(`${base}/#/cluster`);
    await page.getByTestId('broker-row').first().waitFor();
    await shot(page, 'cluster', 'cluster');

    await page.goto(`${base}/#/topics`);
    const create = page.getByRole('form', { name: 'Create topic' });
    await create.getByLabel('Name').fill('ui-topic');
    await create.getByLabel('Partitions').fill('2');
    await create.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('status').filter({ hasText: 'Created topic ui-topic' }).waitFor();
    await page.getByRole('link', { name: 'ui-topic' }).waitFor();
    // The broker's refusal, in the broker's words.
    await create.getByLabel('Name').fill('ui-topic');
    await create.getByRole('button', { name: 'Create' }).click();
    assert.match(await alertText(page), /^TOPIC_ALREADY_EXISTS: Topic 'ui-topic' already exists/);
    await shot(page, 'topics');

    await page.goto(`${base}/#/topics/ui-topic/messages?partition=0`);
    const produce = page.getByRole('form', { name: 'Produce' });
    for (const [key, value, headers, offset] of [
      ['k1', '{"n":1,"tags":["a"]}', 'trace=abc', '0'],
      ['', 'plain text', '', '1'],
    ] as const) {
      await produce.getByLabel('Key').fill(key);
      await produce.getByLabel('Value', { exact: true }).fill(value);
      await produce.getByLabel('Headers (name=value per line)').fill(headers);
      await produce.getByRole('button', { name: 'Produce' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Produced to partition 0 at offset ${offset}` })
        .waitFor();
    }
    // Newest first (the list reloads after each produce: wait for the second one's).
    await page.locator('[data-testid=message-row][data-offset="1"]').waitFor();
    assert.deepEqual(await page.getByTestId('message-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-offset'))), ['1', '0']);
    const first = page.locator('[data-testid=message-row][data-offset="0"]');
    assert.equal(await first.locator('[data-part=value] pre').textContent(), '{\n  "n": 1,\n  "tags": [\n    "a"\n  ]\n}');
    assert.equal(await first.locator('[data-part="header trace"]').textContent(), 'abc');
    await shot(page, 'messages', 'topic-messages');

    const browse = page.getByRole('form', { name: 'Browse' });
    await browse.getByLabel('From').selectOption('offset');
    await browse.getByLabel('Offset', { exact: true }).fill('1');
    await browse.getByRole('button', { name: 'Show' }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=message-row]').length === 1);
    assert.equal(await page.getByTestId('message-row').getAttribute('data-offset'), '1');

    // By time, over records with known timestamps.
    const producer = new Producer({ bootstrapServers: b.bootstrap });
    try {
      await producer.send({ topic: 'ui-topic', partition: 1, value: 'old', timestamp: Date.parse('2020-01-01T00:00:00Z') });
      await producer.send({ topic: 'ui-topic', partition: 1, value: 'new', timestamp: Date.parse('2021-01-01T00:00:00Z') });
    } finally {
      await producer.close();
    }
    // By time, in the form: from mid-2020 on, only the 2021 record.
    await browse.getByLabel('Partition').fill('1');
    await browse.getByLabel('From').selectOption('time');
    await browse.getByLabel('Time', { exact: true }).fill('2020-06-01T00:00:00Z');
    await browse.getByRole('button', { name: 'Show' }).click();
    await page.waitForFunction(
      () => location.hash.includes('partition=1') && document.querySelector('[data-testid=message-row]')?.getAttribute('data-offset') === '1',
    );
    assert.equal(await page.getByTestId('message-row').count(), 1);
    assert.equal(await page.locator('[data-testid=message-row] [data-part=value]').textContent(), 'new');
    await shot(page, 'messages-by-time');

    // Bad input: a clear line, and the same page works again once the input is right.
    await page.goto(`${base}/#/topics/ui-topic/messages?partition=0&from=offset&at=999`);
    assert.equal(await alertText(page), 'offset 999 is past the end of ui-topic-0 (its latest offset is 2)');
    await shot(page, 'bad-offset');
    await browse.getByLabel('Offset', { exact: true }).fill('1');
    await browse.getByRole('button', { name: 'Show' }).click();
    await page.locator('[data-testid=message-row][data-offset="1"]').waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);

    await browse.getByLabel('From').selectOption('time');
    await browse.getByLabel('Time', { exact: true }).fill('yesterday');
    await browse.getByRole('button', { name: 'Show' }).click();
    assert.match(await alertText(page), /^malformed time "yesterday": give ISO 8601/);
    await shot(page, 'bad-time');
    await browse.getByLabel('Time', { exact: true }).fill('2020-01-01');
    await browse.getByRole('button', { name: 'Show' }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=message-row]').length === 2);
    assert.equal(await page.getByRole('alert').count(), 0);

    for (const [name, path, message] of [
      ['unknown-topic', '#/topics/no-such-topic', 'topic no-such-topic does not exist'],
      ['unknown-topic-messages', '#/topics/no-such-topic/messages', 'topic no-such-topic does not exist'],
      ['unknown-partition', '#/topics/ui-topic/messages?partition=7', 'partition 7 of topic ui-topic does not exist (it has 2)'],
      ['unknown-group', '#/groups/no-such-group', 'group no-such-group does not exist'],
    ] as const) {
      await page.goto(`${base}/${path}`);
      // The page's own line comes first (a group's page may add the history's below it).
      await page.getByRole('alert').filter({ hasText: message }).waitFor();
      assert.equal(await alertText(page), message, path);
      await shot(page, name);
    }
    // Still a working page: its own navigation leads on.
    await page.getByRole('navigation').getByRole('link', { name: 'Topics' }).click();
    await page.getByRole('link', { name: 'ui-topic' }).waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test("in the browser: a topic's configs set (a bad value refused in the broker's words) and reset, partitions added, the topic deleted", async (t) => {
  if (!requirePeer(t, 'chromium')) return;
  assert.equal((await admin.createTopics([{ name: 'changing', numPartitions: 1 }])).get('changing'), null);
  const { page, errors } = await openPage();
  page.on('dialog', (d) => void d.accept());
  try {
    await page.goto(`${base}/#/topics/changing`);
    await page.getByTestId('partition-row').first().waitFor();
    const set = page.getByRole('form', { name: 'Set config' });
    await set.getByLabel('Config').fill('retention.ms');
    await set.getByLabel('Value').fill('abc');
    await set.getByRole('button', { name: 'Set' }).click();
    assert.match(await alertText(page), /^INVALID_CONFIG: Invalid value abc for configuration retention\.ms/);
    await set.getByLabel('Value').fill('123456');
    await set.getByRole('button', { name: 'Set' }).click();
    const row = page.locator('tr.set[data-testid=config-row]').filter({ hasText: 'retention.ms' });
    await row.filter({ hasText: '123456' }).waitFor();
    assert.equal((await admin.describeConfigs(ConfigResourceType.Topic, 'changing', ['retention.ms']))[0]?.value, '123456');
    await row.getByRole('button', { name: 'reset' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await admin.describeConfigs(ConfigResourceType.Topic, 'changing', ['retention.ms']))[0]?.isDefault, true);

    await page.getByLabel('Partition count').fill('3');
    await page.getByRole('button', { name: 'Add partitions' }).click();
    await page.getByRole('status').filter({ hasText: 'changing now has 3 partitions' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=partition-row]').length === 3);
    await shot(page, 'topic');

    await page.getByRole('button', { name: 'Delete topic' }).click();
    await page.waitForFunction(() => location.hash === '#/topics');
    const deadline = Date.now() + 15_000;
    while ((await admin.listTopics()).includes('changing') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await admin.listTopics()).includes('changing'), false);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test("in the browser: a group's lag falls as a Fjord consumer consumes: 20, then 10, then 0", async (t) => {
  if (!requirePeer(t, 'chromium')) return;
  assert.equal((await admin.createTopics([{ name: 'lagging', numPartitions: 1 }])).get('lagging'), null);
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  try {
    for (let i = 0; i < 20; i++) await producer.send({ topic: 'lagging', value: `m${i}` });
  } finally {
    await producer.close();
  }
  await admin.alterGroupOffsets('ui-group', [{ topic: 'lagging', partition: 0, offset: 0n }]);
  const { page, errors } = await openPage();
  // Ten records a poll: the group commits half way, then the rest.
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, groupId: 'ui-group', enableAutoCommit: false, maxPollRecords: 10 });
  const consumeAndCommit = async (n: number) => {
    const got: bigint[] = [];
    const deadline = Date.now() + 20_000;
    while (got.length < n && Date.now() < deadline) got.push(...(await consumer.poll(500)).map((r) => r.offset));
    await consumer.commitSync();
    return got;
  };
  const totalLag = () => page.getByTestId('total-lag').textContent();
  try {
    await page.goto(`${base}/#/groups`);
    await page.getByRole('link', { name: 'ui-group' }).waitFor();
    await shot(page, 'groups');
    await page.getByRole('link', { name: 'ui-group' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid=total-lag]')?.textContent === '20');
    assert.equal(await page.getByTestId('lag').textContent(), '20');
    await shot(page, 'group-lag-20');
    consumer.subscribe(['lagging']);
    assert.deepEqual(await consumeAndCommit(10), [...Array(10).keys()].map(BigInt));
    // The page refreshes itself: each reading lower than the one before, without a reload.
    await page.waitForFunction(() => document.querySelector('[data-testid=total-lag]')?.textContent === '10', null, { timeout: 20_000 });
    assert.equal(await totalLag(), '10');
    await shot(page, 'group-lag-10');
    assert.deepEqual(
      await consumeAndCommit(10),
      [...Array(10).keys()].map((i) => BigInt(10 + i)),
    );
    await page.waitForFunction(() => document.querySelector('[data-testid=total-lag]')?.textContent === '0', null, { timeout: 20_000 });
    await page.getByTestId('member-row').first().waitFor();
    assert.equal(await page.getByTestId('group-state').textContent(), 'Stable');
    await shot(page, 'group-lag-0');
    assert.deepEqual(errors, []);
  } finally {
    await consumer.close();
    await page.close();
  }
});

test('bin/fjord-console.sh serves the same console against a cluster, and ends on SIGTERM with status 0', async () => {
  const help = await run(join(ROOT, 'bin', 'fjord-console.sh'), ['--help'], { timeoutMs: 30_000 });
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: fjord-console\.sh \[options\]/);
  const bad = await run(join(ROOT, 'bin', 'fjord-console.sh'), ['--bootstrap-server', b.bootstrap, '--listen', 'nowhere'], { timeoutMs: 30_000 });
  assert.deepEqual([bad.code, bad.stderr], [1, 'fjord-console.sh: invalid --listen address "nowhere" (expected host:port, e.g. 127.0.0.1:8080)\n']);

  const { child, line, stderr, exited } = await startConsoleCli(['--bootstrap-server', b.bootstrap, '--listen', '127.0.0.1:0']);
  try {
    const url = /^Fjord console at (http:\/\/127\.0\.0\.1:\d+\/) \(cluster \S+, 1 brokers\)$/.exec(line)?.[1];
    assert.ok(url, line);
    assert.match(await (await fetch(url)).text(), /<script type="module" src="\/assets\/app-/);
    const topics = (await (await fetch(`${url}api/topics?search=ui-`)).json()) as { topics: { name: string }[] };
    assert.ok(
      topics.topics.every((t) => t.name.includes('ui-')),
      JSON.stringify(topics),
    );
    assert.equal((await fetch(`${url}metrics`)).status, 404);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, stderr());
  assert.equal(stderr(), '');
});
