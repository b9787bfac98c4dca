/**
 * kafka-consumer-groups.sh --describe's tables, in Kafka 4's layout (KIP-1099): offsets and lag,
 * members (with --verbose their epochs and current and target assignments) and state (with
 * --verbose the group and target assignment epochs), for classic and consumer (KIP-848) groups
 * alike; what a classic group does not have is "-", as Kafka prints it.
 */
import type { Admin, GroupDescription } from '../../client/index.js';
import { tpKey } from '../../common/partition-keys.js';
import { formatAge } from './durations.js';
import type { OffsetTarget } from '../../client/offset-history/partition-reader.js';

type Member = GroupDescription['members'][number];
type TopicPartition = Member['assignment'][number];

const MISSING = '-';

/** Java's `%-Ns`: left-aligned, padded to at least n characters, never cut. */
export function pad(text: string, n: number): string {
  return text.padEnd(n);
}

/**
 * Kafka's notices about a group's state go to stderr before its table: an Empty group "has no
 * active members", a rebalancing one (classic or consumer) gets a warning.
 */
export function noticeState(group: string, d: GroupDescription): void {
  if (d.state === 'Empty') process.stderr.write(`\nConsumer group '${group}' has no active members.\n`);
  else if (['PreparingRebalance', 'CompletingRebalance', 'Assigning', 'Reconciling'].includes(d.state)) {
    process.stderr.write(`\nWarning: Consumer group '${group}' is rebalancing.\n`);
  }
}

const optional = (n: number | undefined): string => (n === undefined ? MISSING : String(n));

/** The --describe --state table: the coordinator as `host:port  (id)`; --verbose adds the epochs. */
export function printState(group: string, d: GroupDescription, verbose: boolean): void {
  const coordinator = `${d.coordinator.host}:${d.coordinator.port}  (${d.coordinator.nodeId})`;
  const head = (g: string, c: string, strategy: string, state: string): string =>
    `${pad(g, Math.max(15, group.length))} ${pad(c, Math.max(25, coordinator.length))} ${pad(strategy, 20)} ${pad(state, 20)}`;
  const strategy = d.protocol === '' ? MISSING : d.protocol;
  const members = String(d.members.length);
  const [header, row] = verbose
    ? [
        `${head('GROUP', 'COORDINATOR (ID)', 'ASSIGNMENT-STRATEGY', 'STATE')} ${pad('GROUP-EPOCH', 15)} ${pad('TARGET-ASSIGNMENT-EPOCH', 25)} #MEMBERS`,
        `${head(group, coordinator, strategy, d.state)} ${pad(optional(d.groupEpoch), 15)} ${pad(optional(d.targetAssignmentEpoch), 25)} ${members}`,
      ]
    : [`${head('GROUP', 'COORDINATOR (ID)', 'ASSIGNMENT-STRATEGY', 'STATE')} #MEMBERS`, `${head(group, coordinator, strategy, d.state)} ${members}`];
  process.stdout.write(`\n${header}\n${row}\n`);
}

/** Kafka 4's assignment text: `topic:0,1;other:2`, topics sorted, partitions in order; "-" if none. */
export function assignmentText(tps: readonly TopicPartition[] | undefined): string {
  if (!tps || tps.length === 0) return MISSING;
  const byTopic = new Map<string, number[]>();
  for (const tp of tps) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
  return [...byTopic]
    .map(([t, ps]) => `${t}:${ps.sort((a, b) => a - b).join(',')}`)
    .sort()
    .join(';');
}

/**
 * The --describe --members table (GROUP-INSTANCE-ID only when a member has one). --verbose adds
 * each member's epoch and assignment and the target it is reconciling to; a classic group's
 * members have no epochs or targets ("-").
 */
export function printMembers(group: string, d: GroupDescription, verbose: boolean): void {
  const withInstance = d.members.some((m) => (m.groupInstanceId ?? '') !== '');
  const w = { group: Math.max(15, group.length), id: 15, instance: 17, host: 15, client: 15, current: 20, target: 20 };
  const verboseCells = (m: Member): [string, string, string, string] => [
    optional(m.memberEpoch),
    assignmentText(m.assignment),
    // The target epoch is the group's target assignment epoch, as Kafka's tool prints it.
    optional(d.targetAssignmentEpoch),
    assignmentText(m.targetAssignment),
  ];
  for (const m of d.members) {
    w.id = Math.max(w.id, m.memberId.length);
    w.instance = Math.max(w.instance, (m.groupInstanceId ?? '').length);
    w.host = Math.max(w.host, m.clientHost.length);
    w.client = Math.max(w.client, m.clientId.length);
    const [, current, , target] = verboseCells(m);
    w.current = Math.max(w.current, current.length);
    w.target = Math.max(w.target, target.length);
  }
  const row = (g: string, id: string, inst: string, host: string, client: string, n: string): string =>
    `${pad(g, w.group)} ${pad(id, w.id)} ${withInstance ? `${pad(inst, w.instance)} ` : ''}${pad(host, w.host)} ${pad(client, w.client)} ${pad(n, 15)} `;
  const epochs = (cells: readonly string[]): string => `${pad(cells[0]!, 15)} ${pad(cells[1]!, w.current)} ${pad(cells[2]!, 15)} ${pad(cells[3]!, w.target)}`;
  let out = `\n${row('GROUP', 'CONSUMER-ID', 'GROUP-INSTANCE-ID', 'HOST', 'CLIENT-ID', '#PARTITIONS')}`;
  out += `${verbose ? epochs(['CURRENT-EPOCH', 'CURRENT-ASSIGNMENT', 'TARGET-EPOCH', 'TARGET-ASSIGNMENT']) : ''}\n`;
  for (const m of d.members) {
    out += row(group, m.memberId, m.groupInstanceId ?? '', m.clientHost, m.clientId, String(m.assignment.length));
    out += `${verbose ? epochs(verboseCells(m)) : ''}\n`;
  }
  process.stdout.write(out);
}

