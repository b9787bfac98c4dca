/**
 * The arithmetic of `npm run bench`: medians of repeats, the systems' order per repeat, ratios,
 * and server CPU seconds per GB. Pure functions (unit-tested in test/bench/suite.test.ts).
 */
import type { Figure, Sample } from './workload.js';

/** The median; for an even count, the mean of the two middle values. NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** `list` rotated left by `by`: repeat r starts with the r-th system, so no system always goes first. */
export function rotate<T>(list: readonly T[], by: number): T[] {
  if (list.length === 0) return [];
  const k = ((by % list.length) + list.length) % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

/**
 * The p-th percentile (0 to 100) by nearest rank: the smallest value with at least p% of the
 * values at or below it (p50 of an even count is the lower middle one). NaN for none.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!;
}

/**
 * The median of repeats with their range, as the benches print it: "12.3 MB/s (10–15)" (one
 * decimal, the bounds rounded), `unit` after the median; the median alone for a single value.
 */
export function medianWithRange(values: readonly number[], unit = ''): string {
  const m = `${median(values).toFixed(1)}${unit}`;
  return values.length <= 1 ? m : `${m} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`;
}

/** The arithmetic mean. NaN for none. */
export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, x) => a + x, 0) / values.length;
}

/** Groups samples by (case, system, metric), in first-seen order, into medians with their samples. */
export function medians(samples: readonly Sample[]): Figure[] {
  const groups = new Map<string, Figure>();
  for (const s of samples) {
    const key = `${s.case}\u0000${s.system}\u0000${s.metric}`;
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { ...s, samples: [s.value] });
    else g.samples.push(s.value);
  }
  for (const g of groups.values()) g.value = median(g.samples);
  return [...groups.values()];
}

/** a / b, or NaN where b is missing or zero. */
export function ratio(a: number | undefined, b: number | undefined): number {
  return a === undefined || b === undefined || b === 0 || !Number.isFinite(a) || !Number.isFinite(b) ? Number.NaN : a / b;
}

/** Server CPU seconds per GB (2^30 bytes) moved. */
export function cpuSecondsPerGB(cpuSeconds: number, bytes: number): number {
  return bytes > 0 ? cpuSeconds / (bytes / 2 ** 30) : Number.NaN;
}

/** MB (2^20 bytes) per second. */
export function mbPerSecond(bytes: number, seconds: number): number {
  return seconds > 0 ? bytes / 2 ** 20 / seconds : Number.NaN;
}

/** A figure for a table cell: 3 significant digits, at most 2 decimals; '–' for NaN. */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return '–';
  const abs = Math.abs(v);
  if (abs >= 1000) return Math.round(v).toLocaleString('en-US');
  if (abs >= 100) return v.toFixed(0);
  if (abs >= 10) return v.toFixed(1);
  return v.toFixed(2);
}
