/**
 * Resetting a group's committed offsets from the console (to the earliest or latest offset, to a
 * time, or shifted by N), and undoing the last reset (or going back to a time) from the offset
 * history, as kafka-consumer-groups.sh --reset-offsets and --undo-reset do: every change has a
 * preview (dry run: the plan, nothing written), and executing is refused, with Kafka's message,
 * while the group has members. The undo's plan is the tool's (client/offset-history/undo-plan.ts),
 * read over a bounded history; an executed undo is itself a reset, so it can be undone in turn.
 */
import type { Admin, ClientOptions } from '../client/index.js';
import { readSettledHistory } from '../client/offset-history/history-reader.js';
import { planUndoLastReset, planUndoToTime, type PlannedOffset, type UndoPlan } from '../client/offset-history/undo-plan.js';
import { badRequest, ConsoleError } from './console-error.js';
import { HISTORY_STALL_MS, MAX_HISTORY_RECORDS } from './group-history-view.js';

export type ResetTarget = { to: 'earliest' } | { to: 'latest' } | { to: 'time'; time: bigint } | { to: 'shift'; by: bigint };

export interface ResetRequest {
  target: ResetTarget;
  /** Only this topic's partitions; every partition the group has an offset for when absent. */
  topic?: string;
  execute: boolean;
}

export interface PlanRow {
  topic: string;
  partition: number;
  /** The committed offset now (null: none). */
  current: string | null;
  offset: string;
  /** Why the offset is not the one asked for (clamped to the log), if so. */
  note?: string;
}

/** Kafka's refusal (ConsumerGroupCommand) to change the offsets of a group with members. */
async function requireInactive(admin: Admin, group: string): Promise<void> {
  const [d] = await admin.describeConsumerGroups([group]);
  if (d && d.members.length > 0)
    throw new ConsoleError(409, `Assignments can only be reset if the group '${group}' is inactive, but the current state is ${d.state}.`);
}

async function scope(admin: Admin, group: string, topic: string | undefined): Promise<{ topic: string; partition: number }[]> {
  if (topic) {
    const [t] = await admin.describeTopics([topic]);
    const name = topic;
    return t!.partitions.map((p) => ({ topic: name, partition: p.partition })).sort((a, b) => a.partition - b.partition);
  }
  const committed = await admin.listGroupOffsets(group);
  const out: { topic: string; partition: number }[] = [];
  for (const [t, parts] of committed) for (const p of parts.keys()) out.push({ topic: t, partition: p });
  return out.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
}

async function currentOffsets(admin: Admin, group: string): Promise<(tp: { topic: string; partition: number }) => bigint> {
  const committed = await admin.listGroupOffsets(group);
  return (tp) => committed.get(tp.topic)?.get(tp.partition)?.offset ?? -1n;
}

const shown = (o: bigint): string | null => (o >= 0n ? String(o) : null);

/** The reset's plan (as the tool's: a time past the last record goes to the latest offset, a shift is clamped to the log). */
export async function resetOffsets(admin: Admin, group: string, req: ResetRequest) {
  if (req.execute) await requireInactive(admin, group);
  const tps = await scope(admin, group, req.topic);
  if (tps.length === 0) throw badRequest(`group ${group} has no committed offsets to reset: name a topic`);
  const current = await currentOffsets(admin, group);
  const q = (timestamp: bigint) => admin.listOffsets(tps.map((tp) => ({ ...tp, timestamp })));
  const [earliest, latest] = await Promise.all([q(-2n), q(-1n)]);
  const byTime = req.target.to === 'time' ? await q(req.target.time) : null;
  const rows: PlanRow[] = tps.map((tp, i) => {
    const [lo, hi] = [earliest[i]!.offset, latest[i]!.offset];
    const now = current(tp);
    let offset: bigint;
    let note: string | undefined;
    const t = req.target;
    if (t.to === 'earliest') offset = lo;
    else if (t.to === 'latest') offset = hi;
    else if (t.to === 'time') offset = byTime![i]!.offset >= 0n ? byTime![i]!.offset : hi;
    else {
      // As Kafka: a partition with no committed offset shifts from the latest offset.
      const wanted = (now >= 0n ? now : hi) + t.by;
      offset = wanted < lo ? lo : wanted > hi ? hi : wanted;
      if (offset !== wanted) note = `${wanted} is outside the log (${lo} to ${hi})`;
    }
    return { ...tp, current: shown(now), offset: String(offset), ...(note ? { note } : {}) };
  });
  if (req.execute) await admin.alterGroupOffsets(group, toPlan(rows));
  return { groupId: group, executed: req.execute, rows };
}

/** Back to before the last reset, or (`at`) to the offsets the group had at that time. */
export async function undoReset(admin: Admin, client: ClientOptions, group: string, req: { at?: number; execute: boolean }) {
  if (req.execute) await requireInactive(admin, group);
  // The history is written just after the commit it records: read again while it is behind.
  const { entries, behind } = await readSettledHistory(admin, client, group, HISTORY_STALL_MS, { maxRecords: MAX_HISTORY_RECORDS });
  if (entries.length === 0) throw new ConsoleError(404, `group ${group} has no offset history`);
  const undo: UndoPlan = req.at === undefined ? planUndoLastReset(group, entries) : planUndoToTime(group, entries, req.at);
  const current = await currentOffsets(admin, group);
  const rows: PlanRow[] = undo.plan.map((p) => ({ topic: p.topic, partition: p.partition, current: shown(current(p)), offset: String(p.offset) }));
  if (req.execute && rows.length > 0) await admin.alterGroupOffsets(group, toPlan(rows));
  return {
    groupId: group,
    executed: req.execute && rows.length > 0,
    rows,
    skipped: undo.skipped.map((s) => `${s.topic}-${s.partition}: ${s.why}; left as it is`),
    warnings: behind.map((line) => `the offset history is behind the group's offsets: ${line}`),
  };
}

function toPlan(rows: readonly PlanRow[]): PlannedOffset[] {
  return rows.map((r) => ({ topic: r.topic, partition: r.partition, offset: BigInt(r.offset) }));
}
