/**
 * The offset history (issue 25) on three broker processes and real ZooKeeper, as a user runs it:
 * a member's commits through the group's coordinator; bin/kafka-consumer-groups.sh --history,
 * --reset-offsets and --undo-reset against the cluster; bin/fjord-console.sh's groups API; the
 * history partition moved (reassignment + preferred election) to another broker than the offsets
 * partition, so the coordinator forwards its batches there (and counts them in its
 * fjord_offset_history_* metrics); then the coordinator killed -9 right after a burst of
 * acknowledged commits: the history goes on from the new coordinator, and what the kill lost is
 * measured. The writer is best effort after the commit's answer (the entries of the last tens of
 * milliseconds may be lost): asserted is that what survives is an unbroken prefix of the
 * acknowledged changes, and that the first change after the failover starts from the last
 * acknowledged offset. Last, the console in Debian's headless Chromium (issue 25's "works against
 * a 3-broker cluster"): fjord-console.sh's cluster page without the killed broker (listed as
 * down, partitions under-replicated), then with it back (3 brokers, the controller, none
 * under-replicated); the RF-3 topic's leaders, replicas and ISR; and, served by the
 * metrics.listener of a broker that does not coordinate the group, its lag, chart, reset and
 * undo. Needs `npx tsc -p tsconfig.json` and `npm run build` first (bin/ runs dist/, the console
 * its bundle). Screenshots go to $TMPDIR/fjord-console-screens (never committed).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { freePort } from '../interop/groups/crash-helpers.js';
import { offsetsPartitionFor, waitForTopic, zkTopic } from './cluster-clients.js';
import { moveLine, readGroupHistory } from '../coordinator/offset-history-read.js';
import { parsePromText, value } from '../server/metrics/state-prom-text.js';
import { Admin, Consumer, Producer } from '../../src/client/index.js';
import { OFFSET_HISTORY_TOPIC } from '../../src/protocol/offset-history/history-record.js';
import { launchChromium } from '../helpers/chromium.js';
import { startConsoleCli } from '../helpers/console-cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOPIC = 'hc';
const GROUP = 'hc-app';
const OFFSETS_PARTITIONS = 10; // test/helpers/cluster.ts sets offsets.topic.num.partitions=10
/** The group's partition of both __consumer_offsets and the history (same count, same hash). */
const P = offsetsPartitionFor(GROUP, OFFSETS_PARTITIONS);
/** Admin commits made just before the kill, each moving partition 0 by one. */
const BURST = 40;
const RECORDS_0 = 210;
const SCREENS = join(tmpdir(), 'fjord-console-screens');

let c: Cluster | undefined;
const metricsPorts: number[] = [];
let console_: { child: ChildProcess; url: string } | undefined;
/** The broker coordinating GROUP at the start (leader of __consumer_offsets-P). */
let coordinator = -1;

before(async () => {
  if (!Cluster.available()) return;
  for (let i = 0; i < 3; i++) metricsPorts.push(await freePort());
  c = await Cluster.start({
    props: { 'offsets.topic.replication.factor': '3', 'group.initial.rebalance.delay.ms': '0' },
    brokerProps: (id) => ({ 'metrics.listener': `http://127.0.0.1:${metricsPorts[id]}` }),
  });
});
after(async () => {
  const child = console_?.child;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
  await c?.stop();
});

const tool = (bootstrap: string, ...args: string[]) =>
  run(join(ROOT, 'bin', 'kafka-consumer-groups.sh'), ['--bootstrap-server', bootstrap, ...args], { timeoutMs: 60_000 });
const bin = (name: string, ...args: string[]) => run(join(ROOT, 'bin', name), args, { timeoutMs: 60_000 });

/** --history's lines for TOPIC: `partition old->new cause`. */
function historyLines(stdout: string): string[] {
  const out: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^\S+Z +(\S+) +(\d+) +(\S+) -> (\S+) +(\S+)/.exec(line);
    if (m && m[1] === TOPIC) out.push(`${m[2]} ${m[3]}->${m[4]} ${m[5]}`);
  }
  return out;
}

