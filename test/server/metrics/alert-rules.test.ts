/**
 * The alert rules shipped in dashboards/fjord-alerts.yml: `promtool check rules` accepts them
 * (Debian's prometheus package; a peer); `promtool test rules` shows the main ones firing on
 * synthetic series when they should and only then; each rule has a severity and a summary; every
 * metric their expressions name is served by a live broker's /metrics after a small workload,
 * with the labels their matchers use (or is listed below with the reason: cluster-only, needing
 * SASL or quotas, or Prometheus's own); and docs/operations.md agrees: its "Alert rules" section
 * names every rule of the file, and every alert its YAML snippets show is in the file with the
 * same expression (or is listed as an example to adapt). The rules at work on a real Prometheus
 * over a 3-broker cluster: test/interop/prometheus.test.ts.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { requirePeer } from '../../helpers/peers.js';
import { Consumer } from '../../../src/client/consumer.js';
import { run } from '../../helpers/run.js';
import { CLUSTER_ONLY_METRICS, selectors, type Selector } from './dashboard-queries.js';
import { commit, parse, type Sample } from './lag-helpers.js';

const RULES_PATH = fileURLToPath(new URL('../../../dashboards/fjord-alerts.yml', import.meta.url));
const DOCS_PATH = fileURLToPath(new URL('../../../docs/operations.md', import.meta.url));

/** Names the rules use that no broker serves: Prometheus adds them to every scrape. */
const PROMETHEUS_METRICS: Record<string, string> = {
  up: "Prometheus's own: 1 when a target's scrape succeeded",
};
/**
 * Names a broker serves only where a feature is configured (this test's broker has neither);
 * test/server/metrics/request-topic-metrics.test.ts checks them on a broker that has it.
 */
const CONDITIONAL_METRICS: Record<string, string> = {
  kafka_server_socket_server_metrics_failed_authentication_total: 'one series per listener with SASL mechanisms',
  fjord_server_quota_throttle_time_ms_total: 'one series per client quota group that sent requests',
};
/** Alerts docs/operations.md shows as examples to adapt, not shipped in the file. */
const DOC_EXAMPLES: Record<string, string> = {
  KafkaNoMessagesIn: 'names one topic of the reader\'s ("orders")',
  KafkaConnectionsNearLimit: "compares with the reader's max.connections",
  UnderReplicatedPartition: "the consumer-lag section's kafka-exporter form of UnderReplicatedPartitions, which the file has",
};

interface Rule {
  group: string;
  alert: string;
  expr: string;
  for?: string;
  severity?: string;
  summary?: string;
}

/**
 * The rules of the file, read line by line: the file keeps each rule's keys on single lines (its
 * header says so), and the count is checked against promtool's, so no rule is missed.
 */
function readRules(text: string): Rule[] {
  const rules: Rule[] = [];
  let group = '';
  for (const line of text.split('\n')) {
    const g = /^ {2}- name: (\S+)$/.exec(line);
    if (g) group = g[1]!;
    const a = /^ {6}- alert: (\S+)$/.exec(line);
    if (a) rules.push({ group, alert: a[1]!, expr: '' });
    const current = rules.at(-1);
    const kv = /^ {8}(expr|for|labels|annotations): (.*)$/.exec(line);
    if (!kv || !current) continue;
    if (kv[1] === 'expr') current.expr = kv[2]!;
    if (kv[1] === 'for') current.for = kv[2]!;
    if (kv[1] === 'labels') current.severity = /severity: (\w+)/.exec(kv[2]!)?.[1];
    if (kv[1] === 'annotations') current.summary = /summary: "(.*)" \}$/.exec(kv[2]!)?.[1];
  }
  return rules;
}

const rules = readRules(readFileSync(RULES_PATH, 'utf8'));
const docs = readFileSync(DOCS_PATH, 'utf8');

let b: TestBroker | undefined;
after(async () => {
  await b?.stop();
});

