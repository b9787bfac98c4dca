/**
 * The console's group page over the offset history (issue 25, docs/console.md), end to end on one
 * broker in Debian's headless Chromium: a group consumes and commits; its page shows the lag in
 * time, the chart of position and lag over the history window and the history's lines; a reset
 * to the earliest offsets is previewed, refused in Kafka's words while a member is active, then
 * executed; the undo is previewed and executed; a new member resumes at the old offsets. The
 * history API's bounds and bad input are checked on the same broker. Screenshots of each page
 * visited: screenshots.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { Screenshots } from './screenshots.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { hasPeer, requirePeer } from '../helpers/peers.js';
import { Admin, Consumer, Producer } from '../../src/client/index.js';
import { encodeHistoryKey, encodeHistoryValue, historyPartitionFor, OFFSET_HISTORY_TOPIC } from '../../src/protocol/offset-history/history-record.js';
import { launchChromium } from '../helpers/chromium.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const shots = new Screenshots('console-groups');
const GROUP = 'shop';

let b: TestBroker;
let base: string;
let admin: Admin;
let browser: Browser | undefined;

before(async () => {
  assert.ok(existsSync(join(ROOT, 'dist', 'console', 'assets', 'index.html')), 'the console is not built: run npm run build first');
  b = await startTestBroker({ 'metrics.listener': 'http://127.0.0.1:0', 'offsets.topic.num.partitions': '3' });
  base = `http://127.0.0.1:${b.broker.observability.port}`;
  admin = new Admin({ bootstrapServers: b.bootstrap });
  if (hasPeer('chromium')) browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await admin?.close();
  await b?.stop();
});

async function api(path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const init = body === undefined ? {} : { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } };
  const res = await fetch(`${base}/api${path}`, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function committed(): Promise<number[]> {
  const offsets = (await admin.listGroupOffsets(GROUP)).get('orders');
  return [0, 1].map((p) => Number(offsets?.get(p)?.offset ?? -1n));
}

/** Polls `consumer` until `n` records came (or the deadline). */
async function consume(consumer: Consumer, n: number): Promise<{ partition: number; offset: bigint }[]> {
  const got: { partition: number; offset: bigint }[] = [];
  const deadline = Date.now() + 20_000;
  while (got.length < n && Date.now() < deadline) got.push(...(await consumer.poll(500)));
  return got;
}

const planOffsets = (page: Page) => page.getByTestId('plan-offset').allTextContents();

