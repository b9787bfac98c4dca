/**
 * kafka-consumer-groups.sh --describe --history's table: one line per change of a committed
 * offset (TIME TOPIC PARTITION OLD -> NEW CAUSE MEMBER/CLIENT), oldest first, times in UTC;
 * a run of `alive` records (the group committed without moving anything) is one line with its
 * count (`alive x3`) and, at its end, the time of its last record. --topic t[:p] keeps only those partitions.
 */
import type { HistoryEntry } from '../../client/offset-history/history-reader.js';
import { CliError } from './tool.js';

const MISSING = '-';

/** Java's `%-Ns`. */
const pad = (text: string, n: number): string => text.padEnd(n);

/** The --topic filter of --history: topic names, each with all its partitions or those listed. */
export function historyTopicFilter(specs: readonly string[] | undefined): ((e: { topic: string; partition: number }) => boolean) | null {
  if (!specs || specs.length === 0) return null;
  const wanted = new Map<string, Set<number> | null>();
  for (const spec of specs) {
    const [topic, list] = spec.split(':') as [string, string | undefined];
    if (list === undefined) {
      wanted.set(topic, null);
      continue;
    }
    const parts = wanted.get(topic) ?? new Set<number>();
    for (const p of list.split(',')) {
      const n = Number(p);
      if (p.trim() === '' || !Number.isInteger(n) || n < 0) throw new CliError(`invalid partition "${p}" in --topic ${spec}`);
      parts.add(n);
    }
    if (wanted.get(topic) !== null) wanted.set(topic, parts);
  }
  return (e) => {
    if (!wanted.has(e.topic)) return false;
    const parts = wanted.get(e.topic);
    return parts === null || parts!.has(e.partition);
  };
}

const offsetText = (o: bigint): string => (o >= 0n ? String(o) : MISSING);
const timeText = (ms: number): string => new Date(ms).toISOString();
const who = (e: HistoryEntry): string => `${e.memberId || MISSING}/${e.clientId || MISSING}`;

/** The table's rows: changes one by one, runs of alive records folded into one row. */
function historyRows(entries: readonly HistoryEntry[]): string[][] {
  const rows: string[][] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.cause !== 'alive') {
      rows.push([timeText(e.timestamp), e.topic, String(e.partition), `${offsetText(e.previousOffset)} -> ${offsetText(e.newOffset)}`, e.cause, who(e)]);
      continue;
    }
    let last = i;
    while (last + 1 < entries.length && entries[last + 1]!.cause === 'alive') last++;
    const run = entries.slice(i, last + 1);
    const same = <T>(f: (x: HistoryEntry) => T): T | undefined => (run.every((x) => f(x) === f(e)) ? f(e) : undefined);
    const topic = same((x) => x.topic);
    const partition = same((x) => x.partition);
    const offset = same((x) => x.newOffset);
    const members = same(who);
    // A run: its count in CAUSE, its last time at the end of the line (the columns stay narrow).
    const cause = run.length === 1 ? 'alive' : `alive x${run.length}`;
    const lastAt = run.length === 1 ? '' : ` (last ${timeText(run[run.length - 1]!.timestamp)})`;
    rows.push([
      timeText(e.timestamp),
      topic || MISSING,
      partition === undefined || partition < 0 ? MISSING : String(partition),
      // Alive: the offset did not move; shown once.
      offset === undefined ? MISSING : `= ${offsetText(offset)}`,
      cause,
      `${members ?? MISSING}${lastAt}`,
    ]);
    i = last;
  }
  return rows;
}

/** Prints the history table (after a blank line, as Kafka's --describe tables). */
export function printHistory(entries: readonly HistoryEntry[]): void {
  const rows = historyRows(entries);
  const w = { topic: 15, change: 20, cause: 10 };
  for (const r of rows) {
    w.topic = Math.max(w.topic, r[1]!.length);
    w.change = Math.max(w.change, r[3]!.length);
    w.cause = Math.max(w.cause, r[4]!.length);
  }
  const line = (r: readonly string[]): string =>
    `${pad(r[0]!, 24)} ${pad(r[1]!, w.topic)} ${pad(r[2]!, 10)} ${pad(r[3]!, w.change)} ${pad(r[4]!, w.cause)} ${r[5]!}`;
  const header = ['TIME', 'TOPIC', 'PARTITION', 'OLD -> NEW', 'CAUSE', 'MEMBER/CLIENT'];
  process.stdout.write(`${[header, ...rows].map((r) => `\n${line(r)}`).join('')}\n`);
}
