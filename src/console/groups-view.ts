/**
 * The consumer groups pages: the list (ListGroups on every broker), and one group: state,
 * protocol, members with their assignments, and per partition the committed offset, the
 * partition's latest offset and the lag in records between them.
 */
import type { Admin } from '../client/index.js';
import { LATEST_TIMESTAMP } from '../client/index.js';
import { notFound } from './console-error.js';

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
  /** The member the partition is assigned to, if any. */
  memberId: string | null;
  clientId: string | null;
}

export async function describeGroup(admin: Admin, groupId: string) {
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
  const partitions: GroupPartitionRow[] = tps.map((tp, i) => {
    const c = committed.get(tp.topic)?.get(tp.partition)?.offset;
    const end = latest[i]?.offset;
    const has = c !== undefined && c >= 0n;
    const o = owner.get(`${tp.topic}\0${tp.partition}`);
    return {
      ...tp,
      committed: has ? String(c) : null,
      latest: end !== undefined ? String(end) : null,
      lag: has && end !== undefined ? String(end > c ? end - c : 0n) : null,
      memberId: o?.memberId ?? null,
      clientId: o?.clientId ?? null,
    };
  });
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
    partitions,
    totalLag: String(partitions.reduce((sum, p) => sum + (p.lag !== null ? BigInt(p.lag) : 0n), 0n)),
  };
}
