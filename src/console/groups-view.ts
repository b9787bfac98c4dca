/**
 * The consumer groups pages: the list (ListGroups on every broker), and one group: state,
 * protocol, members with their assignments, and per partition the committed offset, the
 * partition's latest offset and the lag between them, in records and in time (as
 * kafka-consumer-groups.sh --lag-time: the age of the first record not yet consumed). The total
 * lag counts every partition; the rows come a page at a time (a group on a topic of 10,000
 * partitions would otherwise send a megabyte on every refresh and render 10,000 rows).
 */
import type { Admin, ClientOptions } from '../client/index.js';
import { LATEST_TIMESTAMP } from '../client/index.js';
import { firstRecordTimestamps } from '../client/offset-history/partition-reader.js';
import { tpKey } from '../common/partition-keys.js';
import { notFound } from './console-error.js';
import type { Page } from './topics-view.js';

/** Lag in time is looked up for at most this many lagging partitions, within this time. */
const MAX_LAG_TIME_PARTITIONS = 100;
const LAG_TIME_WAIT_MS = 2000;

export async function listGroups(admin: Admin) {
  const groups = await admin.listGroups();
  return groups
    .map((g) => ({ groupId: g.groupId, state: g.state, type: g.type ?? '', protocolType: g.protocolType }))
    .sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
}

export interface GroupPartitionRow {
  topic: string;
  partition: number;
  /** null: nothing committed. */
  committed: string | null;
  latest: string | null;
  lag: string | null;
  /** Age (ms) of the first record at or after the committed offset; null at the log end or where none was read. */
  lagTimeMs: number | null;
  /** The member the partition is assigned to, if any. */
  memberId: string | null;
  clientId: string | null;
}

export async function describeGroup(admin: Admin, groupId: string, client: ClientOptions | undefined, page: Page) {
  const [g] = await admin.describeConsumerGroups([groupId]);
  const committed = await admin.listGroupOffsets(groupId);
  if (!g || ((g.state === 'Dead' || g.errorCode !== 0) && committed.size === 0)) throw notFound(`group ${groupId} does not exist`);
  const owner = new Map<string, { memberId: string; clientId: string }>();
  for (const m of g.members) for (const tp of m.assignment) owner.set(`${tp.topic}\0${tp.partition}`, { memberId: m.memberId, clientId: m.clientId });
  const keys = new Set<string>([...owner.keys()]);
  for (const [topic, parts] of committed) for (const p of parts.keys()) keys.add(`${topic}\0${p}`);
  const tps = [...keys]
    .map((k) => {
      const [topic, p] = k.split('\0');
      return { topic: topic!, partition: Number(p) };
    })
    .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  const latest = tps.length > 0 ? await admin.listOffsets(tps.map((tp) => ({ ...tp, timestamp: LATEST_TIMESTAMP }))).catch(() => []) : [];
  const all: GroupPartitionRow[] = tps.map((tp, i) => {
    const c = committed.get(tp.topic)?.get(tp.partition)?.offset;
    const end = latest[i]?.offset;
    const has = c !== undefined && c >= 0n;
    const o = owner.get(`${tp.topic}\0${tp.partition}`);
    return {
      ...tp,
      committed: has ? String(c) : null,
      latest: end !== undefined ? String(end) : null,
      lag: has && end !== undefined ? String(end > c ? end - c : 0n) : null,
      lagTimeMs: null,
      memberId: o?.memberId ?? null,
      clientId: o?.clientId ?? null,
    };
  });
  const partitions = all.slice(page.page * page.size, (page.page + 1) * page.size);
  if (client) await addLagTimes(admin, client, partitions);
  return {
    groupId,
    state: g.state,
    type: g.type ?? 'Classic',
    protocolType: g.protocolType,
    protocol: g.protocol,
    coordinator: g.coordinator,
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      assignment: m.assignment,
    })),
    partitionCount: all.length,
    page: page.page,
    size: page.size,
    partitions,
    totalLag: String(all.reduce((sum, p) => sum + (p.lag !== null ? BigInt(p.lag) : 0n), 0n)),
  };
}

/** Each lagging partition's lag in time: now minus the timestamp of the record at its committed offset. */
async function addLagTimes(admin: Admin, client: ClientOptions, rows: GroupPartitionRow[]): Promise<void> {
  const lagging = rows.filter((r) => r.lag !== null && r.lag !== '0').slice(0, MAX_LAG_TIME_PARTITIONS);
  if (lagging.length === 0) return;
  // Below the log start the record is gone: no age to give.
  const starts = await admin.listOffsets(lagging.map((r) => ({ topic: r.topic, partition: r.partition, timestamp: -2n }))).catch(() => null);
  const targets = lagging
    .filter((r, i) => starts !== null && starts[i] !== undefined && BigInt(r.committed!) >= starts[i]!.offset)
    .map((r) => ({ topic: r.topic, partition: r.partition, offset: BigInt(r.committed!), end: BigInt(r.latest!) }));
  const found = await firstRecordTimestamps(client, targets, LAG_TIME_WAIT_MS);
  const now = Date.now();
  for (const r of lagging) {
    const ts = found.get(tpKey(r.topic, r.partition));
    if (ts !== undefined) r.lagTimeMs = Math.max(0, now - Number(ts));
  }
}
