/**
 * A member of a KIP-848 group on @platformatic/kafka 2.12 (`groupProtocol: 'consumer'`), in its
 * own process so that the chaos harness (chaos.ts) can kill it -9. Arguments: bootstrap, group
 * id, topic. Writes the same JSON lines as fjord-member.ts: `own` (its partitions, each time
 * they change, timed on CLOCK_MONOTONIC) and `rec` (records consumed, before their commit).
 *
 * The client has no rebalance listener: its public `assignments` field, which it sets when it
 * applies an assignment (before the heartbeat acknowledging it) and empties when fenced, is
 * turned into an accessor that reports each change as it is made.
 */
import '../promise-with-resolvers.js';
import { hrtime } from 'node:process';
import { Consumer, stringDeserializers } from '@platformatic/kafka';

type Assignments = { topic: string; partitions: number[] }[] | null;

const [bootstrap, groupId, topic] = process.argv.slice(2) as [string, string, string];
const consumer = new Consumer({
  groupId,
  clientId: `chaos-platformatic-${process.pid}`,
  bootstrapBrokers: [bootstrap],
  deserializers: stringDeserializers,
  maxWaitTime: 100,
  groupProtocol: 'consumer',
});

/** Per partition, the offset to commit next (see flush below). */
const pending = new Map<number, { offset: bigint; leaderEpoch: number }>();
/** Per partition owned, the highest offset to commit so far in this ownership (see 'data'). */
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
    const now = owned.join(',');
    if (now === reported) return;
    reported = now;
    process.stdout.write(`${JSON.stringify({ e: 'own', ts: String(hrtime.bigint()), p: owned })}\n`);
  },
});

const owns = (partition: number) => assignments?.some((a) => a.topic === topic && a.partitions.includes(partition)) ?? false;

// Commits are made here, not with the record's commit(): the stream queues those and, after a
// refused one (STALE_MEMBER_EPOCH while an epoch changes), retries them with a later flush, even
// once the partition has moved to another member that committed further: the offset would go
// back. Here a commit carries only partitions owned when it is sent, one at a time; a refused one
// is dropped (the next record's commit covers it, or the next owner consumes the record again).
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

const stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: false });
process.stdout.write(`${JSON.stringify({ e: 'ready' })}\n`);
// Each record is handled as the stream pushes it ('data', not `for await`): no backlog builds up
// in the stream's buffer, to be handled (and committed) after the partition has moved.
stream.on('data', (m) => {
  // A record of a partition no longer assigned here (fetched before the revocation) is left to
  // its new owner, as Java's consumer drops it: neither processed nor committed.
  if (!owns(m.partition)) return;
  process.stdout.write(`${JSON.stringify({ e: 'rec', r: [[m.partition, String(m.offset), m.value]] })}\n`);
  // @platformatic/kafka 2.12.1, given a new partition, seeks every partition it owns back to its
  // committed offset and delivers again what it had delivered since: committing those would move
  // the offset back. Only an offset past the highest of this ownership is committed.
  const next = m.offset + 1n;
  if (next <= (highest.get(m.partition) ?? -1n)) return;
  highest.set(m.partition, next);
  pending.set(m.partition, { offset: next, leaderEpoch: m.leaderEpoch ?? -1 });
  flush();
});
stream.on('error', (err: Error) => {
  process.stderr.write(`stream failed: ${err.message}\n`);
  process.exit(1);
});
