/**
 * The console with a topic of 10,000 partitions on one broker (issue 25: "the page stays usable:
 * paging, and the server bounds what it reads"). The API answers the topics list, a page of the
 * topic and the cluster page within a bound; what the console's Admin sends is counted at the
 * broker (its ListOffsets and DescribeLogDirs handlers wrapped in this process): offsets and
 * sizes are read for the page's 100 partitions only. In Debian's headless Chromium the
 * partitions table pages (next, previous, go to partition N), the page's DOM stays bounded, the
 * cluster page's totals count every partition, and the messages browser reads partition 9999.
 * A group committed on all 10,000 partitions: its page totals the lag of all, lists 100 a page;
 * a reset's preview lists 100 rows and counts the rest.
 * The log dir is on tmpfs where there is one: creating 10,000 partitions is fsync-bound (28 s
 * on disk, 11 s on /dev/shm at load 14 here).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { hasPeer, requirePeer } from '../helpers/peers.js';
import { Admin, Producer } from '../../src/client/index.js';
import { listOffsetsHandler } from '../../src/server/handlers/02-list-offsets.js';
import { describeLogDirsHandler } from '../../src/server/handlers/35-describe-log-dirs.js';
import type { ListOffsetsRequest } from '../../src/protocol/messages/02-list-offsets.js';
import type { DescribeLogDirsRequest } from '../../src/protocol/messages/35-describe-log-dirs.js';
import type { RequestContext } from '../../src/server/handlers/types.js';
import { launchChromium } from '../helpers/chromium.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOPIC = 'wide10k';
const PARTITIONS = 10_000;
/** The bound stated for an API answer here (2 cores shared with other suites). */
const ANSWER_MS = 2_000;
/** A group's page reads the latest offset of all its 10,000 partitions for the total lag (ListOffsets: 0.4-1 s of it here at load 9). */
const GROUP_ANSWER_MS = 3_000;

let b: TestBroker;
let dir: string;
let base: string;
let admin: Admin;
let browser: Browser | undefined;
let createMs = 0;

/** Partitions the console (client id fjord-console) asked about, per API, since the last reset. */
const asked = { listOffsets: [] as number[], logDirs: [] as (number | 'all')[] };
const fromConsole = (ctx: RequestContext) => ctx.header.clientId === 'fjord-console';

before(async () => {
  assert.ok(existsSync(join(ROOT, 'dist', 'console', 'assets', 'index.html')), 'the console is not built: run npm run build first');
  const listOffsets = listOffsetsHandler.handle;
  listOffsetsHandler.handle = (req, ctx) => {
    if (fromConsole(ctx)) for (const t of (req as ListOffsetsRequest).topics) for (const p of t.partitions) asked.listOffsets.push(p.partitionIndex);
    return listOffsets(req, ctx);
  };
  const logDirs = describeLogDirsHandler.handle;
  describeLogDirsHandler.handle = (req, ctx) => {
    const topics = (req as DescribeLogDirsRequest).topics;
    if (fromConsole(ctx)) asked.logDirs.push(...(topics === null ? ['all' as const] : topics.flatMap((t) => t.partitions)));
    return logDirs(req, ctx);
  };
  dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'fjord-console-wide-'));
  // Room above the 10,000 for the small topic (the default max.broker.partitions is 10,000).
  b = await startTestBroker({ 'metrics.listener': 'http://127.0.0.1:0', 'max.broker.partitions': '10100', 'offsets.topic.num.partitions': '1' }, dir);
  base = `http://127.0.0.1:${b.broker.observability.port}`;
  // Creating 10,000 partitions may pass the default 30 s request timeout on a loaded machine.
  admin = new Admin({ bootstrapServers: b.bootstrap, requestTimeoutMs: 120_000 });
  // Two requests: one may create at most 10,000 partitions (max.partitions.per.request).
  const start = performance.now();
  const created = await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS }], { timeoutMs: 120_000 });
  createMs = Math.round(performance.now() - start);
  const other = await admin.createTopics([{ name: 'narrow', numPartitions: 3 }]);
  assert.deepEqual([created.get(TOPIC), other.get('narrow')], [null, null]);
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  try {
    await producer.send({ topic: TOPIC, partition: 9999, key: 'last', value: 'the last partition' });
    await producer.send({ topic: TOPIC, partition: 9950, value: 'x'.repeat(1000) });
  } finally {
    await producer.close();
  }
  if (hasPeer('chromium')) browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await admin?.close();
  await b?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function timedGet<T>(path: string): Promise<{ status: number; body: T; ms: number }> {
  const start = performance.now();
  const res = await fetch(`${base}/api${path}`);
  const body = (await res.json()) as T;
  return { status: res.status, body, ms: Math.round(performance.now() - start) };
}

