/**
 * A group's offset history on its page: a uPlot chart of the committed position and the lag
 * over a window (1 h, 6 h, 24 h, 7 d), summed over the group's partitions or one line per
 * partition, and the newest changes of its committed offsets (commits, resets, deletions,
 * expiries) as a table. The server samples the series (at most a few hundred points) and bounds
 * what it reads of the history; this page only draws them.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { query, seg } from '../api.js';
import { ErrorLine, Notice } from '../components.js';
import { useApi } from '../hooks.js';

export interface HistoryView {
  window: string;
  from: number;
  to: number;
  truncated: boolean;
  partitions: { topic: string; partition: number }[];
  partitionCount: number;
  times: number[];
  position: (number | null)[][];
  lag: (number | null)[][];
  changeCount: number;
  changes: {
    time: number;
    topic: string;
    partition: number;
    previousOffset: string | null;
    newOffset: string | null;
    cause: string;
    memberId: string;
    clientId: string;
  }[];
}

const WINDOWS = ['1h', '6h', '24h', '7d'];
const COLOURS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7b83', '#6e7781'];

/** The sum of each column's known values (null where none is known). */
function summed(rows: (number | null)[][], length: number): (number | null)[] {
  return Array.from({ length }, (_, i) => {
    let sum: number | null = null;
    for (const r of rows) if (r[i] !== null && r[i] !== undefined) sum = (sum ?? 0) + r[i]!;
    return sum;
  });
}

function Chart({ view, perPartition }: { view: HistoryView; perPartition: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const n = view.times.length;
    const names = view.partitions.map((p) => `${p.topic}-${p.partition}`);
    const lines: { label: string; scale: string; values: (number | null)[]; dash?: number[] }[] = perPartition
      ? [
          ...view.position.map((v, i) => ({ label: `position ${names[i]}`, scale: 'offset', values: v })),
          ...view.lag.map((v, i) => ({ label: `lag ${names[i]}`, scale: 'lag', values: v, dash: [6, 4] })),
        ]
      : [
          { label: 'position (sum)', scale: 'offset', values: summed(view.position, n) },
          { label: 'lag (sum)', scale: 'lag', values: summed(view.lag, n), dash: [6, 4] },
        ];
    const half = perPartition ? view.partitions.length : 1;
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth || 800),
        height: 280,
        scales: { x: { time: true } },
        series: [
          {},
          ...lines.map((l, i) => ({
            label: l.label,
            scale: l.scale,
            stroke: COLOURS[(i % half) % COLOURS.length],
            width: 1.5,
            ...(l.dash ? { dash: l.dash } : {}),
            // A line with few known values (a group that started committing lately) shows them as dots.
            points: { show: l.values.filter((v) => v !== null).length < 12, size: 6 },
            spanGaps: false,
          })),
        ],
        axes: [{}, { scale: 'offset', label: 'committed offset' }, { scale: 'lag', side: 1, label: 'lag (records)', grid: { show: false } }],
      },
      [view.times.map((t) => t / 1000), ...lines.map((l) => l.values)],
      el,
    );
    return () => plot.destroy();
  }, [view, perPartition]);
  return <div ref={box} class="chart" data-testid="history-chart" data-points={view.times.length} />;
}

const offsetText = (o: string | null) => o ?? '-';

export function GroupHistory({ id, version }: { id: string; version: number }) {
  const [span, setSpan] = useState('1h');
  const [perPartition, setPerPartition] = useState(false);
  const { data, error, reload } = useApi<HistoryView>(`/groups/${seg(id)}/history${query({ window: span })}`, 10_000);
  // A reset or an undo on this page: show its history lines now, not at the next refresh.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else reload();
  }, [version, reload]);
  return (
    <>
      <h2>Position and lag over time</h2>
      <div class="toolbar">
        <fieldset class="windows" aria-label="Window">
          {WINDOWS.map((w) => (
            <button type="button" key={w} aria-pressed={w === span} class={w === span ? 'current' : ''} onClick={() => setSpan(w)}>
              {w}
            </button>
          ))}
        </fieldset>
        <label>
          Lines{' '}
          <select value={perPartition ? 'partition' : 'sum'} onChange={(e) => setPerPartition(e.currentTarget.value === 'partition')}>
            <option value="sum">summed over partitions</option>
            <option value="partition">per partition</option>
          </select>
        </label>
      </div>
      <ErrorLine message={error} />
      {data && data.partitions.length < data.partitionCount && (
        <Notice>
          The first {data.partitions.length} of {data.partitionCount} partitions are charted.
        </Notice>
      )}
      {data?.truncated && <Notice>The history is long: the chart starts with the newest records read, later than the window.</Notice>}
      {data && <Chart view={data} perPartition={perPartition} />}
      <h2>Offset history ({data ? data.changeCount : 0} in the window)</h2>
      {data && data.changes.length === 0 && <Notice>No change of a committed offset in the window.</Notice>}
      {data && data.changes.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Time</th>
              <th>Topic</th>
              <th>Partition</th>
              <th>Old → new</th>
              <th>Cause</th>
              <th>Member / client</th>
            </tr>
          </thead>
          <tbody>
            {data.changes.map((c, i) => (
              <tr key={`${c.time}-${i}`} data-testid="history-row" data-cause={c.cause}>
                <td>{new Date(c.time).toISOString()}</td>
                <td>{c.topic || '-'}</td>
                <td>{c.partition >= 0 ? c.partition : '-'}</td>
                <td>{c.cause === 'alive' ? `= ${offsetText(c.newOffset)}` : `${offsetText(c.previousOffset)} → ${offsetText(c.newOffset)}`}</td>
                <td>{c.cause}</td>
                <td>
                  {c.memberId || '-'} / {c.clientId || '-'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
