/**
 * Undoing a reset from a group's offset history (issue 25), for kafka-consumer-groups.sh
 * --undo-reset and the console: the offsets the group had before its last reset (one reset = the
 * `reset` records of one commit request: the newest run of them with one timestamp), or at a
 * given time. The undo is executed as a reset, so the history records it as one and it can be
 * undone in turn.
 */
import { OffsetHistoryError, type HistoryEntry } from './history-reader.js';

/** A partition's new committed offset. */
export interface PlannedOffset {
  topic: string;
  partition: number;
  offset: bigint;
}

export interface UndoPlan {
  plan: PlannedOffset[];
  /** Partitions that had no committed offset to go back to (left as they are), and why. */
  skipped: { topic: string; partition: number; why: string }[];
}

const byPartition = (a: PlannedOffset, b: PlannedOffset): number => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1);

function partitionsWithout(list: readonly { topic: string; partition: number }[], why: string): UndoPlan['skipped'] {
  return list.map((tp) => ({ topic: tp.topic, partition: tp.partition, why }));
}

/** The warning for a partition the undo leaves alone. */
export function skippedText(s: UndoPlan['skipped'][number]): string {
  return `${s.topic}-${s.partition}: ${s.why}; left as it is (remove it with --delete-offsets)`;
}

/** Back to before the newest reset: each partition it moved gets its previous offset. */
export function planUndoLastReset(group: string, entries: readonly HistoryEntry[]): UndoPlan {
  let last = entries.length - 1;
  while (last >= 0 && entries[last]!.cause !== 'reset') last--;
  if (last < 0) throw new OffsetHistoryError(`the offset history of group '${group}' has no reset to undo`);
  const at = entries[last]!.timestamp;
  let first = last;
  while (first > 0 && entries[first - 1]!.cause === 'reset' && entries[first - 1]!.timestamp === at) first--;
  const plan: PlannedOffset[] = [];
  const none: HistoryEntry[] = [];
  for (const e of entries.slice(first, last + 1)) {
    if (e.previousOffset >= 0n) plan.push({ topic: e.topic, partition: e.partition, offset: e.previousOffset });
    else none.push(e);
  }
  return { plan: plan.sort(byPartition), skipped: partitionsWithout(none, 'had no committed offset before the reset') };
}

/**
 * Back to the offsets the group had at `at`: for each partition in the history, the new offset
 * of its newest change at or before `at`, else (its history starts later) the previous offset of
 * its first change after. Alive records change nothing and are passed over.
 */
export function planUndoToTime(group: string, entries: readonly HistoryEntry[], at: number): UndoPlan {
  const state = new Map<string, { topic: string; partition: number; offset: bigint }>();
  for (const e of entries) {
    if (e.cause === 'alive') continue;
    const key = `${e.topic}\u0000${e.partition}`;
    if (e.timestamp <= at) state.set(key, { topic: e.topic, partition: e.partition, offset: e.newOffset });
    else if (!state.has(key)) state.set(key, { topic: e.topic, partition: e.partition, offset: e.previousOffset });
  }
  if (state.size === 0) throw new OffsetHistoryError(`the offset history of group '${group}' has no committed offsets to go back to`);
  const all = [...state.values()];
  return {
    plan: all.filter((p) => p.offset >= 0n).sort(byPartition),
    skipped: partitionsWithout(
      all.filter((p) => p.offset < 0n),
      `had no committed offset at ${new Date(at).toISOString()}`,
    ),
  };
}