interface TopicPage {
  partitionCount: number;
  page: number;
  size: number;
  partitions: { partition: number; leader: number; earliest: string; latest: string; size: string | null }[];
}

interface ClusterView {
  topics: number;
  partitions: number;
  underReplicatedCount: number;
  logDirs: { partitions: number; partitionBytes: string }[];
}

/** Every partition the broker has, counted from Metadata (internal topics included). */
async function partitionTotal(): Promise<{ topics: number; partitions: number }> {
  const md = await admin.cluster.refreshMetadata(null);
  return { topics: md.topics.size, partitions: [...md.topics.values()].reduce((n, t) => n + t.partitions.length, 0) };
}

test('the API answers a 10,000-partition topic a page at a time, reading offsets and sizes for that page only', async (t) => {
  const list = await timedGet<{ total: number; topics: { name: string; partitions: number }[] }>(`/topics?search=${TOPIC}`);
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.topics, [{ name: TOPIC, internal: false, partitions: PARTITIONS, replicationFactor: 1, underReplicated: 0 }]);

  asked.listOffsets.length = 0;
  asked.logDirs.length = 0;
  const last = await timedGet<TopicPage>(`/topics/${TOPIC}?page=99`);
  assert.equal(last.status, 200);
  assert.equal(last.body.partitionCount, PARTITIONS);
  const shown = last.body.partitions.map((p) => p.partition);
  assert.deepEqual(
    shown,
    Array.from({ length: 100 }, (_, i) => 9900 + i),
  );
  const row = (n: number) => last.body.partitions.find((p) => p.partition === n)!;
  assert.deepEqual([row(9999).earliest, row(9999).latest, row(9950).latest, row(9900).latest], ['0', '1', '1', '0']);
  assert.ok(Number(row(9950).size) > 1000, `partition 9950 holds a 1000-byte value: ${row(9950).size}`);
  // Earliest and latest for each of the page's 100 partitions, and their sizes: nothing else.
  assert.deepEqual(
    [...asked.listOffsets].sort((x, y) => x - y),
    [...shown, ...shown].sort((x, y) => x - y),
  );
  assert.deepEqual(asked.logDirs, shown);

  // A page size past the cap is cut to 500.
  const capped = await timedGet<TopicPage>(`/topics/${TOPIC}?page=2&size=100000`);
  assert.equal(capped.body.size, 500);
  assert.deepEqual([capped.body.partitions.length, capped.body.partitions[0]!.partition], [500, 1000]);

  const cluster = await timedGet<ClusterView>('/cluster');
  const total = await partitionTotal();
  assert.ok(total.partitions >= PARTITIONS + 3, 'the other topics count too');
  assert.deepEqual([cluster.body.topics, cluster.body.partitions, cluster.body.underReplicatedCount], [total.topics, total.partitions, 0]);
  assert.equal(cluster.body.logDirs[0]!.partitions, total.partitions, 'the log dir holds every partition');

  const message = await timedGet<{ records: { offset: string; value: { text: string } }[] }>(`/topics/${TOPIC}/partitions/9999/messages`);
  assert.deepEqual(
    message.body.records.map((r) => `${r.offset}:${r.value.text}`),
    ['0:the last partition'],
  );
  const times = { list: list.ms, page: last.ms, capped: capped.ms, cluster: cluster.ms, messages: message.ms };
  t.diagnostic(`${PARTITIONS} partitions created in ${createMs} ms (load ${loadavg()[0]!.toFixed(1)}); answer times (ms): ${JSON.stringify(times)}`);
  for (const [what, ms] of Object.entries(times)) assert.ok(ms < ANSWER_MS, `${what} took ${ms} ms, over ${ANSWER_MS}`);
});

async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser!.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.setDefaultTimeout(15_000);
  return { page, errors };
}

const rows = (page: Page) => page.getByTestId('partition-row');
const firstPartition = async (page: Page) => Number(await rows(page).first().locator('td').first().textContent());

