/**
 * A group's offset history on the console's group page (issue 25): the changes of its committed
 * offsets in a window (1 h, 6 h, 24 h or 7 d back from now), newest first, and the chart's
 * series: each partition's committed position and lag at evenly spaced times over the window.
 * The position at a time is the history's newest change before it; the log end offset at a time
 * is ListOffsets by that timestamp (the first record written at or after it), so the lag then is
 * the records written before that time and not yet consumed. Bounded whatever the history holds:
 * at most MAX_HISTORY_RECORDS records of the history partition read (the newest), at most
 * MAX_POINTS times (one ListOffsets each), MAX_CHART_PARTITIONS partitions, MAX_CHANGES changes.
 */
import type { Admin, ClientOptions } from '../client/index.js';
import { readGroupHistoryBounded, type HistoryEntry } from '../client/offset-history/history-reader.js';
import { badRequest } from './console-error.js';

export const HISTORY_WINDOWS: Readonly<Record<string, number>> = { '1h': 3_600_000, '6h': 21_600_000, '24h': 86_400_000, '7d': 604_800_000 };
export const DEFAULT_POINTS = 120;
export const MAX_POINTS = 240;
/** Records of the history partition read for one answer (the partition is shared with other groups). */
export const MAX_HISTORY_RECORDS = 50_000;
const MAX_CHART_PARTITIONS = 50;
const MAX_CHANGES = 200;
/** A history read that makes no progress for this long fails (its leader down). */
export const HISTORY_STALL_MS = 5000;
/** ListOffsets requests in flight at once while sampling the log end offsets. */
const SAMPLING_CONCURRENCY = 8;

export interface HistoryQuery {
  window: string;
  points: number;
}

export function historyQuery(window: string | null, points: number): HistoryQuery {
  const w = window || '1h';
  if (HISTORY_WINDOWS[w] === undefined) throw badRequest(`window must be one of ${Object.keys(HISTORY_WINDOWS).join(', ')}, not "${w}"`);
  return { window: w, points: Math.min(MAX_POINTS, Math.max(2, points)) };
}

interface Tp {
  topic: string;
  partition: number;
}

const tpOrder = (a: Tp, b: Tp): number => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1);
const key = (tp: Tp): string => `${tp.topic}\u0000${tp.partition}`;
const num = (o: bigint): number | null => (o >= 0n ? Number(o) : null);

export async function groupHistory(admin: Admin, client: ClientOptions, group: string, q: HistoryQuery, now = Date.now()) {
  const from = now - HISTORY_WINDOWS[q.window]!;
  const [{ entries, truncated }, committed] = await Promise.all([
    readGroupHistoryBounded(admin, client, group, { from, maxRecords: MAX_HISTORY_RECORDS }, HISTORY_STALL_MS),
    admin.listGroupOffsets(group),
  ]);
  // Per partition, its changes in time order (alive records move nothing and are not charted).
  const changes = new Map<string, HistoryEntry[]>();
  const all = new Map<string, Tp>();
  for (const e of entries) {
    if (e.cause === 'alive' || e.partition < 0 || e.topic === '') continue;
    const k = key(e);
    all.set(k, { topic: e.topic, partition: e.partition });
    const list = changes.get(k);
    if (list) list.push(e);
    else changes.set(k, [e]);
  }
  for (const [topic, parts] of committed) for (const p of parts.keys()) all.set(key({ topic, partition: p }), { topic, partition: p });
  const partitions = [...all.values()].sort(tpOrder).slice(0, MAX_CHART_PARTITIONS);
  const times = Array.from({ length: q.points }, (_, i) => Math.round(from + ((now - from) * i) / (q.points - 1)));

  const positionAt = (tp: Tp, t: number): number | null => {
    const list = changes.get(key(tp));
    if (!list) return num(committed.get(tp.topic)?.get(tp.partition)?.offset ?? -1n);
    let at: number | null = num(list[0]!.previousOffset);
    for (const e of list) {
      if (e.timestamp > t) break;
      at = num(e.newOffset);
    }
    return at;
  };
  const ends = await logEndsAt(admin, partitions, times);
  const position = partitions.map((tp) => times.map((t) => positionAt(tp, t)));
  const lag = partitions.map((_, p) =>
    times.map((_, i) => {
      const pos = position[p]?.[i] ?? null;
      const end = ends[i]?.[p] ?? null;
      return pos === null || end === null ? null : Math.max(0, end - pos);
    }),
  );
  const newest = entries.slice(-MAX_CHANGES).reverse();
  return {
    groupId: group,
    window: q.window,
    from,
    to: now,
    truncated,
    partitions,
    partitionCount: all.size,
    times,
    position,
    lag,
    changeCount: entries.length,
    changes: newest.map((e) => ({
      time: e.timestamp,
      topic: e.topic,
      partition: e.partition,
      previousOffset: e.previousOffset >= 0n ? String(e.previousOffset) : null,
      newOffset: e.newOffset >= 0n ? String(e.newOffset) : null,
      cause: e.cause,
      memberId: e.memberId,
      clientId: e.clientId,
    })),
  };
}

/**
 * Each partition's log end offset at each time: the first offset written at or after it, or the
 * latest offset where nothing was written since (null where the partition cannot be read).
 */
async function logEndsAt(admin: Admin, partitions: readonly Tp[], times: readonly number[]): Promise<(number | null)[][]> {
  if (partitions.length === 0) return times.map(() => []);
  const latest = await admin.listOffsets(partitions.map((tp) => ({ ...tp, timestamp: -1n }))).catch(() => null);
  const out: (number | null)[][] = new Array(times.length);
  const sample = async (i: number): Promise<void> => {
    const answers = await admin.listOffsets(partitions.map((tp) => ({ ...tp, timestamp: BigInt(times[i]!) }))).catch(() => null);
    out[i] = partitions.map((_, p) => {
      const o = answers?.[p]?.offset;
      if (o !== undefined && o >= 0n) return Number(o);
      return latest?.[p] ? Number(latest[p]!.offset) : null;
    });
  };
  for (let i = 0; i < times.length; i += SAMPLING_CONCURRENCY) {
    await Promise.all(times.slice(i, i + SAMPLING_CONCURRENCY).map((_, j) => sample(i + j)));
  }
  return out;
}
