/**
 * One LogManager option set (replication/shards/log-manager-options.ts): the broker's log
 * settings reach the in-thread broker and every shard alike, and what a worker gets survives the
 * structured clone of its ShardInit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildBrokerConfig } from '../../../src/server/config/index.js';
import { logManagerOptions, logManagerSettings, openFilesPerShard } from '../../../src/replication/shards/log-manager-options.js';
import { defaultOpenFileBudget } from '../../../src/storage/segment/segment-file.js';

const cfg = buildBrokerConfig(
  new Map([
    ['broker.id', '1'],
    ['log.dirs', '/tmp/fjord-options-unused'],
    ['log.flush.offset.checkpoint.interval.ms', '7000'],
    ['log.retention.check.interval.ms', '8000'],
    ['log.flush.scheduler.interval.ms', '500'],
    ['log.cleaner.enable', 'false'],
    ['log.cleaner.backoff.ms', '900'],
    ['log.segment.max.open.files', '1000'],
    ['log.cleaner.threads', '2'],
  ]),
);

test('every broker log setting reaches the options; a shard gets its share of the open segment files', () => {
  const one = logManagerSettings(cfg);
  assert.deepEqual(one, {
    checkpointIntervalMs: 7000,
    retentionCheckIntervalMs: 8000,
    flushCheckIntervalMs: 500,
    cleanerEnabled: false,
    cleanerBackoffMs: 900,
    maxOpenSegmentFiles: 1000,
  });
  const options = logManagerOptions(cfg, one, { topicConfig: () => undefined });
  assert.equal(options.cleanerSlots, undefined, 'one thread: no cap shared with anyone');
  assert.equal(options.highWatermarkSetByOwner, true);
  assert.deepEqual(options.logDirs, ['/tmp/fjord-options-unused']);
  for (const key of Object.keys(one)) assert.equal(options[key as keyof typeof options], one[key as keyof typeof one], key);

  const shard = logManagerSettings(cfg, 3);
  assert.equal(shard.maxOpenSegmentFiles, 333);
  assert.equal(shard.cleanerSlots?.limit, 2, 'log.cleaner.threads caps the shards cleaning at once');
  const crossed = structuredClone(shard);
  assert.deepEqual({ ...crossed, cleanerSlots: undefined }, { ...shard, cleanerSlots: undefined });
  assert.ok(crossed.cleanerSlots!.cells instanceof SharedArrayBuffer, 'the slots cross as shared memory');

  // Two shards' options over the same settings share one count: a slot taken by one is gone for the other.
  const a = logManagerOptions(cfg, shard, { shardIndex: 1 }).cleanerSlots!;
  const b = logManagerOptions(cfg, crossed, { shardIndex: 2 }).cleanerSlots!;
  const c = logManagerOptions(cfg, shard, { shardIndex: 0 }).cleanerSlots!;
  assert.equal(a.tryTake(), true);
  assert.equal(b.tryTake(), true);
  assert.equal(c.tryTake(), false);
  b.give();
  assert.equal(c.tryTake(), true);
});

test("Kafka's default log.flush.scheduler.interval.ms (Long.MAX) is checked once a second; log.segment.max.open.files -1: the derived budget split over the shards", () => {
  const config = buildBrokerConfig(new Map([['log.dirs', '/tmp/fjord-options-unused']]));
  const defaults = logManagerSettings(config, 4);
  assert.equal(defaults.flushCheckIntervalMs, 1000);
  // Every shard's segment-file cache is its own: four times half the descriptor limit would be twice it.
  assert.equal(defaults.maxOpenSegmentFiles, Math.floor(defaultOpenFileBudget() / 4));
  assert.equal(defaults.cleanerSlots?.limit, 1);
  // One thread: 0, storage derives the budget itself (as before shards).
  assert.equal(logManagerSettings(config, 1).maxOpenSegmentFiles, 0);
  assert.equal(openFilesPerShard(-1, 1), 0);
  assert.equal(openFilesPerShard(10, 1), 10);
  assert.equal(openFilesPerShard(10, 20), 1);
});
