/**
 * PartitionShards.logManagerStats (issue 26): each shard's flush histogram and log directories
 * as plain data, for the broker-wide log metrics (log-metrics.ts sums them at scrape time). At
 * num.io.threads=1 one entry, this thread's LogManager; at 3, one per shard, and the flushes of a
 * user topic's partitions are counted on the workers that own them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { batchOf, createTopic } from '../../server/handlers/data-plane-helpers.js';
import { shardsOf } from '../../../src/server/broker-services.js';
import type { PartitionShards } from '../../../src/replication/shards/partition-shards.js';

const ACKS_ALL = { requiredAcks: -1, origin: 'client', produceVersion: 9, timeoutMs: 5000 } as const;
const PARTITIONS = [0, 1, 2, 3];

for (const threads of [1, 3]) {
  let b: TestBroker;
  let shards: PartitionShards;
  before(async () => {
    b = await startTestBroker({ 'num.io.threads': String(threads) });
    shards = shardsOf(b.broker.services);
    // flush.messages=1: every append syncs its log, so each one is a flush the stats count.
    await createTopic(b, 'fl', PARTITIONS.length, { 'flush.messages': '1' });
  });
  after(() => b.stop());

  test(`at ${threads} thread(s): one entry per shard, each with the broker's log directory online`, async () => {
    const stats = await shards.logManagerStats();
    assert.equal(stats.length, threads);
    for (const s of stats) assert.deepEqual(s.dirs, [{ dir: b.dir, online: true }]);
  });

  test(`at ${threads} thread(s): the flushes of each partition counted on the shard that owns it`, async () => {
    const before = (await shards.logManagerStats()).map((s) => s.flush.count);
    const produced = await shards.produce(
      PARTITIONS.map((partition) => ({ topic: 'fl', partition, records: batchOf([`v${partition}`]) })),
      ACKS_ALL,
    );
    assert.deepEqual(
      produced.map((o) => o.errorCode),
      PARTITIONS.map(() => 0),
    );
    const after = await shards.logManagerStats();
    const owners = new Set(PARTITIONS.map((p) => shards.shardOf('fl', p)));
    if (threads > 1) assert.ok(!owners.has(0), 'a user topic lives on the workers');
    for (const shard of owners) assert.ok(after[shard]!.flush.count > before[shard]!, `shard ${shard} counted its flushes`);
    const total = (counts: number[]): number => counts.reduce((x, y) => x + y, 0);
    assert.ok(total(after.map((s) => s.flush.count)) >= total(before) + PARTITIONS.length, 'one flush per append at least');
    for (const s of after) {
      const inBuckets = s.flush.buckets.reduce((x, y) => x + y, 0);
      assert.equal(inBuckets, s.flush.count, 'every flush is in a bucket');
      if (s.flush.count > 0) assert.ok(s.flush.sumMs > 0);
    }
  });
}