/** Polls until the group gave the member both partitions. */
async function assigned(cluster: Cluster, consumer: Consumer, timeoutMs: number): Promise<void> {
  await cluster.waitFor('the member assigned both partitions', timeoutMs, async () => {
    await consumer.poll(200);
    return consumer.assignment().length === 2;
  });
}

async function scrape(id: number): Promise<ReturnType<typeof parsePromText>> {
  const res = await fetch(`http://127.0.0.1:${metricsPorts[id]}/metrics`);
  assert.equal(res.status, 200);
  return parsePromText(await res.text());
}

async function consoleGet<T>(path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${console_!.url}api/${path}`);
  return { status: res.status, body: (await res.json()) as T };
}

interface GroupView {
  state: string;
  coordinator: { nodeId: number };
  partitions: { topic: string; partition: number; committed: string | null; latest: string | null }[];
}

const committedIn = (g: GroupView): string =>
  g.partitions
    .filter((p) => p.topic === TOPIC)
    .map((p) => `${p.partition}:${p.committed}/${p.latest}`)
    .join(' ');

test("a member's commits through its coordinator; --history, --reset-offsets and --undo-reset against the cluster; the console's groups API", {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const cluster = c!;
  await cluster.waitForRegistered([0, 1, 2]);
  const bootstrap = cluster.bootstrap();
  const admin = new Admin({ bootstrapServers: bootstrap });
  const producer = new Producer({ bootstrapServers: bootstrap, acks: -1 });
  try {
    await admin.createTopics([{ name: TOPIC, numPartitions: 2, replicationFactor: 3 }]);
    await waitForTopic(cluster, TOPIC);
    // Partition 0 holds every offset the test commits (up to 200), partition 1 ten records.
    await Promise.all(Array.from({ length: RECORDS_0 + 10 }, (_, i) => producer.send({ topic: TOPIC, partition: i < RECORDS_0 ? 0 : 1, value: `v${i}` })));
  } finally {
    await producer.close();
    await admin.close();
  }

  const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: GROUP, clientId: 'hc-member', autoOffsetReset: 'earliest', enableAutoCommit: false });
  try {
    consumer.subscribe([TOPIC]);
    await assigned(cluster, consumer, 30_000);
    await consumer.commitSync([
      [{ topic: TOPIC, partition: 0 }, { offset: 3n }],
      [{ topic: TOPIC, partition: 1 }, { offset: 4n }],
    ]);
    // Partition 1 does not move: no entry for it (and no alive entry, partition 0 moved).
    await consumer.commitSync([
      [{ topic: TOPIC, partition: 0 }, { offset: 6n }],
      [{ topic: TOPIC, partition: 1 }, { offset: 4n }],
    ]);
  } finally {
    await consumer.close();
  }
  const offsets = await waitForTopic(cluster, '__consumer_offsets');
  coordinator = offsets.partitions[P]!.leader;
  t.diagnostic(`${GROUP}: __consumer_offsets-${P} led by broker ${coordinator}, replicas ${offsets.partitions[P]!.replicas.join(',')}`);

  const memberLines = ['0 -->3 commit', '1 -->4 commit', '0 3->6 commit'];
  const history = await cluster.waitFor(`${GROUP}'s history of its commits`, 30_000, async () => {
    const r = await tool(bootstrap, '--describe', '--group', GROUP, '--history');
    return r.code === 0 && historyLines(r.stdout).length >= 3 ? r : undefined;
  });
  assert.deepEqual(historyLines(history.stdout), memberLines, history.stdout);
  assert.match(history.stdout, /^\nTIME +TOPIC +PARTITION +OLD -> NEW +CAUSE +MEMBER\/CLIENT\n/);
  assert.match(history.stdout, /\/hc-member *$/m, 'the member and client id of the commit');

  const reset = await tool(bootstrap, '--reset-offsets', '--group', GROUP, '--topic', TOPIC, '--to-earliest', '--execute');
  assert.equal(reset.code, 0, reset.stderr);
  assert.match(reset.stdout, /\nTo undo this reset: kafka-consumer-groups\.sh --bootstrap-server \S+ --undo-reset --group hc-app --execute\n$/);
  const undo = await tool(bootstrap, '--undo-reset', '--group', GROUP, '--execute');
  assert.equal(undo.code, 0, undo.stderr);
  assert.match(undo.stdout, /\nhc-app +hc +0 +6 *\nhc-app +hc +1 +4 *\n/);
  const afterUndo = await tool(bootstrap, '--describe', '--group', GROUP, '--history');
  assert.deepEqual(historyLines(afterUndo.stdout), [...memberLines, '0 6->0 reset', '1 4->0 reset', '0 0->6 reset', '1 0->4 reset'], afterUndo.stdout);

  // The console against the cluster, as a user starts it: the group, its coordinator and offsets.
  const { child, line } = await startConsoleCli(['--bootstrap-server', bootstrap, '--listen', '127.0.0.1:0']);
  console_ = { child, url: '' };
  const url = /^Fjord console at (http:\/\/127\.0\.0\.1:\d+\/) \(cluster \S+, 3 brokers\)$/.exec(line)?.[1];
  assert.ok(url, line);
  console_.url = url;
  const groups = await consoleGet<{ groupId: string; state: string }[]>('groups');
  assert.equal(groups.status, 200);
  assert.deepEqual(
    groups.body.filter((g) => g.groupId === GROUP).map((g) => g.state),
    ['Empty'],
    JSON.stringify(groups.body),
  );
  const group = await consoleGet<GroupView>(`groups/${GROUP}`);
  assert.equal(group.status, 200, JSON.stringify(group.body));
  assert.equal(group.body.coordinator.nodeId, coordinator);
  assert.equal(committedIn(group.body), '0:6/210 1:4/10');
});