test('promtool check rules accepts dashboards/fjord-alerts.yml, and finds as many rules as this test reads', async (t) => {
  if (!requirePeer(t, 'prometheus')) return;
  const r = await run('promtool', ['check', 'rules', RULES_PATH], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const found = /SUCCESS: (\d+) rules found/.exec(r.stdout);
  assert.ok(found, r.stdout);
  assert.equal(Number(found[1]), rules.length, 'rules read line by line');
  assert.ok(rules.length >= 20, `${rules.length} rules`);

  // And it refuses a broken one: the check can fail.
  const bad = await run('promtool', ['check', 'rules', '/dev/stdin'], {
    input: 'groups:\n  - name: x\n    rules:\n      - alert: Broken\n        expr: sum(kafka_x{) > 0\n',
    timeoutMs: 30_000,
  });
  assert.notEqual(bad.code, 0, bad.stdout);
});

/** A `promtool test rules` alert expectation: the alert's labels beyond the rule's own, and its summary. */
type Expected = { labels?: Record<string, string>; summary: string }[];

test('the rules fire when they should and only then: promtool test rules on synthetic series', async (t) => {
  if (!requirePeer(t, 'prometheus')) return;
  const byName = new Map(rules.map((r) => [r.alert, r]));
  /** The rule's own labels and a summary, as promtool compares them. */
  const alerts = (name: string, expected: Expected): unknown[] =>
    expected.map((e) => ({ exp_labels: { severity: byName.get(name)!.severity, ...e.labels }, exp_annotations: { summary: e.summary } }));
  const check = (evalTime: string, name: string, expected: Expected = []): unknown => ({
    eval_time: evalTime,
    alertname: name,
    exp_alerts: alerts(name, expected),
  });
  const tests = [
    {
      // No broker answers (and then one does): FjordNoBrokerUp after its 1m (absent() of a
      // comparison has no labels to give); FjordBrokerDown names the one still down.
      interval: '1m',
      input_series: [
        { series: 'up{job="fjord",instance="b0:9404"}', values: '0x4 1x4' },
        { series: 'up{job="fjord",instance="b1:9404"}', values: '0x8' },
      ],
      alert_rule_test: [
        check('0m', 'FjordNoBrokerUp'),
        check('2m', 'FjordNoBrokerUp', [{ summary: byName.get('FjordNoBrokerUp')!.summary! }]),
        check('7m', 'FjordNoBrokerUp'),
        check('7m', 'FjordBrokerDown', [{ labels: { job: 'fjord', instance: 'b1:9404' }, summary: "b1:9404 does not answer Prometheus's scrapes" }]),
      ],
    },
    {
      // The active controller count: 1 over three brokers is fine; 0, then 2, fire.
      interval: '1m',
      input_series: [
        { series: 'kafka_controller_kafkacontroller_activecontrollercount{instance="b0"}', values: '1x4 0x4 1x4' },
        { series: 'kafka_controller_kafkacontroller_activecontrollercount{instance="b1"}', values: '0x4 0x4 1x4' },
        { series: 'kafka_controller_kafkacontroller_activecontrollercount{instance="b2"}', values: '0x12' },
      ],
      alert_rule_test: [
        check('3m', 'ActiveControllerCount'),
        check('7m', 'ActiveControllerCount', [{ summary: byName.get('ActiveControllerCount')!.summary! }]),
        check('12m', 'ActiveControllerCount', [{ summary: byName.get('ActiveControllerCount')!.summary! }]),
      ],
    },
    {
      // Under-replicated: pending for its 5m, then firing; gone once the ISR is full.
      interval: '1m',
      input_series: [
        { series: 'kafka_server_replicamanager_underreplicatedpartitions{instance="b0"}', values: '0 3x7 0x3' },
        { series: 'kafka_server_replicamanager_underreplicatedpartitions{instance="b1"}', values: '0x11' },
      ],
      alert_rule_test: [
        check('4m', 'UnderReplicatedPartitions'),
        check('7m', 'UnderReplicatedPartitions', [{ summary: byName.get('UnderReplicatedPartitions')!.summary! }]),
        check('10m', 'UnderReplicatedPartitions'),
      ],
    },
    {
      // A group with records waiting and no members is stopped; one with a member is not. Lag in
      // seconds over 5 minutes for 10 minutes: lagging.
      interval: '1m',
      input_series: [
        { series: 'kafka_consumergroup_lag_sum{consumergroup="stopped",topic="t"}', values: '5x20' },
        { series: 'kafka_consumergroup_members{consumergroup="stopped"}', values: '0x20' },
        { series: 'kafka_consumergroup_lag_sum{consumergroup="running",topic="t"}', values: '5x20' },
        { series: 'kafka_consumergroup_members{consumergroup="running"}', values: '1x20' },
        { series: 'kafka_consumergroup_lag_seconds_max{consumergroup="running",topic="t"}', values: '600x20' },
        { series: 'kafka_consumergroup_lag_seconds_max{consumergroup="stopped",topic="t"}', values: '30x20' },
      ],
      alert_rule_test: [
        check('16m', 'ConsumerGroupStopped', [{ labels: { consumergroup: 'stopped' }, summary: 'stopped has records waiting and no member to read them' }]),
        check('5m', 'ConsumerGroupLagging'),
        check('11m', 'ConsumerGroupLagging', [{ labels: { consumergroup: 'running', topic: 't' }, summary: 'running is 10m 0s behind on t' }]),
      ],
    },
    {
      // Log flushes averaging 200 ms fire after 10 minutes; a broker that does not flush (0/0) never does.
      interval: '1m',
      input_series: [
        { series: 'kafka_log_logflushstats_logflushrateandtimems_sum{instance="slow"}', values: '0+12000x20' },
        { series: 'kafka_log_logflushstats_logflushrateandtimems_count{instance="slow"}', values: '0+60x20' },
        { series: 'kafka_log_logflushstats_logflushrateandtimems_sum{instance="idle"}', values: '0x20' },
        { series: 'kafka_log_logflushstats_logflushrateandtimems_count{instance="idle"}', values: '0x20' },
      ],
      alert_rule_test: [
        check('8m', 'KafkaLogFlushSlow'),
        check('18m', 'KafkaLogFlushSlow', [
          { labels: { instance: 'slow' }, summary: 'log flushes on slow take 200 ms on average: the disk is slow or saturated' },
        ]),
      ],
    },
  ];
  const dir = await mkdtemp(join(tmpdir(), 'fjord-alert-rules-'));
  try {
    // JSON is YAML: promtool reads the test file as it is written here.
    const file = join(dir, 'fjord-alerts.test.yml');
    writeFileSync(file, JSON.stringify({ rule_files: [RULES_PATH], evaluation_interval: '1m', tests }, null, 2));
    const r = await run('promtool', ['test', 'rules', file], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUCCESS/);
    // And a wrong expectation fails: the check can fail.
    tests[0]!.alert_rule_test = [check('2m', 'FjordNoBrokerUp')];
    writeFileSync(file, JSON.stringify({ rule_files: [RULES_PATH], evaluation_interval: '1m', tests: [tests[0]] }));
    const wrong = await run('promtool', ['test', 'rules', file], { timeoutMs: 30_000 });
    assert.notEqual(wrong.code, 0, wrong.stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('each rule has a unique name, one-line expression, severity and summary; the issue asks for these', () => {
  assert.equal(new Set(rules.map((r) => r.alert)).size, rules.length, 'unique alert names');
  for (const r of rules) {
    assert.ok(r.expr && r.expr.length > 0, `${r.alert}: expr`);
    assert.ok(r.severity && ['critical', 'warning', 'info'].includes(r.severity), `${r.alert}: severity ${r.severity}`);
    assert.ok(r.summary && r.summary.length > 10, `${r.alert}: summary`);
  }
  const byName = new Map(rules.map((r) => [r.alert, r]));
  // Offline partitions, under-replicated for 5m, under min ISR, active controller sum != 1, no
  // broker up, consumer lag in seconds, request errors, event-loop delay, log flush time.
  const want: [string, RegExp, string | undefined][] = [
    ['OfflinePartitions', /^sum\(kafka_controller_kafkacontroller_offlinepartitionscount\) > 0$/, '1m'],
    ['UnderReplicatedPartitions', /^sum\(kafka_server_replicamanager_underreplicatedpartitions\) > 0$/, '5m'],
    ['UnderMinIsrPartitions', /kafka_server_replicamanager_underminisrpartitioncount\) > 0$/, '1m'],
    ['ActiveControllerCount', /^sum\(kafka_controller_kafkacontroller_activecontrollercount\) != 1$/, '1m'],
    ['FjordNoBrokerUp', /^absent\(up\{job="fjord"\} == 1\)$/, '1m'],
    ['ConsumerGroupLagging', /kafka_consumergroup_lag_seconds_max\) > 300$/, '10m'],
    ['KafkaRequestErrors', /kafka_network_requestmetrics_errors_total\{error!="NONE"\}/, '10m'],
    ['FjordEventLoopBlocked', /^nodejs_eventloop_lag_p99_seconds > 0\.1$/, '5m'],
    ['KafkaLogFlushSlow', /kafka_log_logflushstats_logflushrateandtimems_sum/, '10m'],
  ];
  for (const [name, expr, dur] of want) {
    const r = byName.get(name);
    assert.ok(r, `${name} is in the file`);
    assert.match(r.expr, expr, name);
    assert.equal(r.for, dur, `${name}: for`);
  }
});

test("docs/operations.md agrees: its Alert rules section names every rule; its snippets' alerts are the file's", () => {
  const section = /^## Alert rules\n([\s\S]*?)(?=^## )/m.exec(docs)?.[1];
  assert.ok(section, 'docs/operations.md has a "## Alert rules" section');
  assert.match(section, /dashboards\/fjord-alerts\.yml/);
  const named = new Set([...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]!));
  assert.deepEqual([...named].sort(), rules.map((r) => r.alert).sort(), "the section's table lists exactly the file's rules");

  // Every alert in a YAML block of the docs: `- alert: Name`, then its `expr:` line.
  const byName = new Map(rules.map((r) => [r.alert, r]));
  const shown: string[] = [];
  for (const block of docs.matchAll(/^```yaml\n([\s\S]*?)^```/gm)) {
    const lines = block[1]!.split('\n');
    lines.forEach((line, i) => {
      const a = /^\s*- alert: (\w+)/.exec(line);
      if (!a) return;
      // Its expr: the first one before the next alert (comment lines may come between).
      const rest = lines.slice(i + 1);
      const end = rest.findIndex((l) => /^\s*- alert:/.test(l));
      const exprLine = rest.slice(0, end < 0 ? undefined : end).find((l) => /^\s*expr: /.test(l));
      const expr = /^\s*expr: (.*?)(\s+#.*)?$/.exec(exprLine ?? '')?.[1];
      shown.push(a[1]!);
      if (a[1]! in DOC_EXAMPLES) return;
      assert.equal(byName.get(a[1]!)?.expr, expr, `docs' ${a[1]} is the file's (same expression)`);
    });
  }
  assert.ok(shown.length >= 15, `${shown.length} alerts shown in the docs`);
  for (const name of Object.keys(DOC_EXAMPLES)) assert.ok(shown.includes(name), `${name} is still a docs example`);
});

/** Labels Prometheus adds to every scraped series: not in the broker's text. */
const TARGET_LABELS = new Set(['instance', 'job']);

/** Why a selector's matchers cannot match the broker's samples of its metric (undefined: they can). */
function unmatched(selector: Selector, samples: Sample[]): string | undefined {
  for (const { label, op, value } of selector.matchers) {
    if (TARGET_LABELS.has(label)) continue;
    if (op === '=' && value === '') {
      if (!samples.some((s) => !s.labels[label])) return `no series without ${label}`;
    } else if (op === '=') {
      if (!samples.some((s) => s.labels[label] === value)) return `no series with ${label}="${value}"`;
    } else if (!samples.some((s) => s.labels[label])) return `no series with a ${label} label`;
  }
  return undefined;
}

/** A family a sample belongs to: the name, or the name less a summary's or histogram's suffix. */
function hasFamily(name: string, types: Map<string, string>): boolean {
  if (types.has(name)) return true;
  const m = /^(.*)_(bucket|count|sum)$/.exec(name);
  return m !== null && ['summary', 'histogram'].includes(types.get(m[1]!) ?? '');
}

test("every metric the rules name is on a live broker's /metrics with the labels they match, or listed with a reason", async () => {
  b = await startTestBroker({
    'metrics.listener': 'http://127.0.0.1:0',
    'metrics.consumer.lag.refresh.ms': '600000',
    'offsets.topic.num.partitions': '1',
    'log.flush.interval.messages': '1',
  });
  // Records produced (request, topic, flush families), and a group's committed offset behind them
  // (the lag families; a group that only commits has no members: the members gauge reads 0).
  const kafka = new kafkajs.Kafka({ brokers: [b.bootstrap], clientId: 'alert-rules-test', logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'alerts', messages: Array.from({ length: 5 }, (_, i) => ({ value: `r${i}` })) });
  await producer.disconnect();
  await commit(b.port, 'alerts', 'alerts-group', 2);
  // A consumer's fetch (FetchConsumer's request times), without a group.
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, autoOffsetReset: 'earliest' });
  consumer.assign([{ topic: 'alerts', partition: 0 }]);
  try {
    const deadline = Date.now() + 10_000;
    while ((await consumer.poll(200)).length === 0) assert.ok(Date.now() < deadline, 'no record fetched');
  } finally {
    await consumer.close();
  }
  await b.broker.observability.consumerLag!.refresh();
  // A major GC, so the kind="major" series of the GC histogram exists (it is created lazily).
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();

  const port = b.broker.observability.port!;
  const text = await (async () => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      assert.equal(res.status, 200);
      const body = await res.text();
      // GC pauses are reported after the fact, by an observer callback.
      if (/^nodejs_gc_duration_seconds_sum\{kind="major"\}/m.test(body)) return body;
      assert.ok(Date.now() < deadline, 'no major GC pause reported');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  const byName = new Map<string, Sample[]>();
  for (const s of parse(text)) byName.set(s.name, [...(byName.get(s.name) ?? []), s]);

  const missing = new Set<string>();
  const problems: string[] = [];
  for (const r of rules)
    for (const selector of selectors(r.expr)) {
      const samples = byName.get(selector.metric);
      if (!samples) {
        missing.add(selector.metric);
        continue;
      }
      if (!hasFamily(selector.metric, types)) problems.push(`${r.alert}: ${selector.metric} has no # TYPE family`);
      const why = unmatched(selector, samples);
      if (why) problems.push(`${r.alert}: ${selector.metric}: ${why}`);
    }
  assert.deepEqual(problems, []);
  // What is missing is exactly what only a ZooKeeper cluster's broker serves (checked on one in
  // test/replication/inproc-harness.test.ts), what needs SASL or quotas, and Prometheus's own: a
  // typo anywhere fails here.
  const expected = [
    ...Object.keys(PROMETHEUS_METRICS),
    ...Object.keys(CONDITIONAL_METRICS),
    ...CLUSTER_ONLY_METRICS.filter((m) => rules.some((r) => selectors(r.expr).some((s) => s.metric === m))),
  ];
  assert.deepEqual([...missing].sort(), expected.sort(), 'names the embedded broker does not serve');
});