test("the group page: lag in time, the history's chart and lines, a reset previewed, refused while active, executed, and undone", async (t) => {
  if (!requirePeer(t, 'chromium')) return;
  assert.equal((await admin.createTopics([{ name: 'orders', numPartitions: 2 }])).get('orders'), null);
  const producer = new Producer({ bootstrapServers: b.bootstrap, lingerMs: 0 });
  const first = new Consumer({ bootstrapServers: b.bootstrap, groupId: GROUP, enableAutoCommit: false, autoOffsetReset: 'earliest' });
  const { page, errors } = await shots.open(browser!);
  let firstOpen = true;
  try {
    for (let i = 0; i < 10; i++) for (const partition of [0, 1]) await producer.send({ topic: 'orders', partition, value: `order ${i}` });
    first.subscribe(['orders']);
    assert.equal((await consume(first, 20)).length, 20);
    await first.commitSync();
    assert.deepEqual(await committed(), [10, 10]);
    // Three more per partition, written 90 s ago by their timestamps: 3 behind, 1m30s behind.
    for (let i = 0; i < 3; i++)
      for (const partition of [0, 1]) await producer.send({ topic: 'orders', partition, value: `late ${i}`, timestamp: Date.now() - 90_000 });

    await page.goto(`${base}/#/groups/${GROUP}`);
    await page.waitForFunction(() => document.querySelector('[data-testid=total-lag]')?.textContent === '6');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=lag-time]')].every((c) => /^1m\d\ds$/.test(c.textContent ?? '')));
    assert.equal(await page.getByTestId('lag-time').count(), 2);
    // The chart (uPlot draws on a canvas) and the history's lines of the commit.
    await page.locator('[data-testid=history-chart] canvas').first().waitFor();
    assert.equal(await page.getByTestId('history-chart').getAttribute('data-points'), '120');
    await page.locator('[data-testid=history-row][data-cause=commit]').nth(1).waitFor();
    await shot(page, 'group');

    // Preview: nothing changes; executing is refused while the member is in the group.
    const reset = page.getByRole('form', { name: 'Reset offsets' });
    await reset.getByRole('button', { name: 'Preview reset' }).click();
    await reset.getByTestId('plan-row').nth(1).waitFor();
    assert.deepEqual(await planOffsets(page), ['0', '0']);
    assert.deepEqual(await committed(), [10, 10]);
    await reset.scrollIntoViewIfNeeded();
    await shot(page, 'reset-preview', 'reset-preview');
    await reset.getByRole('button', { name: 'Execute reset' }).click();
    assert.equal(
      await reset.getByRole('alert').textContent(),
      `Assignments can only be reset if the group '${GROUP}' is inactive, but the current state is Stable.`,
    );
    await shot(page, 'reset-refused');
    assert.deepEqual(await committed(), [10, 10]);
    await first.close();
    firstOpen = false;
    await page.waitForFunction(() => document.querySelector('[data-testid=group-state]')?.textContent === 'Empty');
    const beforeReset = Date.now();
    await reset.getByRole('button', { name: 'Preview reset' }).click();
    await reset.getByRole('button', { name: 'Execute reset' }).click();
    await reset.getByRole('status').filter({ hasText: 'Done: 2 partition(s) moved' }).waitFor();
    assert.deepEqual(await committed(), [0, 0]);
    await page.locator('[data-testid=history-row][data-cause=reset]').nth(1).waitFor();
    await shot(page, 'group-history');

    // The chart's series over the API: the position now is the reset's, the lag all 13 records.
    const history = await api(`/groups/${GROUP}/history?window=1h&points=10`);
    assert.equal(history.status, 200, JSON.stringify(history.body));
    assert.equal((history.body.times as number[]).length, 10);
    assert.deepEqual(
      (history.body.position as number[][]).map((s) => s.at(-1)),
      [0, 0],
    );
    assert.deepEqual(
      (history.body.lag as number[][]).map((s) => s.at(-1)),
      [13, 13],
    );
    assert.equal(((await api(`/groups/${GROUP}/history?points=100000`)).body.times as number[]).length, 240);
    // Back to a time before the reset, previewed over the API: the offsets then.
    const back = await api(`/groups/${GROUP}/undo`, { time: String(beforeReset) });
    assert.deepEqual(
      (back.body.rows as { offset: string }[]).map((r) => r.offset),
      ['10', '10'],
    );

    const undo = page.getByRole('form', { name: 'Undo reset' });
    await undo.getByRole('button', { name: 'Preview undo' }).click();
    await undo.getByTestId('plan-row').nth(1).waitFor();
    assert.deepEqual(await planOffsets(page), ['10', '10']);
    assert.deepEqual(await committed(), [0, 0]);
    await shot(page, 'undo-preview');
    await undo.getByRole('button', { name: 'Execute undo' }).click();
    await undo.getByRole('status').filter({ hasText: 'Done: 2 partition(s) moved' }).waitFor();
    assert.deepEqual(await committed(), [10, 10]);
    // The undo is a reset too: two more reset lines.
    await page.locator('[data-testid=history-row][data-cause=reset]').nth(3).waitFor();
    await shot(page, 'undone');

    // A new member resumes where the group was before the reset: the 3 late records of each partition.
    const second = new Consumer({ bootstrapServers: b.bootstrap, groupId: GROUP, enableAutoCommit: false });
    try {
      second.subscribe(['orders']);
      const resumed = await consume(second, 6);
      assert.deepEqual(
        [0, 1].map((p) => resumed.filter((r) => r.partition === p).map((r) => Number(r.offset))),
        [
          [10, 11, 12],
          [10, 11, 12],
        ],
      );
    } finally {
      await second.close();
    }
    assert.deepEqual(errors, []);
  } finally {
    if (firstOpen) await first.close();
    await producer.close();
    await page.close();
  }
});