test('the history partition led by another broker than the coordinator: batches are forwarded there, and counted in the metrics', {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper') || coordinator < 0) return;
  const cluster = c!;
  const bootstrap = cluster.bootstrap();
  const history = await waitForTopic(cluster, OFFSET_HISTORY_TOPIC);
  const replicas = history.partitions[P]!.replicas;
  assert.deepEqual(replicas, (await zkTopic(cluster, '__consumer_offsets'))!.partitions[P]!.replicas, 'the history copies the offsets topic assignment');
  assert.equal(history.partitions[P]!.leader, coordinator, 'so the coordinator leads its history partition');
  // The same replicas, the last first; a preferred election then moves the leadership to it.
  const target = replicas[2]!;
  const plan = join(cluster.root, 'history-reorder.json');
  await writeFile(
    plan,
    JSON.stringify({ version: 1, partitions: [{ topic: OFFSET_HISTORY_TOPIC, partition: P, replicas: [target, replicas[0], replicas[1]] }] }),
  );
  const reassigned = await bin('kafka-reassign-partitions.sh', '--bootstrap-server', bootstrap, '--execute', '--reassignment-json-file', plan);
  assert.equal(reassigned.code, 0, reassigned.stderr);
  await cluster.waitFor(
    `${OFFSET_HISTORY_TOPIC}-${P} reordered`,
    30_000,
    async () => (await zkTopic(cluster, OFFSET_HISTORY_TOPIC))?.partitions[P]?.replicas[0] === target,
  );
  const elected = await bin(
    'kafka-leader-election.sh',
    '--bootstrap-server',
    bootstrap,
    '--election-type',
    'PREFERRED',
    '--topic',
    OFFSET_HISTORY_TOPIC,
    '--partition',
    String(P),
  );
  assert.equal(elected.code, 0, elected.stderr);
  assert.equal((await zkTopic(cluster, OFFSET_HISTORY_TOPIC))!.partitions[P]!.leader, target);
  assert.equal((await zkTopic(cluster, '__consumer_offsets'))!.partitions[P]!.leader, coordinator, 'the coordinator did not move');

  const before = await scrape(coordinator);
  const written0 = value(before, 'fjord_offset_history_records_total', { result: 'written' });
  assert.equal(written0, 7, "the coordinator wrote the member's 3 changes, the reset's 2 and the undo's 2");
  assert.equal(value(before, 'fjord_offset_history_records_total', { result: 'dropped' }), 0);

  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    await admin.alterGroupOffsets(GROUP, [{ topic: TOPIC, partition: 1, offset: 9n }]);
  } finally {
    await admin.close();
  }
  const entries = await readGroupHistory(bootstrap, GROUP, (e) => e.some((x) => x.partition === 1 && x.newOffset === 9n), 30_000);
  assert.equal(moveLine(entries.at(-1)!), `${TOPIC}-1 4->9 reset`);
  const after = await cluster.waitFor('the forwarded batch counted', 10_000, async () => {
    const s = await scrape(coordinator);
    return value(s, 'fjord_offset_history_records_total', { result: 'written' }) === written0 + 1 ? s : undefined;
  });
  assert.equal(value(after, 'fjord_offset_history_records_total', { result: 'dropped' }), 0);
  assert.equal(value(after, 'fjord_offset_history_append_failures_total'), 0);
  assert.equal(value(after, 'fjord_offset_history_queued_records'), 0);
  assert.ok(value(after, 'fjord_offset_history_batches_total') >= 1);
  const leaderSide = await scrape(target);
  assert.equal(value(leaderSide, 'fjord_offset_history_records_total', { result: 'written' }), 0, 'the history leader wrote nothing of its own');
});

