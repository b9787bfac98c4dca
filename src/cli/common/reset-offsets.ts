/**
 * Planning kafka-consumer-groups --reset-offsets: which partitions (--topic t[:p,...] or
 * --all-topics or --from-file) and which new offset each gets, clamped to the log's range as
 * Kafka does.
 */
import { readFileSync } from 'node:fs';
import type { Admin } from '../../client/index.js';
import { CliError } from './tool.js';

export interface ResetSpec {
  toEarliest?: boolean;
  toLatest?: boolean;
  toCurrent?: boolean;
  toOffset?: string;
  shiftBy?: string;
  toDatetime?: string;
  byDuration?: string;
  fromFile?: string;
}

/**
 * What planning reads: log offsets and topics from the brokers, the group's committed offsets
 * from wherever the group keeps them (an Admin reads `__consumer_offsets`; the `--zookeeper`
 * mode reads `/consumers/<group>/offsets`).
 */
export interface ResetSource {
  listOffsets: Admin['listOffsets'];
  describeTopics: Admin['describeTopics'];
  listGroupOffsets(group: string, partitions?: readonly { topic: string; partition: number }[] | null): Promise<Map<string, Map<number, { offset: bigint }>>>;
}

export interface PlannedOffset {
  topic: string;
  partition: number;
  offset: bigint;
}

/** Kafka's ISO-8601 duration subset: PnDTnHnMnS (e.g. PT0.5S, P1DT2H). */
export function parseDuration(s: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(s.trim());
  if (!m || s.trim() === 'P' || s.trim().endsWith('T')) throw new CliError(`--by-duration "${s}" is not a duration like PnDTnHnMnS`);
  return ((Number(m[1] ?? 0) * 24 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 60000 + Math.round(Number(m[4] ?? 0) * 1000);
}

export function parseDatetime(s: string): number {
  // Kafka accepts yyyy-MM-ddTHH:mm:SS.sss with an optional zone; without one it is local time.
  const t = Date.parse(/T\d\d:\d\d:\d\d(\.\d+)?$/.test(s) ? s : s.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
  if (Number.isNaN(t)) throw new CliError(`--to-datetime "${s}" is not a date like 2024-01-31T12:00:00.000`);
  return t;
}

/** The partitions in scope: from --topic specs, or every topic the group has offsets for. */
export async function scopePartitions(
  admin: ResetSource,
  group: string,
  topics: readonly string[] | undefined,
  allTopics: boolean,
): Promise<{ topic: string; partition: number }[]> {
  const out: { topic: string; partition: number }[] = [];
  if (allTopics) {
    const committed = await admin.listGroupOffsets(group);
    for (const [topic, parts] of committed) for (const p of parts.keys()) out.push({ topic, partition: p });
    return out.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  }
  for (const spec of topics ?? []) {
    const [topic, list] = spec.split(':') as [string, string | undefined];
    if (list !== undefined) {
      for (const p of list.split(',')) {
        const n = Number(p);
        if (!Number.isInteger(n) || n < 0) throw new CliError(`invalid partition "${p}" in --topic ${spec}`);
        out.push({ topic, partition: n });
      }
    } else {
      const [tm] = await admin.describeTopics([topic]);
      for (const p of tm!.partitions) out.push({ topic, partition: p.partition });
    }
  }
  return out;
}

export async function planReset(admin: ResetSource, group: string, scope: { topic: string; partition: number }[], spec: ResetSpec): Promise<PlannedOffset[]> {
  if (spec.fromFile) {
    const lines = readFileSync(spec.fromFile, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    return lines.map((l) => {
      const [topic, p, o] = l.split(',');
      if (!topic || p === undefined || o === undefined || !/^\d+$/.test(p.trim()) || !/^-?\d+$/.test(o.trim()))
        throw new CliError(`bad line in ${spec.fromFile}: "${l}" (expected topic,partition,offset)`);
      return { topic, partition: Number(p), offset: BigInt(o.trim()) };
    });
  }
  const q = (timestamp: bigint) => admin.listOffsets(scope.map((tp) => ({ ...tp, timestamp })));
  const earliest = await q(-2n);
  const latest = await q(-1n);
  // As Kafka, a requested offset outside the log is clamped to it, with a warning on stderr.
  const clamp = (i: number, o: bigint): bigint => {
    const tp = `${scope[i]!.topic}-${scope[i]!.partition}`;
    const [lo, hi] = [earliest[i]!.offset, latest[i]!.offset];
    if (o > hi) process.stderr.write(`WARN New offset (${o}) is higher than latest offset for topic partition ${tp}. Value will be set to ${hi}\n`);
    else if (o < lo) process.stderr.write(`WARN New offset (${o}) is lower than earliest offset for topic partition ${tp}. Value will be set to ${lo}\n`);
    return o < lo ? lo : o > hi ? hi : o;
  };
  const committed = await admin.listGroupOffsets(group, scope);
  const current = (i: number): bigint => {
    const c = committed.get(scope[i]!.topic)?.get(scope[i]!.partition)?.offset ?? -1n;
    return c >= 0n ? c : latest[i]!.offset;
  };
  let pick: (i: number) => bigint | Promise<bigint>;
  if (spec.toEarliest) pick = (i) => earliest[i]!.offset;
  else if (spec.toLatest) pick = (i) => latest[i]!.offset;
  else if (spec.toCurrent) pick = (i) => current(i);
  else if (spec.toOffset !== undefined) {
    if (!/^-?\d+$/.test(spec.toOffset)) throw new CliError(`--to-offset must be a number, got "${spec.toOffset}"`);
    pick = (i) => clamp(i, BigInt(spec.toOffset!));
  } else if (spec.shiftBy !== undefined) {
    if (!/^-?\d+$/.test(spec.shiftBy)) throw new CliError(`--shift-by must be a number, got "${spec.shiftBy}"`);
    pick = (i) => clamp(i, current(i) + BigInt(spec.shiftBy!));
  } else if (spec.toDatetime !== undefined || spec.byDuration !== undefined) {
    const ts = spec.toDatetime !== undefined ? parseDatetime(spec.toDatetime) : Date.now() - parseDuration(spec.byDuration!);
    const byTime = await q(BigInt(ts));
    pick = (i) => (byTime[i]!.offset >= 0n ? byTime[i]!.offset : latest[i]!.offset);
  } else {
    throw new CliError(
      '--reset-offsets needs one of --to-earliest, --to-latest, --to-current, --to-offset, --shift-by, --to-datetime, --by-duration, --from-file',
    );
  }
  const out: PlannedOffset[] = [];
  for (let i = 0; i < scope.length; i++) out.push({ ...scope[i]!, offset: await pick(i) });
  return out;
}

/**
 * What --reset-offsets prints: with --export the plan as CSV (topic,partition,offset, what
 * --from-file reads back), else Kafka's GROUP/TOPIC/PARTITION/NEW-OFFSET table.
 */
export function printResetPlan(group: string, plan: readonly PlannedOffset[], exportCsv: boolean): void {
  if (exportCsv) {
    for (const p of plan) console.log(`${p.topic},${p.partition},${p.offset}`);
    return;
  }
  const pad = (text: string, n: number): string => text.padEnd(n);
  const line = (a: string, b: string, c: string, e: string): string => `\n${pad(a, 30)} ${pad(b, 30)} ${pad(c, 10)} ${pad(e, 15)}`;
  let out = plan.length > 0 ? line('GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET') : '';
  for (const p of plan) out += line(group, p.topic, String(p.partition), String(p.offset));
  process.stdout.write(`${out}\n`);
}
