/**
 * Reads the metric selectors out of the Grafana dashboard's PromQL (dashboards/fjord-overview.json):
 * a small tokenizer that tells metric names from functions, aggregations, keywords, label names
 * (inside `{...}` and the `by (...)`-style clauses), numbers, durations, strings and Grafana's
 * `$variables`. Shared by test/server/metrics/dashboard.test.ts (an embedded broker) and
 * test/replication/inproc-harness.test.ts (the cluster-only families).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const DASHBOARD_PATH = fileURLToPath(new URL('../../../dashboards/fjord-overview.json', import.meta.url));

/**
 * Families only a ZooKeeper-mode broker registers (the controller's events, the ZooKeeper
 * session): absent on an embedded broker, checked on a cluster by inproc-harness.test.ts.
 */
export const CLUSTER_ONLY_METRICS: readonly string[] = [
  'kafka_controller_controllereventmanager_eventqueuesize',
  'kafka_controller_controllereventmanager_eventqueuetimems_count',
  'kafka_controller_controllereventmanager_eventqueuetimems_sum',
  'kafka_controller_controllerstats_leaderelectionrateandtimems_count',
  'kafka_controller_controllerstats_leaderelectionrateandtimems_sum',
  'kafka_controller_controllerstats_uncleanleaderelections_total',
  'kafka_server_sessionexpirelistener_sessionstate',
  'kafka_server_sessionexpirelistener_zookeeperdisconnects_total',
  'kafka_server_sessionexpirelistener_zookeeperexpires_total',
  'kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_count',
  'kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_sum',
];

export interface Matcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** One vector selector of a query: the metric name and its label matchers. */
export interface Selector {
  metric: string;
  matchers: Matcher[];
}

/** Aggregation operators: followed by `(` or by a `by`/`without` clause. */
const AGGREGATIONS = new Set(['sum', 'avg', 'min', 'max', 'count', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values', 'group', 'limitk']);
/** Binary-operator and modifier keywords, and the literals PromQL reads as numbers. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);
/** Keywords followed by a parenthesised list of label names. */
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

type Token = { kind: 'ident' | 'string' | 'number' | 'variable' | 'op'; text: string };

function tokenize(expr: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      let text = '';
      while (j < expr.length && expr[j] !== c) {
        if (expr[j] === '\\' && c !== '`') j++;
        text += expr[j];
        j++;
      }
      if (j >= expr.length) throw new Error(`unterminated string in ${expr}`);
      out.push({ kind: 'string', text });
      i = j + 1;
    } else if (c === '$') {
      // Grafana's $name, ${name}, ${name:format}, $__rate_interval.
      const m = /^\$(?:\{[^}]*\}|\w+)/.exec(expr.slice(i));
      if (!m) throw new Error(`a lone $ in ${expr}`);
      out.push({ kind: 'variable', text: m[0] });
      i += m[0].length;
    } else if (/[0-9.]/.test(c)) {
      // Numbers and durations (0.99, 1e3, 5m, 1h30m): a digit run with what sticks to it.
      const m = /^[0-9.][0-9a-zA-Z_.+]*/.exec(expr.slice(i))!;
      out.push({ kind: 'number', text: m[0] });
      i += m[0].length;
    } else if (/[a-zA-Z_:]/.test(c)) {
      const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i))!;
      out.push({ kind: 'ident', text: m[0] });
      i += m[0].length;
    } else {
      const m = /^(?:=~|!~|!=|==|>=|<=|[{}()[\],=<>+\-*/%^@])/.exec(expr.slice(i));
      if (!m) throw new Error(`unexpected '${c}' in ${expr}`);
      out.push({ kind: 'op', text: m[0] });
      i += m[0].length;
    }
  }
  return out;
}

/** The label matchers of a `{...}` starting at tokens[start] (the `{`); returns them and the index after `}`. */
function readMatchers(tokens: Token[], start: number, expr: string): { matchers: Matcher[]; next: number } {
  const matchers: Matcher[] = [];
  let i = start + 1;
  while (tokens[i]?.text !== '}') {
    const label = tokens[i];
    const op = tokens[i + 1];
    const value = tokens[i + 2];
    if (label?.kind !== 'ident' || !op || !['=', '!=', '=~', '!~'].includes(op.text) || value?.kind !== 'string')
      throw new Error(`a malformed matcher in ${expr}`);
    matchers.push({ label: label.text, op: op.text as Matcher['op'], value: value.text });
    i += 3;
    if (tokens[i]?.text === ',') i++;
  }
  return { matchers, next: i + 1 };
}

/** Every vector selector of a PromQL expression (Grafana variables left in place). */
export function selectors(expr: string): Selector[] {
  const tokens = tokenize(expr);
  const out: Selector[] = [];
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    if (t.kind === 'ident' && LABEL_LISTS.has(t.text) && next?.text === '(') {
      // by (a, b): label names up to the closing parenthesis.
      i += 2;
      while (i < tokens.length && tokens[i]!.text !== ')') i++;
      i++;
    } else if (t.kind === 'ident' && (next?.text === '(' || AGGREGATIONS.has(t.text) || KEYWORDS.has(t.text) || LABEL_LISTS.has(t.text))) {
      i++; // a function call, an aggregation, a keyword
    } else if (t.kind === 'ident') {
      const selector: Selector = { metric: t.text, matchers: [] };
      i++;
      if (tokens[i]?.text === '{') {
        const read = readMatchers(tokens, i, expr);
        selector.matchers = read.matchers;
        i = read.next;
      }
      out.push(selector);
    } else if (t.text === '{') {
      // A selector without a name ({__name__=~"..."}): nothing a test could look up.
      throw new Error(`a selector without a metric name in ${expr}`);
    } else {
      i++;
    }
  }
  return out;
}

/** A Grafana variable query `label_values(selector, label)` (or `label_values(label)`): its selector's PromQL. */
export function variableSelectorExpr(query: string): string | undefined {
  const m = /^label_values\((?:(.*),\s*)?([a-zA-Z_]\w*)\)$/.exec(query.trim());
  if (!m) throw new Error(`not a label_values() query: ${query}`);
  return m[1];
}

interface DashboardPanel {
  type: string;
  title?: string;
  panels?: DashboardPanel[];
  targets?: { expr?: string }[];
}

export interface Dashboard {
  panels: DashboardPanel[];
  templating: { list: { name: string; type: string; query?: unknown; definition?: string }[] };
  [key: string]: unknown;
}

export function loadDashboard(path = DASHBOARD_PATH): Dashboard {
  return JSON.parse(readFileSync(path, 'utf8')) as Dashboard;
}

/** Every PromQL expression of the dashboard, with where it is: panel targets (rows' nested panels too) and variable queries. */
export function dashboardExprs(d: Dashboard): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const walk = (panels: DashboardPanel[]): void => {
    for (const p of panels) {
      for (const t of p.targets ?? []) if (t.expr) out.push({ where: `panel "${p.title}"`, expr: t.expr });
      walk(p.panels ?? []);
    }
  };
  walk(d.panels);
  for (const v of d.templating.list) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : (v.query as { query: string }).query;
    const expr = variableSelectorExpr(q);
    if (expr) out.push({ where: `variable $${v.name}`, expr });
  }
  return out;
}