test('kill -9 of the coordinator right after acknowledged commits: the history goes on from the new coordinator; what the kill lost is measured', {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper') || coordinator < 0) return;
  const cluster = c!;
  const historyLeader = (await zkTopic(cluster, OFFSET_HISTORY_TOPIC))!.partitions[P]!.leader;
  assert.notEqual(historyLeader, coordinator, 'the previous test moved the history partition');

  // A burst of admin commits (the group is empty), each acknowledged, then kill -9 at once.
  const admin = new Admin({ bootstrapServers: cluster.bootstrap() });
  const burstStart = Date.now();
  let burstMs: number;
  let killedAt: number;
  try {
    for (let i = 1; i <= BURST; i++) await admin.alterGroupOffsets(GROUP, [{ topic: TOPIC, partition: 0, offset: BigInt(100 + i) }]);
    burstMs = Date.now() - burstStart;
    await cluster.broker(coordinator).kill(); // before anything else: what the writer still holds is lost
    killedAt = Date.now();
  } finally {
    await admin.close();
  }
  await cluster.expireDead(coordinator); // its session closed at once, not after the timeout
  const live = cluster.brokers.filter((b) => b.id !== coordinator).map((b) => b.id);
  const bootstrap = cluster.bootstrap(live);

  const moved = await cluster.waitFor(`a new leader of __consumer_offsets-${P}`, 60_000, async () => {
    const p = (await zkTopic(cluster, '__consumer_offsets'))?.partitions[P];
    return p && p.leader >= 0 && p.leader !== coordinator ? p.leader : undefined;
  });
  t.diagnostic(`coordinator ${coordinator} killed; broker ${moved} coordinates ${GROUP} ${Date.now() - killedAt} ms later; history led by ${historyLeader}`);

  // The next change, by a member of the group on the new coordinator: it starts from the last acknowledged offset.
  const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: GROUP, clientId: 'hc-member-2', enableAutoCommit: false });
  try {
    consumer.subscribe([TOPIC]);
    await assigned(cluster, consumer, 60_000);
    await consumer.commitSync([[{ topic: TOPIC, partition: 0 }, { offset: 200n }]]);
  } finally {
    await consumer.close();
  }
  const entries = await readGroupHistory(bootstrap, GROUP, (e) => e.some((x) => x.newOffset === 200n), 30_000);
  const after = entries.at(-1)!;
  assert.equal(moveLine(after), `${TOPIC}-0 ${100 + BURST}->200 commit`, 'the new coordinator loaded the last acknowledged offset');

  const burst = entries.filter((e) => e.partition === 0 && e.newOffset > 100n && e.newOffset <= BigInt(100 + BURST));
  const kept = burst.map((e) => Number(e.newOffset) - 100);
  assert.deepEqual(
    kept,
    Array.from({ length: kept.length }, (_, i) => i + 1),
    `what survived is an unbroken prefix of the acknowledged burst: ${burst.map(moveLine).join(', ')}`,
  );
  assert.equal(burst[0]?.previousOffset, 6n, 'the burst starts from the undone offset');
  t.diagnostic(`kill -9 right after ${BURST} acknowledged commits (${burstMs} ms): ${kept.length} kept, ${BURST - kept.length} lost`);

  // The tools and the console, through the live brokers, after the failover.
  const shown = await tool(bootstrap, '--describe', '--group', GROUP, '--history', '--topic', `${TOPIC}:0`);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(historyLines(shown.stdout).at(-1), `0 ${100 + BURST}->200 commit`, shown.stdout);
  const group = await cluster.waitFor('the console to name the new coordinator', 30_000, async () => {
    const g = await consoleGet<GroupView>(`groups/${GROUP}`);
    return g.status === 200 && g.body.coordinator.nodeId === moved ? g.body : undefined;
  });
  assert.equal(committedIn(group), '0:200/210 1:9/10');
});

