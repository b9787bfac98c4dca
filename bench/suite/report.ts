/**
 * The markdown `npm run bench` writes: one table per workload (a row per case and metric, a
 * column per system, then the ratios of the same run), the targets table, the exact commands,
 * the load average before and after and the core count. The section sits between two markers in
 * bench/RESULTS.md and replaces only what is between them, so the rest of the file stays.
 */
import { formatNumber, ratio } from './stats.js';
import type { Figure, TargetCheck, Workload, WorkloadResult } from './workload.js';

export const SECTION_START = '<!-- npm run bench: start (written by bench/suite/run.ts; edits between the markers are replaced) -->';
export const SECTION_END = '<!-- npm run bench: end -->';

export interface WorkloadOutcome {
  workload: Workload;
  result?: WorkloadResult;
  /** Why the workload has no figures (an exception's message). */
  error?: string;
}

export interface RunInfo {
  /** The command line the user ran, e.g. `npm run bench -- --repeats=3`. */
  invocation: string;
  startedAt: string;
  seconds: number;
  repeats: number;
  quick: boolean;
  nproc: number;
  cpuModel: string;
  loadBefore: string;
  loadAfter: string;
  /** The exact commands the workloads ran (one per distinct command line). */
  commands: readonly string[];
}

const SYSTEM_LABELS: Record<string, string> = {
  fjord: 'Fjord, 1 thread',
  'fjord-threads': 'Fjord, all threads',
  nats: 'NATS JetStream',
  redis: 'Redis Streams',
  dd: 'dd (fdatasync)',
  iperf3: 'iperf3 loopback',
  'fjord-rf3': 'Fjord, 3 brokers RF 3',
};

export function systemLabel(system: string): string {
  return SYSTEM_LABELS[system] ?? system;
}

function cell(f: Figure | undefined): string {
  if (f === undefined) return '';
  if (f.samples.length < 2) return formatNumber(f.value);
  const lo = Math.min(...f.samples);
  const hi = Math.max(...f.samples);
  return `${formatNumber(f.value)} (${formatNumber(lo)}–${formatNumber(hi)})`;
}

function ratioCell(a: Figure | undefined, b: Figure | undefined): string {
  const r = ratio(a?.value, b?.value);
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : '';
}

/** One workload's table: rows (case, metric) in first-seen order; systems as columns; ratios last. */
export function workloadTable(workload: Workload, figures: readonly Figure[]): string {
  const present = new Set(figures.map((f) => f.system));
  const systems = [...workload.systems.filter((s) => present.has(s)), ...[...present].filter((s) => !workload.systems.includes(s))];
  const rows: { case: string; metric: string }[] = [];
  const seen = new Set<string>();
  const byKey = new Map<string, Figure>();
  for (const f of figures) {
    const row = `${f.case}\u0000${f.metric}`;
    if (!seen.has(row)) {
      seen.add(row);
      rows.push({ case: f.case, metric: f.metric });
    }
    byKey.set(`${row}\u0000${f.system}`, f);
  }
  // `inverse`: the column reads other/Fjord (all threads over one), not Fjord/other.
  const ratioColumns: { title: string; other: string; inverse?: boolean }[] = [];
  if (present.has('fjord')) {
    if (present.has('fjord-threads')) ratioColumns.push({ title: 'all threads/1 thread', other: 'fjord-threads', inverse: true });
    if (present.has('nats')) ratioColumns.push({ title: 'Fjord/NATS', other: 'nats' });
    if (present.has('redis')) ratioColumns.push({ title: 'Fjord/Redis', other: 'redis' });
    if (workload.limit !== undefined && present.has(workload.limit)) {
      ratioColumns.push({ title: `Fjord/${systemLabel(workload.limit)}`, other: workload.limit });
    }
  }
  const head = ['case', 'metric', ...systems.map(systemLabel), ...ratioColumns.map((c) => c.title)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  // A limit (dd, iperf3) is measured once per repeat, in a row of its own: every row of the same
  // metric is compared with it.
  const limitFigure = (metric: string) => figures.find((f) => f.system === workload.limit && f.metric === metric);
  for (const r of rows) {
    const get = (system: string) => byKey.get(`${r.case}\u0000${r.metric}\u0000${system}`);
    const other = (system: string) => get(system) ?? (system === workload.limit ? limitFigure(r.metric) : undefined);
    const cells = [
      r.case,
      r.metric,
      ...systems.map((s) => cell(get(s))),
      ...ratioColumns.map((c) => (c.inverse ? ratioCell(other(c.other), get('fjord')) : ratioCell(get('fjord'), other(c.other)))),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

export function targetsTable(targets: readonly TargetCheck[]): string {
  if (targets.length === 0) return '_No target was judged in this run (its workloads were not selected)._';
  const lines = ['| target | result | figure | what holds it back |', '|---|---|---|---|'];
  for (const t of targets) lines.push(`| ${t.target} | ${t.met ? 'met' : '**missed**'} | ${t.figure} | ${t.note ?? ''} |`);
  return lines.join('\n');
}

/** The whole section, markers included. */
export function renderSection(info: RunInfo, outcomes: readonly WorkloadOutcome[], svgPath: string): string {
  const out: string[] = [SECTION_START, '## `npm run bench`: Fjord beside NATS JetStream, Redis Streams and the machine’s limits', ''];
  out.push(
    `Run ${info.startedAt} (${info.seconds.toFixed(0)} s): \`${info.invocation}\`; ${info.nproc} cores (${info.cpuModel}); ` +
      `load average before ${info.loadBefore}, after ${info.loadAfter}. Each figure is the median of ${info.repeats} repeat(s) ` +
      `(range in brackets), the systems' order rotated per repeat; every ratio compares figures of this run ` +
      `(for CPU, latency, memory and time rows, below 1× means Fjord needs less).` +
      (info.quick ? ' **Quick run (--quick): small sizes, figures are a smoke test, not a measurement.**' : ''),
  );
  out.push(
    '',
    `Chart: [${svgPath}](${svgPath}). To refresh: \`npm run bench\` (3 repeats; \`--only=\`, \`--systems=\`, \`--repeats=\`, \`--quick\`), ` +
      'which installs its peers (scripts/install-bench-deps.sh), builds dist/ when src/ changed and rewrites this section between its markers.',
    '',
  );
  const targets = outcomes.flatMap((o) => o.result?.targets ?? []);
  out.push('### Targets (issue 26, this machine, this run)', '', targetsTable(targets), '');
  for (const o of outcomes) {
    out.push(`### ${o.workload.title}`, '', o.workload.description, '');
    if (o.error !== undefined) {
      out.push(`**Failed:** ${o.error}`, '');
      continue;
    }
    out.push(workloadTable(o.workload, o.result?.figures ?? []), '');
    for (const n of o.result?.notes ?? []) out.push(`- ${n}`);
    if ((o.result?.notes ?? []).length > 0) out.push('');
  }
  out.push('### Commands', '', 'Every command the run started, once each (temp dirs and ports vary):', '', '```');
  out.push(...info.commands, '```', SECTION_END);
  return out.join('\n');
}

/** `file` with the section between the markers replaced (or appended at the end when absent). */
export function replaceSection(file: string, section: string): string {
  const start = file.indexOf(SECTION_START);
  const end = file.indexOf(SECTION_END);
  if (start >= 0 && end > start) return file.slice(0, start) + section + file.slice(end + SECTION_END.length);
  const sep = file.length === 0 || file.endsWith('\n\n') ? '' : file.endsWith('\n') ? '\n' : '\n\n';
  return `${file}${sep}${section}\n`;
}
