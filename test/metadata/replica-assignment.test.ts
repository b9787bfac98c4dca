/**
 * Kafka's replica assignment: the examples Kafka documents for AdminUtils, its errors, partition
 * addition, and properties over random clusters (no broker twice in a partition, leaders spread
 * evenly, one replica per rack while racks last).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { assignAddedPartitions, assignReplicas, rackAlternatedList, type AssignableBroker } from '../../src/metadata/replica-assignment.js';
import { KafkaError } from '../../src/protocol/errors.js';

const brokers = (n: number, rack?: (i: number) => string): AssignableBroker[] => Array.from({ length: n }, (_, i) => ({ id: i, rack: rack ? rack(i) : null }));
const asObject = (m: Map<number, number[]>): Record<number, number[]> => Object.fromEntries(m);

test("Kafka's documented example: 5 brokers, 10 partitions, replication factor 3, start index 0", () => {
  assert.deepEqual(asObject(assignReplicas(brokers(5), 10, 3, { fixedStartIndex: 0 })), {
    0: [0, 1, 2],
    1: [1, 2, 3],
    2: [2, 3, 4],
    3: [3, 4, 0],
    4: [4, 0, 1],
    // after a full round the followers shift by one more
    5: [0, 2, 3],
    6: [1, 3, 4],
    7: [2, 4, 0],
    8: [3, 0, 1],
    9: [4, 1, 2],
  });
});

test("Kafka's documented rack-aware example: the rack-alternated list 0,3,1,5,4,2", () => {
  const racks: Record<number, string> = { 0: 'rack1', 1: 'rack3', 2: 'rack3', 3: 'rack2', 4: 'rack2', 5: 'rack1' };
  const bs = brokers(6, (i) => racks[i]!);
  assert.deepEqual(rackAlternatedList(bs), [0, 3, 1, 5, 4, 2]);
  assert.deepEqual(asObject(assignReplicas(bs, 7, 3, { fixedStartIndex: 0 })), {
    0: [0, 3, 1],
    1: [3, 1, 5],
    2: [1, 5, 4],
    3: [5, 4, 2],
    4: [4, 2, 0],
    5: [2, 0, 3],
    6: [0, 4, 2], // not 0,3,1 again: the followers shift after the first round
  });
});

test('the random start comes from the injected source; broker order given does not matter', () => {
  const r = assignReplicas(
    [
      { id: 7, rack: null },
      { id: 3, rack: null },
      { id: 5, rack: null },
    ],
    3,
    2,
    { random: () => 0.5 },
  );
  // index floor(0.5*3) = 1 of [3,5,7] leads partition 0; followers shift by 1 + (1 + 0) % 2.
  assert.deepEqual(asObject(r), { 0: [5, 3], 1: [7, 5], 2: [3, 7] });
  assert.deepEqual(asObject(assignReplicas(brokers(3), 2, 1, { random: () => 0.999999 })), { 0: [2], 1: [0] });
});

test("Kafka's errors: partitions and replication factor below 1, more replicas than brokers, racks on some brokers only", () => {
  const code = (c: number, msg: RegExp) => (err: unknown) => err instanceof KafkaError && err.code === c && msg.test(err.message);
  assert.throws(() => assignReplicas(brokers(3), 0, 1), code(37, /^Number of partitions must be larger than 0\.$/));
  assert.throws(() => assignReplicas(brokers(3), 1, 0), code(38, /^Replication factor must be larger than 0\.$/));
  assert.throws(() => assignReplicas([], 2, 2), code(38, /^Replication factor: 2 larger than available brokers: 0\.$/));
  const mixed = [
    { id: 0, rack: 'a' },
    { id: 1, rack: null },
  ];
  assert.throws(() => assignReplicas(mixed, 1, 1), code(38, /Not all brokers have rack information/));
  assert.equal(assignReplicas(mixed, 4, 2, { rackAware: 'safe', fixedStartIndex: 0 }).get(0)!.length, 2);
  // disabled ignores racks: the plain round robin
  assert.deepEqual(
    asObject(
      assignReplicas(
        brokers(3, () => 'r'),
        3,
        2,
        { rackAware: 'disabled', fixedStartIndex: 0 },
      ),
    ),
    asObject(assignReplicas(brokers(3), 3, 2, { fixedStartIndex: 0 })),
  );
});

test("added partitions continue the existing pattern from partition 0's leader", () => {
  const existing = assignReplicas(brokers(5), 3, 3, { fixedStartIndex: 2 });
  assert.deepEqual(existing.get(0)![0], 2);
  const added = assignAddedPartitions(brokers(5), existing, 6, 't');
  assert.deepEqual([...added.keys()], [3, 4, 5]);
  // the same as assigning 6 partitions from the same start in one go
  const whole = assignReplicas(brokers(5), 6, 3, { fixedStartIndex: 2 });
  for (const p of [3, 4, 5]) assert.deepEqual(added.get(p), whole.get(p));
  assert.throws(
    () => assignAddedPartitions(brokers(5), existing, 3, 't'),
    (e: unknown) => e instanceof KafkaError && e.code === 37 && /Topic t currently has 3 partitions, 3 would not be an increase/.test(e.message),
  );
  // partition 0's leader (3) left: its slot is the next id (4, index 1), so partition 1 leads on index 2 % 2 = broker 0
  assert.equal(
    assignAddedPartitions(
      [
        { id: 0, rack: null },
        { id: 4, rack: null },
      ],
      new Map([[0, [3]]]),
      2,
    ).get(1)![0],
    0,
  );
  assert.equal(
    assignAddedPartitions(
      [
        { id: 0, rack: null },
        { id: 4, rack: null },
        { id: 9, rack: null },
      ],
      new Map([[0, [3]]]),
      2,
    ).get(1)![0],
    9,
  );
});

const cluster = fc
  .record({
    n: fc.integer({ min: 1, max: 12 }),
    racks: fc.integer({ min: 0, max: 4 }),
    partitions: fc.integer({ min: 1, max: 60 }),
    rfSeed: fc.nat(),
    seed: fc.double({ min: 0, max: 0.999, noNaN: true }),
    shuffle: fc.nat(),
  })
  .map(({ n, racks, partitions, rfSeed, seed, shuffle }) => ({
    bs: brokers(n, racks === 0 ? undefined : (i) => `rack${(i * 7 + shuffle) % racks}`).map((b) => ({ ...b, id: b.id * 3 + 1 })),
    partitions,
    rf: 1 + (rfSeed % n),
    seed,
  }));

test('property: every partition has rf distinct live brokers; leaders differ by at most one per broker', () => {
  fc.assert(
    fc.property(cluster, ({ bs, partitions, rf, seed }) => {
      const a = assignReplicas(bs, partitions, rf, { random: () => seed });
      const ids = new Set(bs.map((b) => b.id));
      assert.deepEqual(
        [...a.keys()],
        Array.from({ length: partitions }, (_, i) => i),
      );
      const leaders = new Map<number, number>();
      for (const replicas of a.values()) {
        assert.equal(replicas.length, rf);
        assert.equal(new Set(replicas).size, rf, `duplicate replica in ${replicas}`);
        for (const r of replicas) assert.ok(ids.has(r));
        leaders.set(replicas[0]!, (leaders.get(replicas[0]!) ?? 0) + 1);
      }
      const counts = bs.map((b) => leaders.get(b.id) ?? 0);
      assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `leader counts ${counts}`);
    }),
    { numRuns: 300 },
  );
});

test("property: rack-aware assignment puts a partition's replicas on min(rf, racks) distinct racks", () => {
  fc.assert(
    fc.property(cluster, ({ bs, partitions, rf, seed }) => {
      if (bs[0]!.rack === null) return;
      const rackOf = new Map(bs.map((b) => [b.id, b.rack]));
      const numRacks = new Set(rackOf.values()).size;
      for (const replicas of assignReplicas(bs, partitions, rf, { random: () => seed }).values()) {
        assert.equal(new Set(replicas.map((r) => rackOf.get(r))).size, Math.min(rf, numRacks), `replicas ${replicas}`);
      }
    }),
    { numRuns: 300 },
  );
});