/** The live broker ids the cluster page lists, its rows of brokers down, its controller and under-replicated count. */
async function clusterPage(page: Page): Promise<{ brokers: number[]; down: number[]; controller: string; underReplicated: number }> {
  await page.reload();
  await page.getByTestId('under-replicated').waitFor();
  const brokers = (await page.getByTestId('broker-row').locator('td:first-child').allTextContents()).map((s) => Number.parseInt(s, 10));
  const down = (await page.getByTestId('missing-broker-row').locator('td:first-child').allTextContents()).map(Number);
  return {
    brokers,
    down,
    controller: (await page.getByTestId('controller').textContent())!,
    underReplicated: Number(await page.getByTestId('under-replicated').textContent()),
  };
}

/** The topic page's rows: `partition leader replicas / isr`, each row marked when under-replicated. */
async function partitionRows(page: Page): Promise<string[]> {
  await page.reload();
  const rows = page.getByTestId('partition-row');
  await rows.first().waitFor();
  return rows.evaluateAll((trs) =>
    trs.map((tr) => {
      const td = [...tr.querySelectorAll('td')].map((c) => c.textContent);
      return `${td[0]} ${td[1]} ${td[2]} / ${td[3]}${tr.classList.contains('warn') ? ' !' : ''}`;
    }),
  );
}

