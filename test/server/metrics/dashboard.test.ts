/**
 * The Grafana dashboard (dashboards/fjord-overview.json): it is the generator's output
 * (tools/dashboard/), a well-formed Grafana 10 dashboard on the DS_PROMETHEUS data source, and
 * every metric its queries name is served by a live broker's /metrics after a small workload,
 * with the labels the queries match on. The cluster-only families (controller events, ZooKeeper
 * session) are checked on a ZooKeeper cluster in test/replication/inproc-harness.test.ts.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { renderFjordOverview } from '../../../tools/dashboard/fjord-overview.js';
import { DATASOURCE } from '../../../tools/dashboard/grafana.js';
import { CLUSTER_ONLY_METRICS, DASHBOARD_PATH, dashboardExprs, loadDashboard, selectors, variableSelectorExpr, type Selector } from './dashboard-queries.js';
import { parse, type Sample } from './lag-helpers.js';

/** Labels Prometheus adds to every scraped series: not in the broker's text. */
const TARGET_LABELS = new Set(['instance', 'job']);

const dashboard = loadDashboard();
const exprs = dashboardExprs(dashboard);

let b: TestBroker | undefined;
after(async () => {
  await b?.stop();
});

test("the committed dashboard is the generator's output (npx tsx tools/dashboard/generate.ts)", () => {
  const same = readFileSync(DASHBOARD_PATH, 'utf8') === renderFjordOverview();
  assert.ok(same, 'dashboards/fjord-overview.json differs from tools/dashboard/fjord-overview.ts: run npx tsx tools/dashboard/generate.ts');
});

test('the query reader: metric names, not functions, aggregations, label names, durations, strings or variables', () => {
  const names = (e: string): string[] => selectors(e).map((s) => s.metric);
  assert.deepEqual(
    names('histogram_quantile(0.99, sum by (le, request) (rate(fjord_network_request_total_time_seconds_bucket{instance=~"$instance"}[$__rate_interval])))'),
    ['fjord_network_request_total_time_seconds_bucket'],
  );
  assert.deepEqual(names('sum(rate(a_total[5m])) / sum without (topic) (rate(b_count{x="by (y)"}[1h30m] offset 5m))'), ['a_total', 'b_count']);
  assert.deepEqual(names('topk(20, lag{g=~"$g"} > 0) and on (g) members == 0'), ['lag', 'members']);
  assert.deepEqual(names('x / ignoring(kind) group_left(type) y'), ['x', 'y']);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a Grafana variable in PromQL
  assert.deepEqual(selectors('m{topic="", error!="NONE", request=~"${request:regex}"}')[0]!.matchers, [
    { label: 'topic', op: '=', value: '' },
    { label: 'error', op: '!=', value: 'NONE' },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Grafana variable in PromQL
    { label: 'request', op: '=~', value: '${request:regex}' },
  ]);
  assert.equal(variableSelectorExpr('label_values(up{job="k"}, instance)'), 'up{job="k"}');
  assert.equal(variableSelectorExpr('label_values(instance)'), undefined);
  assert.throws(() => selectors('{__name__="x"}'), /without a metric name/);
  assert.throws(() => selectors('m{a="b}'), /unterminated/);
});

test('a Grafana 10 dashboard on the DS_PROMETHEUS data source: unique ids, panels on the grid, known variables', () => {
  assert.equal(dashboard.schemaVersion, 38);
  assert.equal(dashboard.uid, 'fjord-overview');
  assert.deepEqual(
    (dashboard.__inputs as { name: string; type: string; pluginId: string }[]).map((i) => [i.name, i.type, i.pluginId]),
    [['DS_PROMETHEUS', 'datasource', 'prometheus']],
  );
  // Every panel and query names the input as Grafana's import replaces it: ${DS_PROMETHEUS}.
  const dsUid = '$' + '{DS_PROMETHEUS}';
  assert.equal(DATASOURCE.uid, dsUid);
  const variables = new Set(dashboard.templating.list.map((v) => v.name));
  assert.deepEqual([...variables], ['DS_PROMETHEUS', 'instance', 'topic', 'consumergroup', 'request']);
  const ids = new Set<number>();
  const cells = new Set<string>();
  for (const p of dashboard.panels as unknown as {
    id: number;
    type: string;
    title: string;
    gridPos: { x: number; y: number; w: number; h: number };
    datasource?: { uid: string };
    targets?: { refId: string; expr: string; datasource: { uid: string } }[];
  }[]) {
    assert.ok(!ids.has(p.id), `panel id ${p.id} is unique`);
    ids.add(p.id);
    const g = p.gridPos;
    assert.ok(g.x >= 0 && g.w > 0 && g.x + g.w <= 24 && g.h > 0, `"${p.title}" inside the 24-column grid`);
    for (let x = g.x; x < g.x + g.w; x++)
      for (let y = g.y; y < g.y + g.h; y++) {
        assert.ok(!cells.has(`${x},${y}`), `"${p.title}" overlaps another panel at ${x},${y}`);
        cells.add(`${x},${y}`);
      }
    if (p.type === 'row') continue;
    assert.equal(p.datasource?.uid, dsUid, `"${p.title}" uses the data source input`);
    assert.ok(p.targets && p.targets.length > 0, `"${p.title}" has a query`);
    assert.equal(new Set(p.targets.map((t) => t.refId)).size, p.targets.length, `"${p.title}" has unique refIds`);
    for (const t of p.targets) assert.equal(t.datasource.uid, dsUid);
  }
  for (const { where, expr } of exprs)
    for (const v of expr.matchAll(/\$\{?(\w+)/g)) assert.ok(variables.has(v[1]!) || v[1]!.startsWith('__'), `${where}: $${v[1]} is a dashboard variable`);
});

/** Records a kafkajs producer writes and a kafkajs consumer group reads and commits, so the lazily created series exist. */
async function workload(broker: TestBroker): Promise<void> {
  const kafka = new kafkajs.Kafka({ brokers: [broker.bootstrap], clientId: 'dashboard-test', logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'dash', numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'dash', messages: Array.from({ length: 5 }, (_, i) => ({ value: `r${i}` })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: 'dash-group', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'dash', fromBeginning: true });
  let consumed = 0;
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async () => {
        if (++consumed === 5) resolve();
      },
    });
  });
  await consumer.disconnect(); // commits the consumed offsets
  await broker.broker.observability.consumerLag!.refresh();
}

