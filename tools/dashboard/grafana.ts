/**
 * Small builders for a Grafana 10 dashboard (schemaVersion 38): rows, time series, stats and
 * tables queried from one Prometheus data source, laid out left to right on Grafana's 24-column
 * grid. tools/dashboard/fjord-overview.ts describes the Fjord dashboard with them; the JSON they
 * produce is what Grafana's "Export for sharing externally" writes, so it imports unchanged.
 */

/** The data source every query uses: the import input / dashboard variable `DS_PROMETHEUS`. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, for Grafana to replace
export const DATASOURCE = { type: 'prometheus', uid: '${DS_PROMETHEUS}' } as const;

export interface Query {
  expr: string;
  legend?: string;
  /** An instant query (tables): one value per series instead of a range. */
  instant?: boolean;
}

export interface PanelOptions {
  description?: string;
  unit?: string;
  /** Columns of the 24-wide grid (default 8) and rows of 30 px (default 8). */
  w?: number;
  h?: number;
  /** Stats: values at or above `red` (and below `green`, if given) turn red. */
  red?: number;
  green?: number;
  min?: number;
  max?: number;
  /** Time series drawn as stacked areas. */
  stack?: boolean;
}

export type Panel = Record<string, unknown>;

function targets(queries: readonly Query[], table: boolean): Record<string, unknown>[] {
  return queries.map((q, i) => ({
    datasource: DATASOURCE,
    editorMode: 'code',
    expr: q.expr,
    ...(table ? { format: 'table' } : {}),
    instant: q.instant ?? false,
    legendFormat: q.legend ?? '__auto',
    range: !(q.instant ?? false),
    refId: String.fromCharCode(65 + i),
  }));
}

function defaults(o: PanelOptions): Record<string, unknown> {
  return {
    ...(o.unit ? { unit: o.unit } : {}),
    ...(o.min !== undefined ? { min: o.min } : {}),
    ...(o.max !== undefined ? { max: o.max } : {}),
  };
}

export function timeseries(title: string, queries: readonly Query[], o: PanelOptions = {}): Panel {
  return {
    type: 'timeseries',
    title,
    description: o.description ?? '',
    gridPos: { w: o.w ?? 8, h: o.h ?? 8 },
    datasource: DATASOURCE,
    fieldConfig: {
      defaults: {
        ...defaults(o),
        color: { mode: 'palette-classic' },
        custom: {
          drawStyle: 'line',
          lineWidth: 1,
          fillOpacity: o.stack ? 25 : 10,
          showPoints: 'never',
          spanNulls: false,
          stacking: { mode: o.stack ? 'normal' : 'none', group: 'A' },
        },
      },
      overrides: [],
    },
    options: {
      legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
      tooltip: { mode: 'multi', sort: 'desc' },
    },
    targets: targets(queries, false),
  };
}

/** A single number, green below `red` (and, with `green`, red below it: "must be exactly 1"). */
export function stat(title: string, query: Query, o: PanelOptions = {}): Panel {
  const steps: { color: string; value: number | null }[] = [];
  if (o.green !== undefined) steps.push({ color: 'red', value: null }, { color: 'green', value: o.green });
  else steps.push({ color: 'green', value: null });
  if (o.red !== undefined) steps.push({ color: 'red', value: o.red });
  return {
    type: 'stat',
    title,
    description: o.description ?? '',
    gridPos: { w: o.w ?? 8, h: o.h ?? 8 },
    datasource: DATASOURCE,
    fieldConfig: {
      defaults: { ...defaults(o), color: { mode: 'thresholds' }, thresholds: { mode: 'absolute', steps } },
      overrides: [],
    },
    options: {
      colorMode: 'background',
      graphMode: 'area',
      justifyMode: 'auto',
      orientation: 'auto',
      reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
      textMode: 'auto',
    },
    targets: targets([query], false),
  };
}

/** The current value of each series as a table row (labels as columns). */
export function table(title: string, query: Query, o: PanelOptions = {}): Panel {
  return {
    type: 'table',
    title,
    description: o.description ?? '',
    gridPos: { w: o.w ?? 8, h: o.h ?? 8 },
    datasource: DATASOURCE,
    fieldConfig: { defaults: { ...defaults(o), custom: { align: 'auto' } }, overrides: [] },
    options: { showHeader: true, sortBy: [{ displayName: 'Value', desc: true }] },
    targets: targets([{ ...query, instant: true }], true),
    transformations: [{ id: 'organize', options: { excludeByName: { Time: true, __name__: true, job: true } } }],
  };
}

/** A Prometheus query variable (`label_values(...)`): several values, or All (`allValue`). */
export function queryVariable(name: string, label: string, query: string, allValue = '.+'): Record<string, unknown> {
  return {
    name,
    label,
    type: 'query',
    datasource: DATASOURCE,
    definition: query,
    query: { query, refId: 'PrometheusVariableQueryEditor-VariableQuery' },
    refresh: 2,
    includeAll: true,
    allValue,
    multi: true,
    current: {},
    options: [],
    regex: '',
    sort: 1,
    hide: 0,
    skipUrlSync: false,
  };
}

/**
 * Rows of panels laid out on the grid: each row's panels left to right, wrapping at 24 columns,
 * ids numbered from 1 in order.
 */
export function layout(rows: readonly { title: string; panels: readonly Panel[] }[]): Panel[] {
  const out: Panel[] = [];
  let id = 1;
  let y = 0;
  for (const row of rows) {
    out.push({ type: 'row', title: row.title, collapsed: false, id: id++, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    let x = 0;
    let rowHeight = 0;
    for (const panel of row.panels) {
      const { w, h } = panel.gridPos as { w: number; h: number };
      if (x + w > 24) {
        x = 0;
        y += rowHeight;
        rowHeight = 0;
      }
      out.push({ ...panel, id: id++, gridPos: { h, w, x, y } });
      x += w;
      rowHeight = Math.max(rowHeight, h);
    }
    y += rowHeight;
  }
  return out;
}