test('the console in the browser on the cluster: a broker gone and back; leaders, replicas, ISR; lag, chart, reset and undo served by a broker that does not coordinate the group', {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'chromium') || coordinator < 0 || !console_?.url) return;
  const cluster = c!;
  const killed = coordinator; // the previous test killed it
  const browser = await launchChromium();
  mkdirSync(SCREENS, { recursive: true });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    page.setDefaultTimeout(15_000);
    // bin/fjord-console.sh's console (bootstrapped with all three, one of them dead).
    await page.goto(`${console_.url}#/cluster`);
    const down = await cluster.waitFor(`the cluster page without broker ${killed}`, 30_000, async () => {
      const v = await clusterPage(page);
      return v.brokers.length === 2 && v.underReplicated > 0 ? v : undefined;
    });
    assert.ok(!down.brokers.includes(killed), `broker ${killed} listed: ${down.brokers.join(',')}`);
    assert.deepEqual(down.down, [killed], 'the killed broker is listed as down');
    assert.ok(down.brokers.includes(Number(down.controller)), 'the controller is a live broker');
    await page.screenshot({ path: join(SCREENS, 'cluster-broker-down.png'), fullPage: true });
    await page.goto(`${console_.url}#/topics/${TOPIC}`);
    const downRows = await partitionRows(page);
    assert.equal(downRows.length, 2);
    for (const row of downRows) {
      const [, leader, replicas, isr] = /^\d+ (\d+) ([\d, ]+) \/ ([\d, ]+) !$/.exec(row) ?? [];
      assert.ok(leader && replicas && isr, `an under-replicated row: ${row}`);
      assert.deepEqual(replicas.split(', ').map(Number).sort(), [0, 1, 2], row);
      assert.ok(!isr.split(', ').includes(String(killed)) && Number(leader) !== killed, row);
    }

    await cluster.broker(killed).start();
    await page.goto(`${console_.url}#/cluster`);
    const up = await cluster.waitFor(`the cluster page with broker ${killed} back and every replica in sync`, 60_000, async () => {
      const v = await clusterPage(page);
      return v.brokers.length === 3 && v.underReplicated === 0 ? v : undefined;
    });
    assert.deepEqual([[...up.brokers].sort(), up.down], [[0, 1, 2], []]);
    assert.match((await page.getByTestId('broker-row').allTextContents()).join('|'), new RegExp(`${up.controller} \\(controller\\)`));
    await page.screenshot({ path: join(SCREENS, 'cluster-3-brokers.png'), fullPage: true });
    await page.goto(`${console_.url}#/topics/${TOPIC}`);
    for (const row of await partitionRows(page)) assert.match(row, /^\d+ \d+ (\d), (\d), (\d) \/ (?!.*!)\d, \d, \d$/, row);

    // A broker's own console (metrics.listener) on a broker that does not coordinate the group.
    const coordinatorNow = (await consoleGet<GroupView>(`groups/${GROUP}`)).body.coordinator.nodeId;
    const serving = [0, 1, 2].find((id) => id !== coordinatorNow)!;
    const base = `http://127.0.0.1:${metricsPorts[serving]}/`;
    await page.goto(`${base}#/groups/${GROUP}`);
    await page.getByTestId('group-state').getByText('Empty').waitFor();
    assert.equal(await page.getByTestId('coordinator').textContent(), String(coordinatorNow));
    assert.deepEqual(await page.getByTestId('lag').allTextContents(), ['10', '1']);
    assert.equal(await page.getByTestId('lag-time').count(), 2);
    await page.locator('[data-testid=history-chart] canvas').first().waitFor();
    const historyRows = page.getByTestId('history-row');
    const rowsBefore = await historyRows.count();
    assert.ok(rowsBefore >= 8, `the history's lines so far: ${rowsBefore}`);

    const reset = page.getByRole('form', { name: 'Reset offsets' });
    await reset.getByRole('button', { name: 'Preview reset' }).click();
    await reset.getByTestId('plan-row').nth(1).waitFor();
    await reset.getByRole('button', { name: 'Execute reset' }).click();
    await reset.getByRole('status').filter({ hasText: 'Done: 2 partition(s) moved' }).waitFor();
    const group = await consoleGet<GroupView>(`groups/${GROUP}`);
    assert.equal(committedIn(group.body), '0:0/210 1:0/10');
    const undo = page.getByRole('form', { name: 'Undo reset' });
    await undo.getByRole('button', { name: 'Preview undo' }).click();
    await undo.getByTestId('plan-row').nth(1).waitFor();
    assert.deepEqual(await undo.getByTestId('plan-offset').allTextContents(), ['200', '9']);
    await undo.getByRole('button', { name: 'Execute undo' }).click();
    await undo.getByRole('status').filter({ hasText: 'Done: 2 partition(s) moved' }).waitFor();
    assert.equal(committedIn((await consoleGet<GroupView>(`groups/${GROUP}`)).body), '0:200/210 1:9/10');
    // The reset's two lines and the undo's two, newest first, read back from the history by the serving broker.
    await historyRows.nth(rowsBefore + 3).waitFor();
    const newest = await historyRows.evaluateAll((trs) => trs.slice(0, 4).map((tr) => [2, 3, 4].map((i) => tr.children[i]!.textContent).join(' ')));
    assert.deepEqual(newest.sort(), ['0 0 → 200 reset', '0 200 → 0 reset', '1 0 → 9 reset', '1 9 → 0 reset']);
    assert.equal((await consoleGet<GroupView>(`groups/${GROUP}`)).body.coordinator.nodeId, coordinatorNow, 'the coordinator did not move meanwhile');
    await page.screenshot({ path: join(SCREENS, 'cluster-group.png'), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