async function scrapeText(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

/** A family a sample belongs to: the name, or the name less a histogram's or summary's suffix. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const m = /^(.*)_(bucket|count|sum)$/.exec(name);
  if (!m || !types.has(m[1]!)) return undefined;
  const type = types.get(m[1]!)!;
  if (m[2] === 'bucket' ? type === 'histogram' : type === 'histogram' || type === 'summary') return m[1];
  return undefined;
}

/** Why a matcher of the dashboard cannot match this broker's samples of the metric (undefined: it can). */
function unmatched(selector: Selector, samples: Sample[]): string | undefined {
  for (const { label, op, value } of selector.matchers) {
    if (TARGET_LABELS.has(label)) continue;
    const literal = !value.includes('$');
    if (op === '=' && value === '') {
      if (!samples.some((s) => !s.labels[label])) return `no series without ${label}`;
    } else if (op === '=' && literal) {
      if (!samples.some((s) => s.labels[label] === value)) return `no series with ${label}="${value}"`;
    } else if (!samples.some((s) => s.labels[label])) return `no series with a ${label} label`;
  }
  return undefined;
}

test("every metric the dashboard queries is on a live broker's /metrics, with the labels its matchers use", async () => {
  b = await startTestBroker({ 'metrics.listener': 'http://127.0.0.1:0', 'metrics.consumer.lag.refresh.ms': '600000', 'offsets.topic.num.partitions': '1' });
  await workload(b);
  const port = b.broker.observability.port!;
  let text = await scrapeText(port);
  // GC pauses are reported after the fact: allocate until one has been (the histogram has no series before).
  const deadline = Date.now() + 10_000;
  const garbage: unknown[][] = [];
  while (!/^nodejs_gc_duration_seconds_sum\{/m.test(text)) {
    assert.ok(Date.now() < deadline, 'no GC pause reported');
    for (let i = 0; i < 100; i++) garbage.push(Array.from({ length: 1000 }, (_, j) => ({ j })));
    garbage.length = 0;
    await new Promise((resolve) => setTimeout(resolve, 20));
    text = await scrapeText(port);
  }
  const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  const byName = new Map<string, Sample[]>();
  for (const s of parse(text)) {
    let same = byName.get(s.name);
    if (!same) byName.set(s.name, (same = []));
    same.push(s);
  }

  const missing = new Set<string>();
  const problems: string[] = [];
  let checked = 0;
  for (const { where, expr } of exprs)
    for (const selector of selectors(expr)) {
      checked++;
      const samples = byName.get(selector.metric);
      if (!samples) {
        missing.add(selector.metric);
        continue;
      }
      if (!familyOf(selector.metric, types)) problems.push(`${where}: ${selector.metric} has no # TYPE family`);
      const why = unmatched(selector, samples);
      if (why) problems.push(`${where}: ${selector.metric}: ${why}`);
    }
  assert.ok(checked >= 60, `${checked} selectors read`);
  assert.deepEqual(problems, []);
  // What is missing is exactly the cluster-only list: a name there that an embedded broker serves
  // (or a typo anywhere) fails here.
  assert.deepEqual([...missing].sort(), [...CLUSTER_ONLY_METRICS].sort(), 'names the embedded broker does not serve');
});
