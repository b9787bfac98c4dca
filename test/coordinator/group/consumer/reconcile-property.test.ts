/**
 * A property over random sequences of joins, heartbeats, leaves, subscription changes and
 * time passing (session timeouts), with clients that act on what the coordinator tells them:
 * a partition is never held by two members, a live client never owns more than the
 * coordinator thinks it holds, the group converges to every partition owned once when the
 * members keep heartbeating, and a shard reloaded from the records holds the same group.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UniformAssignor } from '../../../../src/coordinator/group/assignors/index.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { assertReplayable, consumerHarness, roundRobin, type ConsumerHarness } from './harness.js';

interface Client {
  id: string;
  joined: boolean;
  epoch: number;
  topics: string[];
  owned: Map<string, number[]>;
  /** The last assignment received: partitions owned but not in it are still being revoked (until the next heartbeat). */
  next: Map<string, number[]> | null;
}

type Action =
  | { kind: 'join'; client: number; topics: string[] }
  | { kind: 'beat'; client: number }
  | { kind: 'leave'; client: number }
  | { kind: 'resubscribe'; client: number; topics: string[] }
  | { kind: 'wait'; ms: number };

const topicsArb = fc.subarray(['t', 'u'], { minLength: 1 });
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('join' as const), client: fc.nat(4), topics: topicsArb }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('beat' as const), client: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('leave' as const), client: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resubscribe' as const), client: fc.nat(4), topics: topicsArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 100, max: 12_000 }) }) },
);

function heartbeat(h: ConsumerHarness, c: Client, topics: string[] | null = null): void {
  const joining = !c.joined;
  // Partitions taken away by the last response are revoked (committed, let go) before this heartbeat.
  if (c.next) c.owned = c.next;
  c.next = null;
  const res = h.heartbeat({
    memberId: c.id,
    memberEpoch: joining ? 0 : c.epoch,
    rebalanceTimeoutMs: joining ? 60_000 : -1,
    subscribedTopicNames: joining ? c.topics : topics,
    topicPartitions: joining ? [] : [...c.owned].map(([topicId, partitions]) => ({ topicId, partitions })),
  });
  if (res.errorCode === ErrorCode.FENCED_MEMBER_EPOCH || res.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) {
    // As a client does: give up every partition and rejoin on the next heartbeat.
    c.joined = false;
    c.owned = new Map();
    c.next = null;
    return;
  }
  assert.equal(res.errorCode, ErrorCode.NONE, res.errorMessage ?? '');
  c.joined = true;
  c.epoch = res.memberEpoch;
  if (res.assignment) {
    // New partitions are owned at once; the ones taken away only once revoked (next heartbeat).
    c.next = new Map(res.assignment.topicPartitions.map((t) => [t.topicId, t.partitions]));
    for (const [t, ps] of c.next) c.owned.set(t, [...new Set([...(c.owned.get(t) ?? []), ...ps])]);
  }
}

function checkInvariants(h: ConsumerHarness, clients: Client[]): void {
  const g = h.shard.consumerGroups.get('g');
  if (!g) return;
  const holder = new Map<string, string>();
  for (const m of g.members.values()) {
    for (const a of [m.assigned, m.pendingRevocation]) {
      for (const [t, ps] of a) {
        for (const p of ps) {
          const key = `${t}-${p}`;
          assert.equal(holder.get(key), undefined, `${key} held by ${holder.get(key)} and ${m.memberId}`);
          holder.set(key, m.memberId);
        }
      }
    }
  }
  for (const c of clients) {
    if (!c.joined || !g.members.has(c.id)) continue; // a fenced client learns it on its next heartbeat
    for (const [t, ps] of c.owned)
      for (const p of ps) assert.equal(holder.get(`${t}-${p}`), c.id, `client ${c.id} owns ${t}-${p} the coordinator gave elsewhere`);
  }
}

for (const assignor of [new UniformAssignor(), roundRobin]) {
  test(`random membership churn (${assignor.name} assignor): never two owners, convergence, replayable`, () => {
    fc.assert(
      fc.property(fc.array(actionArb, { minLength: 1, maxLength: 60 }), (actions) => {
        const h = consumerHarness({ sessionTimeoutMs: 10_000, assignors: [assignor] });
        h.topics.add('t', 6);
        h.topics.add('u', 3);
        const clients: Client[] = Array.from({ length: 5 }, (_, i) => ({ id: `m${i}`, joined: false, epoch: 0, topics: ['t'], owned: new Map(), next: null }));
        const present = new Set<number>();
        for (const a of actions) {
          if (a.kind === 'wait') h.advance(a.ms);
          else if (a.kind === 'join' && !present.has(a.client)) {
            clients[a.client]!.topics = a.topics;
            present.add(a.client);
            heartbeat(h, clients[a.client]!);
          } else if (!present.has(a.client)) continue;
          else if (a.kind === 'beat') heartbeat(h, clients[a.client]!);
          else if (a.kind === 'resubscribe' || a.kind === 'join') {
            const c = clients[a.client]!;
            c.topics = a.topics;
            if (c.joined) heartbeat(h, c, a.topics);
          } else {
            const c = clients[a.client]!;
            if (c.joined) h.heartbeat({ memberId: c.id, memberEpoch: -1 });
            c.joined = false;
            c.owned = new Map();
            c.next = null;
            present.delete(a.client);
          }
          checkInvariants(h, clients);
        }
        // Members that keep heartbeating (within their session) converge.
        for (let round = 0; round < 9; round++) {
          for (const i of present) heartbeat(h, clients[i]!);
          checkInvariants(h, clients);
        }
        const g = h.shard.consumerGroups.get('g');
        if (g && present.size > 0) {
          assert.equal(g.state, 'Stable');
          const subscribed = new Set([...present].flatMap((i) => clients[i]!.topics));
          const owned = [...present].flatMap((i) => [...clients[i]!.owned].flatMap(([t, ps]) => ps.map((p) => `${t}-${p}`)));
          const expected = [...subscribed].flatMap((n) => {
            const t = h.topics.byName(n)!;
            return Array.from({ length: t.partitionCount }, (_, p) => `${t.topicId}-${p}`);
          });
          assert.deepEqual(owned.sort(), expected.sort());
        }
        assertReplayable(h);
      }),
      { numRuns: 150 },
    );
  });
}
