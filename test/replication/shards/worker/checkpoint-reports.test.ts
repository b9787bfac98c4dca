/**
 * A worker's checkpoint reports (docs/threads.md "Step 1, wired"): deleting a topic of many
 * partitions on workers sends the main thread a few reports, not one per deleted log (each
 * report holds every entry of the directory, and the main thread deserialises them all: 600
 * deletions were 600 reports before the hand-over coalesced them). The hand-over itself keeps
 * one report per directory in flight, sends the latest entries next, and resolves each write
 * only once the main thread has answered for a report that holds it.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WorkerShards } from '../../../../src/replication/shards/worker/worker-shards.js';
import { CheckpointHandover } from '../../../../src/replication/shards/worker/checkpoint-handover.js';
import type { FromShard } from '../../../../src/replication/shards/worker/shard-protocol.js';
import type { DirCheckpointEntries } from '../../../../src/storage/manager/log-dir-checkpoints.js';
import { TOPICS, tempConfig, topic } from './shard-fixtures.js';

const PARTITIONS = 600;

test(`deleting a ${PARTITIONS}-partition topic on 2 workers: a few checkpoint reports reach the main thread, and the files lose its entries`, async (t) => {
  const config = await tempConfig('ckpt-reports');
  const shards = await WorkerShards.open({ config, workers: 2, topics: TOPICS });
  after(() => shards.shutdown());
  const big = topic('big', PARTITIONS, 'AAAAAAAAAAAAAAAAAAAABA');
  await shards.topicsChanged([big]);
  const before = { reports: shards.files.reports, entries: shards.files.reportedEntries };
  await shards.topicDeleted('big');
  // The last coalesced report follows the deletions: wait until the files no longer name the topic.
  const file = join(config.logDirs[0]!, 'recovery-point-offset-checkpoint');
  const deadline = Date.now() + 60_000;
  while (/\bbig \d+ /.test(await readFile(file, 'utf8'))) {
    assert.ok(Date.now() < deadline, 'the recovery point file still names the deleted topic after 60 s');
    await new Promise((r) => setImmediate(r));
  }
  const reports = shards.files.reports - before.reports;
  const entries = shards.files.reportedEntries - before.entries;
  t.diagnostic(`${reports} reports, ${entries} entries for ${PARTITIONS} deletions`);
  // One per deletion before (600 reports, 272,700 entries); coalesced, 16-23 reports of 6,900-10,100 seen (the count moves with the load).
  assert.ok(reports < PARTITIONS / 10, `${reports} reports for ${PARTITIONS} deletions`);
  assert.ok(entries < PARTITIONS * 4 * 10, `${entries} entries reported for ${PARTITIONS} deletions`);
});

const entriesOf = (offset: number): DirCheckpointEntries => ({
  recoveryPoints: [{ topic: 't', partition: 0, offset }],
  logStartOffsets: [],
  highWatermarks: [],
  cleanerOffsets: [],
});

test('the hand-over: one report per directory in flight, the latest entries next, each write resolved by the answer to a report that holds it', async () => {
  const posted: FromShard[] = [];
  const handover = new CheckpointHandover((m) => posted.push(m));
  const settled: string[] = [];
  const track = (name: string, p: Promise<void>) =>
    p.then(
      () => settled.push(`${name} ok`),
      () => settled.push(`${name} failed`),
    );
  const first = track('first', handover.write('/a', entriesOf(1)));
  const second = track('second', handover.write('/a', entriesOf(2)));
  const third = track('third', handover.write('/a', entriesOf(3)));
  const other = track('other', handover.write('/b', entriesOf(9)));
  assert.deepEqual(
    posted.map((m) => (m.type === 'checkpoints' ? [m.dir, m.entries.recoveryPoints[0]!.offset] : m.type)),
    [
      ['/a', 1],
      ['/b', 9],
    ],
    'one report per directory; the second and third wait',
  );
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(settled, [], 'nothing resolves before the main thread answers');

  handover.written('/a', true);
  await first;
  assert.deepEqual(settled, ['first ok']);
  assert.deepEqual(
    posted.slice(2).map((m) => (m.type === 'checkpoints' ? [m.dir, m.entries.recoveryPoints[0]!.offset] : m.type)),
    [['/a', 3]],
    'the waiting writes share one report of the latest entries',
  );
  handover.written('/a', false);
  await Promise.all([second, third]);
  assert.deepEqual(settled, ['first ok', 'second failed', 'third failed'], 'a failed write rejects every write it held');
  handover.written('/b', true);
  await other;
  assert.equal(handover.reports, 3);
  handover.written('/a', true); // no report in flight: ignored
  assert.equal(posted.length, 3);
});
