/**
 * The SVG chart of `npm run bench`, written as plain SVG text: one panel per workload, a group of
 * bars per case (the workload's primary metric), one colour per system, each panel on its own
 * scale (MB/s and milliseconds do not share an axis). No chart library: the file is small and
 * opens in any browser.
 */
import { systemLabel, type WorkloadOutcome } from './report.js';
import { formatNumber } from './stats.js';

const COLOURS: Record<string, string> = {
  fjord: '#1f77b4',
  nats: '#2ca02c',
  redis: '#d62728',
  dd: '#7f7f7f',
  iperf3: '#bcbd22',
};
const SPARE = ['#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

const WIDTH = 960;
const PANEL_HEIGHT = 300;
const PLOT_TOP = 40;
const PLOT_HEIGHT = 150;
const LEFT = 60;
/** Right edge of the bars: the space beyond takes the last group's slanted label. */
const PLOT_RIGHT = WIDTH - 170;

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function colourOf(system: string, spare: Map<string, string>): string {
  const known = COLOURS[system];
  if (known !== undefined) return known;
  let c = spare.get(system);
  if (c === undefined) {
    c = SPARE[spare.size % SPARE.length]!;
    spare.set(system, c);
  }
  return c;
}

/** The chart for the workloads that have figures of their primary metric. */
export function renderChart(outcomes: readonly WorkloadOutcome[], title: string): string {
  const spare = new Map<string, string>();
  const panels: string[] = [];
  let y = 50;
  for (const o of outcomes) {
    const metric = o.workload.primary ?? 'MB/s';
    const all = (o.result?.figures ?? []).filter((f) => f.metric === metric && Number.isFinite(f.value));
    // A machine limit (dd, iperf3), measured once in a row of its own, is a dashed line, not a bar:
    // as a bar it would squash the others. A compared system with a figure per row stays bars.
    const limits = all.filter((f) => f.system === o.workload.limit);
    const limit = limits.length === 1 && !all.some((f) => f.system !== o.workload.limit && f.case === limits[0]!.case) ? limits[0] : undefined;
    const figures = limit === undefined ? all : all.filter((f) => f !== limit);
    if (figures.length === 0) continue;
    const cases = [...new Set(figures.map((f) => f.case))];
    const present = new Set(figures.map((f) => f.system));
    const systems = [...o.workload.systems.filter((s) => present.has(s)), ...[...present].filter((s) => !o.workload.systems.includes(s))];
    const barsMax = Math.max(...figures.map((f) => f.value)) || 1;
    const limitOnScale = limit !== undefined && limit.value <= barsMax * 1.5;
    const max = limitOnScale ? Math.max(barsMax, limit.value) : barsMax;
    const groupWidth = (PLOT_RIGHT - LEFT) / cases.length;
    const barWidth = Math.max(2, Math.min(28, (groupWidth - 10) / systems.length));
    const parts: string[] = [];
    parts.push(`<text x="${LEFT}" y="${y + 20}" font-size="15" font-weight="bold">${escapeXml(`${o.workload.title} (${metric})`)}</text>`);
    const base = y + PLOT_TOP + PLOT_HEIGHT;
    parts.push(`<line x1="${LEFT}" y1="${base}" x2="${PLOT_RIGHT}" y2="${base}" stroke="#333"/>`);
    parts.push(`<text x="${LEFT - 6}" y="${y + PLOT_TOP + 4}" font-size="10" text-anchor="end">${escapeXml(formatNumber(max))}</text>`);
    if (limit !== undefined) {
      const text = `${systemLabel(limit.system)}: ${formatNumber(limit.value)} ${metric}${limitOnScale ? '' : ' (off the scale)'}`;
      const ly = limitOnScale ? base - (limit.value / max) * PLOT_HEIGHT : y + PLOT_TOP + 1;
      if (limitOnScale)
        parts.push(
          `<line x1="${LEFT}" y1="${ly.toFixed(1)}" x2="${PLOT_RIGHT}" y2="${ly.toFixed(1)}" stroke="${colourOf(limit.system, spare)}" stroke-dasharray="6 4"/>`,
        );
      parts.push(`<text x="${WIDTH - 20}" y="${(ly - 3).toFixed(1)}" font-size="10" text-anchor="end">${escapeXml(text)}</text>`);
    }
    cases.forEach((c, ci) => {
      const gx = LEFT + ci * groupWidth + (groupWidth - barWidth * systems.length) / 2;
      systems.forEach((s, si) => {
        const f = figures.find((x) => x.case === c && x.system === s);
        if (f === undefined) return;
        const h = (f.value / max) * PLOT_HEIGHT;
        const x = gx + si * barWidth;
        parts.push(
          `<rect x="${x.toFixed(1)}" y="${(base - h).toFixed(1)}" width="${(barWidth - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${colourOf(s, spare)}">` +
            `<title>${escapeXml(`${systemLabel(s)}, ${c}: ${formatNumber(f.value)} ${metric}`)}</title></rect>`,
        );
      });
      const label = c.length > 40 ? `${c.slice(0, 39)}…` : c;
      parts.push(
        `<text x="${(LEFT + (ci + 0.5) * groupWidth).toFixed(1)}" y="${base + 12}" font-size="9" text-anchor="start" transform="rotate(25 ${(LEFT + (ci + 0.5) * groupWidth).toFixed(1)} ${base + 12})">${escapeXml(label)}</text>`,
      );
    });
    let lx = WIDTH - 20 - systems.length * 130;
    for (const s of systems) {
      parts.push(`<rect x="${lx}" y="${y + 10}" width="12" height="12" fill="${colourOf(s, spare)}"/>`);
      parts.push(`<text x="${lx + 16}" y="${y + 20}" font-size="11">${escapeXml(systemLabel(s))}</text>`);
      lx += 130;
    }
    panels.push(`<g>${parts.join('')}</g>`);
    y += PANEL_HEIGHT;
  }
  const height = y + 10;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${LEFT}" y="30" font-size="18" font-weight="bold">${escapeXml(title)}</text>`,
    ...panels,
    '</svg>',
    '',
  ].join('\n');
}
