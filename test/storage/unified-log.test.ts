/**
 * UnifiedLog, the one owner of a partition's log: its high watermark before and after its owner
 * sets it, the last stable offset over producer state, transaction markers into the .txnindex,
 * producer state recovered when the log opens again, and the manager's checkpoint of the
 * high watermark.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeBatch } from '../../src/protocol/records/batch.js';
import { readOffsetCheckpoint } from '../../src/storage/checkpoint/checkpoint-files.js';
import { UnifiedLog } from '../../src/storage/log/unified-log.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { makeBatch, openLog as openLocalLog, testConfig, withTempDir } from './helpers.js';

function txnBatch(producerId: bigint, seq: number, values: string[]): Buffer {
  return encodeBatch({
    records: values.map((v, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
    baseTimestamp: 1000n,
    producerId,
    producerEpoch: 0,
    baseSequence: seq,
    isTransactional: true,
  });
}

/** helpers.openLog's log in `dir`, its directory made first (LogManager makes it otherwise). */
const openLog: typeof openLocalLog = async (dir, overrides, extra) => {
  await mkdir(path.join(dir, 'topic-0'), { recursive: true });
  return openLocalLog(dir, overrides, extra);
};

const marker = (producerId: bigint, commit: boolean) => ({ producerId, producerEpoch: 0, coordinatorEpoch: 0, commit, timestamp: 1000 });

test('storage alone, the high watermark follows the log end; set by its owner, it stays at the log start until set; epochs by offset', async () => {
  await withTempDir(async (dir) => {
    const alone = await UnifiedLog.open(await openLog(dir));
    await alone.append(makeBatch(['a', 'b', 'c']), { leaderEpoch: 0 });
    assert.equal(alone.highWatermark, 3);
    assert.equal(alone.lastStableOffset, 3);
    assert.equal(alone.checkpointedHighWatermark, undefined, 'nothing set: nothing to checkpoint');
    await alone.assignEpochStartOffset(2, 3);
    await alone.append(makeBatch(['d']), { leaderEpoch: 2 });
    assert.deepEqual([alone.epochAt(2), alone.epochAt(3), alone.epochAt(-1)], [0, 2, -1]);
    assert.deepEqual(alone.endOffsetForEpoch(1), { epoch: 0, endOffset: 3 });
    await alone.close();

    const owned = await UnifiedLog.open(await openLog(dir), { highWatermarkSetByOwner: true });
    assert.equal(owned.logEndOffset, 4);
    assert.equal(owned.highWatermark, 0);
    assert.equal(owned.lastStableOffset, 0);
    owned.updateHighWatermark(2);
    assert.equal(owned.highWatermark, 2);
    assert.equal(owned.checkpointedHighWatermark, 2);
    await owned.close();
  });
});

test('an open transaction bounds the last stable offset; an abort marker closes it and goes into the .txnindex; a reopened log recovers both', async () => {
  await withTempDir(async (dir) => {
    const log = await UnifiedLog.open(await openLog(dir), { highWatermarkSetByOwner: true });
    await log.append(makeBatch(['plain']), { leaderEpoch: 0 });
    await log.append(txnBatch(7n, 0, ['t1', 't2']), { leaderEpoch: 0 });
    log.updateHighWatermark(log.logEndOffset);
    assert.equal(log.lastStableOffset, 1, 'the open transaction starts at offset 1');
    const fenced = await log.appendTxnMarker({ ...marker(7n, false), producerEpoch: -1 }, 0);
    assert.ok('errorCode' in fenced, 'an older producer epoch is fenced');
    const res = await log.appendTxnMarker(marker(7n, false), 0);
    assert.ok(!('errorCode' in res));
    assert.equal(res.appended.firstOffset, 3);
    assert.equal(log.lastStableOffset, 1, 'the transaction is unstable until the high watermark passes its marker');
    log.updateHighWatermark(log.logEndOffset);
    assert.equal(log.lastStableOffset, 4);
    assert.deepEqual(log.collectAbortedTxns(0, 4), [{ producerId: 7n, firstOffset: 1, lastOffset: 3, lastStableOffset: 4 }]);
    await log.append(txnBatch(8n, 0, ['open']), { leaderEpoch: 0 });
    await log.snapshotProducerState(true);
    assert.equal(log.producerStateChangedSinceSnapshot(true), false);
    await log.close();

    const again = await UnifiedLog.open(await openLog(dir, {}, { hadCleanShutdown: true }), { checkpointedHighWatermark: 5 });
    assert.equal(again.lastStableOffset, 4, "producer 8's transaction is still open at offset 4");
    assert.deepEqual(again.producers.check(8n, 0, 0, 0, true), { kind: 'duplicate', firstOffset: 4, lastOffset: 4 }, 'its batch is known from the snapshot');
    assert.deepEqual(
      again.collectAbortedTxns(0, 5).map((t) => t.producerId),
      [7n],
    );
    await again.close();
  });
});

test('follower truncation takes producer state and the high watermark down with the log end; a full truncation clears producers', async () => {
  await withTempDir(async (dir) => {
    const log = await UnifiedLog.open(await openLog(dir), { highWatermarkSetByOwner: true });
    await log.append(txnBatch(9n, 0, ['x', 'y']), { leaderEpoch: 0 });
    await log.append(makeBatch(['z']), { leaderEpoch: 0 });
    log.updateHighWatermark(3);
    await log.truncateTo(1);
    assert.equal(log.logEndOffset, 1);
    assert.equal(log.highWatermark, 1);
    assert.equal(log.lastStableOffset, 0, 'the transaction still begins at offset 0');
    await log.truncateFullyAndStartAt(10);
    assert.equal(log.highWatermark, 10);
    assert.equal(log.lastStableOffset, 10, 'no producer is left');
    assert.equal(log.producers.size, 0);
    await log.close();
  });
});

test("the manager checkpoints each log's high watermark and opens the log with it", async () => {
  await withTempDir(async (dir) => {
    let mgr = await LogManager.open({ logDirs: [dir], defaults: testConfig(), cleanerEnabled: false, highWatermarkSetByOwner: true });
    const set = await mgr.createLog('hw', 0);
    const unset = await mgr.createLog('hw', 1);
    for (const l of [set, unset]) await l.append(makeBatch(['a', 'b']), { leaderEpoch: 0 });
    set.updateHighWatermark(1);
    await mgr.shutdown();
    const file = await readOffsetCheckpoint(path.join(dir, 'replication-offset-checkpoint'));
    assert.deepEqual([...file], [['hw-0', 1]], 'only the log whose high watermark was set');
    mgr = await LogManager.open({ logDirs: [dir], defaults: testConfig(), cleanerEnabled: false, highWatermarkSetByOwner: true });
    assert.equal(mgr.getLog('hw', 0)!.highWatermark, 1);
    assert.equal(mgr.checkpointedHighWatermark('hw', 0), 1);
    assert.equal(mgr.getLog('hw', 1)!.highWatermark, 0, 'unknown: the log start');
    await mgr.shutdown();
  });
});