test('in the browser: the partitions table pages (next, previous, go to partition N), its DOM bounded; cluster totals; partition 9999 browsed', async (t) => {
  if (!requirePeer(t, 'chromium')) return;
  const { page, errors } = await openPage();
  try {
    await page.goto(`${base}/#/topics?search=${TOPIC}`);
    const topicRow = page.getByTestId('topic-row');
    await topicRow.getByText(TOPIC).waitFor();
    assert.equal(await topicRow.count(), 1);
    assert.equal(await topicRow.locator('td').nth(1).textContent(), String(PARTITIONS));
    const start = performance.now();
    await topicRow.getByRole('link', { name: TOPIC }).click();
    await page.getByTestId('page-info').getByText('page 1 of 100 (10000)').waitFor();
    const shownMs = Math.round(performance.now() - start);
    assert.equal(await rows(page).count(), 100);
    assert.equal(await firstPartition(page), 0);
    // The whole page, configs table included, stays a few thousand elements.
    const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
    assert.ok(elements < 2_500, `${elements} elements on the topic page`);

    await page.getByRole('button', { name: 'Next ›' }).click();
    await page.getByTestId('page-info').getByText('page 2 of 100').waitFor();
    assert.deepEqual([await rows(page).count(), await firstPartition(page)], [100, 100]);
    await page.getByRole('button', { name: '‹ Previous' }).click();
    await page.getByTestId('page-info').getByText('page 1 of 100').waitFor();
    assert.equal(await firstPartition(page), 0);

    const goTo = page.getByRole('form', { name: 'Go to partition' });
    await goTo.getByRole('spinbutton').fill('10000');
    await goTo.getByRole('button', { name: 'Go' }).click();
    assert.equal(await goTo.getByRole('alert').textContent(), `no partition 10000 in ${TOPIC}: it has partitions 0 to 9999`);
    await goTo.getByRole('spinbutton').fill('9999');
    await goTo.getByRole('button', { name: 'Go' }).click();
    await page.getByTestId('page-info').getByText('page 100 of 100').waitFor();
    const found = page.locator('tr.found');
    assert.equal(await found.locator('td').first().textContent(), '9999');
    assert.equal(await found.getByTestId('latest-offset').textContent(), '1');
    assert.equal(await rows(page).count(), 100);
    assert.equal(await page.getByRole('button', { name: 'Next ›' }).isDisabled(), true);

    await found.getByRole('link', { name: '9999' }).click();
    const message = page.getByTestId('message-row');
    await message.first().waitFor();
    assert.deepEqual([await message.count(), await message.getAttribute('data-offset')], [1, '0']);
    assert.match((await message.textContent()) ?? '', /the last partition/);

    const total = await partitionTotal();
    await page.goto(`${base}/#/cluster`);
    await page.getByTestId('partitions').waitFor();
    assert.deepEqual(
      [
        await page.getByTestId('topics').textContent(),
        await page.getByTestId('partitions').textContent(),
        await page.getByTestId('under-replicated').textContent(),
      ],
      [String(total.topics), String(total.partitions), '0'],
    );
    t.diagnostic(`topic page shown ${shownMs} ms after the click; ${elements} elements`);
    // The API's bound, doubled for the browser's own work on a loaded machine.
    assert.ok(shownMs < 2 * ANSWER_MS, `the topic page took ${shownMs} ms`);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a group committed on all 10,000 partitions: the total lag counts them all, the rows come 100 a page', async (t) => {
  await admin.alterGroupOffsets(
    'wide-readers',
    Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition, offset: 0n })),
  );
  const start = performance.now();
  const res = await fetch(`${base}/api/groups/wide-readers?page=99`);
  const text = await res.text();
  const ms = Math.round(performance.now() - start);
  const group = JSON.parse(text) as { partitionCount: number; size: number; totalLag: string; partitions: { partition: number; lag: string }[] };
  assert.equal(res.status, 200, text);
  // Partitions 9950 and 9999 hold a record each: a lag of 2 over the whole group.
  assert.deepEqual([group.partitionCount, group.size, group.totalLag], [PARTITIONS, 100, '2']);
  assert.deepEqual(
    group.partitions.map((p) => p.partition),
    Array.from({ length: 100 }, (_, i) => 9900 + i),
  );
  assert.deepEqual(
    group.partitions.filter((p) => p.lag !== '0').map((p) => p.partition),
    [9950, 9999],
  );
  t.diagnostic(`a page of the group: ${text.length} bytes in ${ms} ms`);
  assert.ok(text.length < 30_000, `${text.length} bytes`);
  assert.ok(ms < GROUP_ANSWER_MS, `the group page took ${ms} ms`);
  if (!requirePeer(t, 'chromium')) return;
  const { page, errors } = await openPage();
  try {
    await page.goto(`${base}/#/groups/wide-readers`);
    await page.getByRole('heading', { name: 'Lag per partition (10000)' }).waitFor();
    assert.equal(await page.getByTestId('total-lag').textContent(), '2');
    assert.equal(await page.getByTestId('lag-row').count(), 100);
    await page.getByRole('button', { name: 'Next ›' }).click();
    await page.getByTestId('page-info').getByText('page 2 of 100').waitFor();
    assert.equal(await page.getByTestId('lag-row').first().locator('td').nth(1).textContent(), '100');
    assert.equal(await page.getByTestId('lag-row').count(), 100);
    // A reset's preview lists the first 100 of the 10,000 partitions it would move, and a count.
    const reset = page.getByRole('form', { name: 'Reset offsets' });
    await reset.getByRole('combobox').selectOption('latest');
    await reset.getByRole('button', { name: 'Preview reset' }).click();
    await reset.getByText('and 9900 more partitions, not listed here').waitFor();
    assert.equal(await reset.getByTestId('plan-row').count(), 100);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
