/**
 * The follower's storage operations (issue 12): Log.appendAsFollower keeps what the leader wrote
 * (offsets, epochs, timestamps), checks CRCs and offsets, learns leader epochs; Partition adds
 * producer state, truncation and the follower's high watermark.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompressionType, encodeBatch, type KafkaRecord } from '../../src/protocol/records/index.js';
import { UnexpectedAppendOffsetError, CorruptRecordError } from '../../src/storage/errors.js';
import { Partition } from '../../src/replication/partition/partition.js';
import { UnifiedLog } from '../../src/storage/log/unified-log.js';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { openLog as openStorageLog, withTempDir, decodeAll } from '../storage/helpers.js';
import { flipByte } from '../helpers/corrupt.js';

const openLog: typeof openStorageLog = async (dir, overrides, extra) => {
  await mkdir(path.join(dir, 'topic-0'), { recursive: true });
  return openStorageLog(dir, overrides, extra);
};

function batch(
  base: number,
  count: number,
  epoch: number,
  opts: { producerId?: bigint; seq?: number; ts?: number; compression?: CompressionType } = {},
): Buffer {
  const records: KafkaRecord[] = Array.from({ length: count }, (_, i) => ({
    attributes: 0,
    timestampDelta: i,
    offsetDelta: i,
    key: null,
    value: Buffer.from(`v${base + i}`),
    headers: [],
  }));
  return encodeBatch({
    records,
    baseOffset: BigInt(base),
    partitionLeaderEpoch: epoch,
    baseTimestamp: BigInt(opts.ts ?? 1_600_000_000_000 + base),
    compression: opts.compression ?? CompressionType.None,
    producerId: opts.producerId ?? -1n,
    producerEpoch: opts.producerId === undefined ? -1 : 0,
    baseSequence: opts.seq ?? -1,
  });
}

test("Log.appendAsFollower stores the leader's bytes unchanged and learns epochs", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir);
    const b1 = Buffer.concat([batch(0, 3, 0), batch(3, 2, 0, { compression: CompressionType.Gzip })]);
    const b2 = Buffer.concat([batch(5, 4, 2), batch(9, 1, 5)]);
    const r1 = await log.appendAsFollower(Buffer.from(b1));
    assert.equal(r1.firstOffset, 0);
    assert.equal(r1.lastOffset, 4);
    await log.appendAsFollower(Buffer.from(b2));
    assert.equal(log.logEndOffset, 10);
    const { records } = await log.read(0, 1 << 20);
    assert.ok(records.equals(Buffer.concat([b1, b2])), "stored bytes equal the leader's (offsets, epochs, timestamps, CRCs)");
    assert.deepEqual(log.epochs.all(), [
      { epoch: 0, startOffset: 0 },
      { epoch: 2, startOffset: 5 },
      { epoch: 5, startOffset: 9 },
    ]);
    assert.deepEqual(
      decodeAll(records)
        .map((r) => r.timestamp)
        .slice(0, 3),
      [1_600_000_000_000, 1_600_000_000_001, 1_600_000_000_002],
    );
    await log.close();
    // The epochs were checkpointed: a reopened log knows them.
    const again = await openLog(dir, {}, { hadCleanShutdown: true });
    assert.equal(again.epochs.latestEpoch(), 5);
    assert.equal(again.logEndOffset, 10);
    await again.close();
  });
});

test('Log.appendAsFollower refuses overlaps, backwards offsets and bad CRCs, writing nothing', async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir);
    await log.appendAsFollower(batch(0, 5, 1));
    await assert.rejects(log.appendAsFollower(batch(3, 2, 1)), UnexpectedAppendOffsetError, 'starts below the log end');
    await assert.rejects(log.appendAsFollower(Buffer.concat([batch(5, 2, 1), batch(6, 2, 1)])), UnexpectedAppendOffsetError, 'second batch overlaps the first');
    const bad = batch(5, 2, 1);
    flipByte(bad, bad.length - 1);
    await assert.rejects(log.appendAsFollower(bad), CorruptRecordError);
    assert.equal(log.logEndOffset, 5);
    // A gap (a compacted leader) is accepted, as Kafka does.
    await log.appendAsFollower(batch(8, 2, 1));
    assert.equal(log.logEndOffset, 10);
    await log.close();
  });
});

test('Partition follower operations: producer state, truncation, high watermark', async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir);
    const hws: number[] = [];
    const p = await Partition.open(await UnifiedLog.open(log), 'id', 3, (x) => hws.push(x.highWatermark));
    p.makeFollower(7, 3);
    await p.appendAsFollower(Buffer.concat([batch(0, 2, 1, { producerId: 42n, seq: 0 }), batch(2, 3, 2, { producerId: 42n, seq: 2 })]));
    await p.appendAsFollower(batch(5, 5, 3));
    assert.equal(p.logEndOffset, 10);
    // The idempotent producer's batches are known: a retry of the second is a duplicate at offset 2.
    const dup = p.producers.check(42n, 0, 2, 4);
    assert.deepEqual(dup, { kind: 'duplicate', firstOffset: 2, lastOffset: 4 });
    // HW = min(leader's HW, LEO), and may go back as Kafka's follower HW does.
    assert.equal(p.setFollowerHighWatermark(7), 7);
    assert.equal(p.setFollowerHighWatermark(100), 10);
    assert.equal(p.setFollowerHighWatermark(4), 4);
    assert.deepEqual(hws, [7, 10, 4]);
    assert.equal(p.isLeader, false);

    await p.setFollowerHighWatermark(10);
    await p.truncateTo(2);
    assert.equal(p.logEndOffset, 2);
    assert.equal(p.highWatermark, 2, 'HW follows the log end down');
    assert.deepEqual(log.epochs.all(), [{ epoch: 1, startOffset: 0 }]);
    assert.equal(p.producers.check(42n, 0, 2, 4).kind, 'append', 'the truncated batch is forgotten');
    assert.deepEqual(p.producers.check(42n, 0, 0, 1), { kind: 'duplicate', firstOffset: 0, lastOffset: 1 });

    await p.truncateFullyAndStartAt(50);
    assert.equal(p.logStartOffset, 50);
    assert.equal(p.logEndOffset, 50);
    assert.equal(p.highWatermark, 50);
    assert.deepEqual(log.epochs.all(), []);
    assert.equal(p.producers.check(42n, 0, 0, 1).kind, 'append');
    await p.appendAsFollower(batch(50, 1, 4));
    assert.equal(p.logEndOffset, 51);
    await log.close();
  });
});

test("an empty follower log whose start falls inside the leader's first batch restarts at that batch", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir, {}, { logStartOffset: 3 });
    const p = await Partition.open(await UnifiedLog.open(log), 'id', 0, () => undefined);
    assert.equal(p.logEndOffset, 3);
    await p.appendAsFollower(batch(0, 5, 0));
    assert.equal(p.logStartOffset, 0);
    assert.equal(p.logEndOffset, 5);
    // Not empty any more: the same overlap is refused.
    await assert.rejects(p.appendAsFollower(batch(4, 2, 0)), UnexpectedAppendOffsetError);
    await log.close();
  });
});

test("the follower follows the leader's log start up to its high watermark", async () => {
  await withTempDir(async (dir) => {
    const log = await openLog(dir, { segmentBytes: 1024 });
    const p = await Partition.open(await UnifiedLog.open(log), 'id', 0, () => undefined);
    for (let i = 0; i < 40; i += 4) await p.appendAsFollower(batch(i, 4, 0));
    p.setFollowerHighWatermark(20);
    await p.followLeaderLogStartOffset(30);
    assert.equal(p.logStartOffset, 0, 'beyond the HW: not followed');
    await p.followLeaderLogStartOffset(12);
    assert.equal(p.logStartOffset, 12);
    await log.close();
  });
});