/** Where --lag-time gets the timestamp of the first record at or after each committed offset. */
export type RecordTimestamps = (targets: readonly OffsetTarget[]) => Promise<Map<string, bigint>>;

/**
 * The --describe (--offsets) table: each partition with an owner or a committed offset, and its
 * lag; with `lagTime` (--lag-time, a Fjord extension) a LAG-TIME column after LAG.
 */
export async function printOffsets(admin: Admin, group: string, d: GroupDescription, lagTime?: RecordTimestamps): Promise<void> {
  const committed = await admin.listGroupOffsets(group);
  const owner = new Map<string, Member>();
  for (const m of d.members) for (const tp of m.assignment) owner.set(`${tp.topic}\u0000${tp.partition}`, m);
  const keys = new Set<string>(owner.keys());
  for (const [t, ps] of committed) for (const p of ps.keys()) keys.add(`${t}\u0000${p}`);
  const tps = [...keys]
    .map((k) => ({ topic: k.split('\u0000')[0]!, partition: Number(k.split('\u0000')[1]) }))
    .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  const ends = tps.length > 0 ? await admin.listOffsets(tps.map((tp) => ({ ...tp, timestamp: -1n }))).catch(() => null) : [];
  const committedAt = (tp: { topic: string; partition: number }): bigint => committed.get(tp.topic)?.get(tp.partition)?.offset ?? -1n;
  const ages = lagTime ? await lagTimes(admin, tps, tps.map(committedAt), ends, lagTime) : null;
  const rows = tps.map((tp, i) => {
    const c = committedAt(tp);
    const end = ends?.[i]?.offset;
    const m = owner.get(`${tp.topic}\u0000${tp.partition}`);
    return [
      group,
      tp.topic,
      String(tp.partition),
      c >= 0n ? String(c) : MISSING,
      end !== undefined ? String(end) : MISSING,
      c >= 0n && end !== undefined ? String(end - c) : MISSING,
      ...(ages ? [ages[i]!] : []),
      m?.memberId ?? MISSING,
      m?.clientHost ?? MISSING,
      m?.clientId ?? MISSING,
    ];
  });
  // Kafka prints nothing, not even the header, for a group with no members and no offsets.
  if (rows.length === 0) return;
  // LAG-TIME, when asked for, is one more 15-wide column after LAG: the member columns shift by one.
  const x = ages ? 1 : 0;
  const w = { group: 15, topic: 15, id: 15, host: 15 };
  for (const r of rows) {
    w.group = Math.max(w.group, r[0]!.length);
    w.topic = Math.max(w.topic, r[1]!.length);
    w.id = Math.max(w.id, r[6 + x]!.length);
    w.host = Math.max(w.host, r[7 + x]!.length);
  }
  const line = (r: readonly string[]): string =>
    `${pad(r[0]!, w.group)} ${pad(r[1]!, w.topic)} ${pad(r[2]!, 10)} ${pad(r[3]!, 15)} ${pad(r[4]!, 15)} ${pad(r[5]!, 15)} ${ages ? `${pad(r[6]!, 15)} ` : ''}` +
    `${pad(r[6 + x]!, w.id)} ${pad(r[7 + x]!, w.host)} ${r[8 + x]!}`;
  const header = ['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', ...(ages ? ['LAG-TIME'] : []), 'CONSUMER-ID', 'HOST', 'CLIENT-ID'];
  process.stdout.write(`${[header, ...rows].map((r) => `\n${line(r)}`).join('')}\n`);
}

/**
 * Each partition's LAG-TIME: the age of the first record at or after its committed offset (how
 * long ago the oldest unconsumed record was written); "-" with no committed offset, at the log
 * end (nothing to wait for), below the log start (the record is gone), or where no record came.
 */
async function lagTimes(
  admin: Admin,
  tps: readonly { topic: string; partition: number }[],
  committed: readonly bigint[],
  ends: readonly { offset: bigint }[] | null,
  timestamps: RecordTimestamps,
): Promise<string[]> {
  const starts = tps.length > 0 ? await admin.listOffsets(tps.map((tp) => ({ ...tp, timestamp: -2n }))).catch(() => null) : [];
  const readable = (i: number): boolean => {
    const [c, end, start] = [committed[i]!, ends?.[i]?.offset, starts?.[i]?.offset];
    return c >= 0n && end !== undefined && start !== undefined && c < end && c >= start;
  };
  const targets = tps.flatMap((tp, i) => (readable(i) ? [{ ...tp, offset: committed[i]!, end: ends![i]!.offset }] : []));
  const found = await timestamps(targets);
  const now = Date.now();
  return tps.map((tp, i) => {
    const ts = readable(i) ? found.get(tpKey(tp.topic, tp.partition)) : undefined;
    return ts === undefined ? MISSING : formatAge(now - Number(ts));
  });
}
