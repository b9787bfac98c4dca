/**
 * Times and durations as the offset-history options read and print them: a point in time given
 * as an ISO datetime or as a duration back from now (1h, 30m, 2d, 90s, 1h30m, or Kafka's
 * PnDTnHnMnS), and an age printed compactly (4m12s) for LAG-TIME.
 */
import { parseDatetime, parseDuration } from './reset-offsets.js';
import { CliError } from './tool.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A short duration: one or more number+unit parts (ms, s, m, h, d, w), e.g. 90s, 1h30m, 2d. */
function parseShortDuration(text: string): number | null {
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d|w))+$/.test(text)) return null;
  let total = 0;
  for (const part of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g)) total += Number(part[1]) * UNIT_MS[part[2]!]!;
  return Math.round(total);
}

/**
 * A point in time for --from/--to/--to-datetime: an ISO datetime (2026-12-05T09:00:00, with an
 * optional zone; local time without one, as Kafka's --to-datetime), or a duration back from
 * `now`. One clear error names the option and both accepted forms.
 */
export function parseTimePoint(option: string, text: string, now: number): number {
  const trimmed = text.trim();
  const short = parseShortDuration(trimmed);
  if (short !== null) return now - short;
  const bad = new CliError(`${option} "${text}" is neither a datetime like 2026-01-31T12:00:00 nor a duration like 30m, 1h, 2d or P1DT2H`);
  if (trimmed.startsWith('P')) {
    try {
      return now - parseDuration(trimmed);
    } catch {
      throw bad;
    }
  }
  // A date needs at least yyyy-MM-dd: Date.parse would take "5" or "May" as dates.
  if (!/^\d{4}-\d\d-\d\d/.test(trimmed)) throw bad;
  try {
    return parseDatetime(trimmed);
  } catch {
    throw bad;
  }
}

/** An age in milliseconds, compactly: 850ms, 12s, 4m12s, 2h05m, 3d04h (two units at most). */
export function formatAge(ms: number): string {
  if (ms < 0) ms = 0;
  if (ms < 1000) return `${Math.floor(ms)}ms`;
  const s = Math.floor(ms / 1000);
  const two = (n: number): string => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${two(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86400)}d${two(Math.floor(s / 3600) % 24)}h`;
}
