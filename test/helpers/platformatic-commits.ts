/**
 * Commits for a @platformatic/kafka 2.12.1 member of a KIP-848 group (`groupProtocol: 'consumer'`)
 * in the interop tests, made so that they never move a committed offset back: the tests check
 * that the BROKER never lets one go back, and the client, left to itself, asks it to.
 *
 * - Given a new partition, the client seeks every partition it already owns back to its
 *   committed offset and delivers again what it had delivered since: the commits of those
 *   records would move the offset back. Only an offset past the highest one committed (or being
 *   committed) during the partition's current ownership is committed.
 * - A record's own `commit()` is queued by the stream and, once refused (STALE_MEMBER_EPOCH
 *   while an epoch changes), retried by a later flush, even after the partition has moved to a
 *   member that committed further. Here a commit carries only the partitions owned when it is
 *   sent, one commit at a time; a refused one is dropped (the next record's commit covers it, or
 *   the next owner consumes the record again: redelivered, never lost).
 *
 * Used by the chaos members (chaos-members/platformatic-member.ts) and the interop tests. The client has no
 * rebalance listener: its public `assignments` field, which it sets when it applies an
 * assignment and empties when fenced, is turned into an accessor that sees each change.
 */
import type { Consumer } from '@platformatic/kafka';

type Assignments = { topic: string; partitions: number[] }[] | null;

export interface ForwardCommits {
  /** Whether the client holds `partition` of the topic now (its own view). */
  owns(partition: number): boolean;
  /** Commits the offset after this record's, unless an offset as far was committed in this ownership. */
  commit(record: { partition: number; offset: bigint; leaderEpoch?: number }): void;
}

/** `onChange` hears the partitions of `topic` the client owns (sorted) each time they change. */
export function forwardCommits(consumer: Consumer<string, string, string, string>, topic: string, onChange?: (owned: number[]) => void): ForwardCommits {
  /** Per partition, the offset to commit next. */
  const pending = new Map<number, { offset: bigint; leaderEpoch: number }>();
  /** Per partition owned, the highest offset committed so far in this ownership. */
  const highest = new Map<number, bigint>();
  let assignments: Assignments = consumer.assignments;
  let reported = '';
  Object.defineProperty(consumer, 'assignments', {
    configurable: true,
    enumerable: true,
    get: () => assignments,
    set: (value: Assignments) => {
      assignments = value;
      const owned = (value ?? [])
        .filter((a) => a.topic === topic)
        .flatMap((a) => a.partitions)
        .sort((a, b) => a - b);
      for (const p of pending.keys()) if (!owned.includes(p)) pending.delete(p);
      for (const p of highest.keys()) if (!owned.includes(p)) highest.delete(p);
      if (owned.join() === reported) return;
      reported = owned.join();
      onChange?.(owned);
    },
  });
  const owns = (partition: number) => assignments?.some((a) => a.topic === topic && a.partitions.includes(partition)) ?? false;

  let committing = false;
  const flush = () => {
    if (committing) return;
    const offsets = [...pending].filter(([p]) => owns(p)).map(([partition, o]) => ({ topic, partition, ...o }));
    pending.clear();
    if (offsets.length === 0) return;
    committing = true;
    consumer
      .commit({ offsets })
      .catch(() => undefined)
      .finally(() => {
        committing = false;
        flush();
      });
  };
  return {
    owns,
    commit(record) {
      const next = record.offset + 1n;
      if (!owns(record.partition) || next <= (highest.get(record.partition) ?? -1n)) return;
      highest.set(record.partition, next);
      pending.set(record.partition, { offset: next, leaderEpoch: record.leaderEpoch ?? -1 });
      flush();
    },
  };
}
