import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoordinatorRuntime } from '../../../src/coordinator/runtime/runtime.js';
import { GroupShard } from '../../../src/coordinator/group/group-shard.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from '../../../src/coordinator/group/records.js';
import { removeOffsetsOfDeletedPartitions, type PartitionCount } from '../../../src/coordinator/group/deleted-partitions.js';
import { commitOffsets, fetchOffsets } from '../../../src/coordinator/group/offsets.js';
import { MemoryLog } from '../memory-log.js';
import { TEST_CONFIG } from './harness.js';

function runtimeOver(log: MemoryLog, counts: Map<string, number>) {
  const partitionCount: PartitionCount = (t) => counts.get(t);
  return new CoordinatorRuntime<GroupShard, CoordinatorRecord>({
    log,
    serde: { encode: encodeRecord, decode: decodeRecord },
    newShard: (ctx) => new GroupShard(ctx, TEST_CONFIG),
    clock: () => 1_000_000,
    afterLoad: (s) => ({ records: removeOffsetsOfDeletedPartitions(s, partitionCount).records, response: undefined }),
  });
}

const commitTo = (group: string, topic: string, partitions: number[]) => ({
  groupId: group,
  generationId: -1,
  memberId: '',
  groupInstanceId: null,
  retentionTimeMs: -1n,
  apiVersion: 9,
  topics: [
    {
      name: topic,
      partitions: partitions.map((p) => ({ partitionIndex: p, committedOffset: 10n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' })),
    },
  ],
});

test("loading drops offsets of topics that are gone and of partitions beyond a topic's count, with durable tombstones", async () => {
  const log = new MemoryLog();
  const counts = new Map([
    ['a', 3],
    ['b', 1],
  ]);
  const first = runtimeOver(log, counts);
  await first.load(0);
  await first.write(0, (s, now) => commitOffsets(s, commitTo('g', 'a', [0, 1, 2]), now));
  await first.write(0, (s, now) => commitOffsets(s, commitTo('g', 'b', [0]), now));
  await first.write(0, (s, now) => commitOffsets(s, commitTo('only-b', 'b', [0]), now));
  first.close();

  // While the partition was not loaded: b was deleted, a lost partitions 1 and 2.
  counts.delete('b');
  counts.set('a', 1);
  const second = runtimeOver(log, counts);
  await second.load(0);
  const left = await second.read(0, (s) => ({ g: fetchOffsets(s, 'g', null), groups: [...s.groups.keys()].sort() }));
  assert.deepEqual(
    left.g.map((t) => [t.name, t.partitions.map((p) => p.partitionIndex)]),
    [['a', [0]]],
  );
  assert.deepEqual(left.groups, ['g'], 'a group left with nothing is removed');
  second.close();

  // The tombstones were appended: a third load finds the same state without repairing anything.
  const appended = (log.partitions.get(0) ?? []).map((r) => decodeRecord(r.key, r.value)!);
  const tombstones = appended.filter((r) => r.value === null).map((r) => (r.type === 'offset' ? `${r.group}/${r.topic}-${r.partition}` : `group ${r.group}`));
  assert.deepEqual(tombstones.sort(), ['g/a-1', 'g/a-2', 'g/b-0', 'group only-b', 'only-b/b-0']);
  counts.set('b', 1); // even if the topic came back: the old offsets stay gone
  const third = runtimeOver(log, counts);
  await third.load(0);
  assert.deepEqual(await third.read(0, (s) => fetchOffsets(s, 'only-b', null)), []);
  third.close();
});