test('the history and reset API: bad input, a group without history, a window out of range', async () => {
  assert.deepEqual((await api(`/groups/${GROUP}/history?window=2h`)).body, { error: 'window must be one of 1h, 6h, 24h, 7d, not "2h"' });
  const sideways = await api(`/groups/${GROUP}/reset`, { to: 'sideways' });
  assert.deepEqual([sideways.status, sideways.body.error], [400, '"to" must be earliest, latest, time or shift, not "sideways"']);
  const badTime = await api(`/groups/${GROUP}/reset`, { to: 'time', time: 'yesterday' });
  assert.equal(badTime.status, 400);
  assert.match(String(badTime.body.error), /^malformed time "yesterday"/);
  const none = await api('/groups/nobody/undo', {});
  assert.deepEqual([none.status, none.body.error], [404, 'group nobody has no offset history']);
  const nothing = await api('/groups/nobody/reset', { to: 'earliest' });
  assert.deepEqual([nothing.status, nothing.body.error], [400, 'group nobody has no committed offsets to reset: name a topic']);
});

test("the chart's series over an hour of history: the position from the history, the lag against the log end at each time", async (t) => {
  // Records of 'past' written 57, 37 and 5 minutes ago; the group committed 3 at -52 min and 10 at -32 min.
  const MIN = 60_000;
  const now = Date.now();
  assert.equal((await admin.createTopics([{ name: 'past', numPartitions: 1 }])).get('past'), null);
  // The coordinator creates the history topic just after a cluster's first commit.
  await admin.alterGroupOffsets('seed', [{ topic: 'past', partition: 0, offset: 0n }]);
  const deadline = Date.now() + 15_000;
  let history = await admin.describeTopics([OFFSET_HISTORY_TOPIC]).then(
    ([h]) => h,
    () => undefined,
  );
  while (!history && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    history = await admin.describeTopics([OFFSET_HISTORY_TOPIC]).then(
      ([h]) => h,
      () => undefined,
    );
  }
  assert.ok(history, 'the history topic was not created');
  // Kafka's admin client id: the one a broker lets write to an internal topic.
  const producer = new Producer({ bootstrapServers: b.bootstrap, lingerMs: 0, clientId: '__admin_client' });
  try {
    for (const ago of [57, 37, 5]) for (let i = 0; i < 5; i++) await producer.send({ topic: 'past', partition: 0, value: `v${i}`, timestamp: now - ago * MIN });
    for (const [ago, previousOffset, newOffset] of [
      [52, -1n, 3n],
      [32, 3n, 10n],
    ] as const) {
      const value = {
        topic: 'past',
        partition: 0,
        previousOffset,
        newOffset,
        leaderEpoch: -1,
        cause: 'commit' as const,
        memberId: 'm',
        clientId: 'c',
        clientHost: '',
        generation: 1,
      };
      await producer.send({
        topic: OFFSET_HISTORY_TOPIC,
        partition: historyPartitionFor('chart', history!.partitions.length),
        key: encodeHistoryKey({ group: 'chart' }),
        value: encodeHistoryValue(value),
        timestamp: now - ago * MIN,
      });
    }
  } finally {
    await producer.close();
  }
  // Sampled every 10 minutes: -60, -50, ..., 0.
  const view = await api('/groups/chart/history?window=1h&points=7');
  assert.equal(view.status, 200, JSON.stringify(view.body));
  assert.deepEqual(view.body.partitions, [{ topic: 'past', partition: 0 }]);
  assert.deepEqual(view.body.position, [[null, 3, 3, 10, 10, 10, 10]]);
  assert.deepEqual(view.body.lag, [[null, 2, 2, 0, 0, 0, 5]]);
  assert.deepEqual(
    (view.body.changes as { newOffset: string }[]).map((c) => c.newOffset),
    ['10', '3'],
  );
  // The last 6 hours: the same changes.
  assert.equal((await api('/groups/chart/history?window=6h')).body.changeCount, 2);
  if (!requirePeer(t, 'chromium')) return;
  // A commit of the offset it has (10) makes it a group the broker knows, with no change in the history's lines.
  await admin.alterGroupOffsets('chart', [{ topic: 'past', partition: 0, offset: 10n }]);
  const { page, errors } = await shots.open(browser!);
  try {
    await page.goto(`${base}/#/groups/chart`);
    await page.getByTestId('lag-row').first().waitFor();
    await page.locator('[data-testid=history-chart] canvas').first().waitFor({ timeout: 15_000 });
    await page.locator('[data-testid=history-row]').nth(1).waitFor({ timeout: 15_000 });
    await shot(page, 'group-chart-summed', 'group-history');
    await page.getByLabel('Lines').selectOption('partition');
    await page.locator('[data-testid=history-chart] canvas').first().waitFor({ timeout: 15_000 });
    await shot(page, 'group-chart');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

const shot = (page: Page, name: string, doc?: string) => shots.take(page, name, doc);
