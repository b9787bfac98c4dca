/**
 * The log cleaner and transactions (issue 14), as Kafka's LogCleaner with its
 * CleanedTransactionMetadata: aborted records go, an open transaction (at or past the last
 * stable offset) is never cleaned, markers stay while data of their transaction may remain and
 * then go after delete.retention.ms (KIP-534's delete horizon in the batch header), and the
 * .txnindex follows. Driven through a Partition so the producer state and the LSO are real.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBatch, encodeBatch, iterateBatches } from '../../src/protocol/records/index.js';
import { endTxnMarkerOf } from '../../src/protocol/records/control.js';
import { Partition } from '../../src/replication/partition/partition.js';
import { CleanedTransactions } from '../../src/storage/cleaner/cleaned-txns.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import type { UnifiedLog } from '../../src/storage/log/unified-log.js';
import { CapturingLogger, testConfig, withTempDir } from './helpers.js';

let now = 1700000000000;
const openMgr = (dir: string) =>
  LogManager.open({ logDirs: [dir], defaults: testConfig(), logger: new CapturingLogger(), cleanerEnabled: false, clock: () => now });

interface Entry {
  offset: number;
  control: boolean;
  marker?: 'COMMIT' | 'ABORT';
  horizon?: number;
  producerId: bigint;
  key: string | null;
  value: string | null;
}

/** Every batch of the log, records flattened, control batches marked. */
async function entries(log: UnifiedLog): Promise<Entry[]> {
  const out: Entry[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const { records } = await log.read(next, 1 << 20, { minOneBatch: true });
    if (records.length === 0) break;
    for (const e of iterateBatches(records)) {
      const b = decodeBatch(e.buf, e.start, { maxBytes: 1 << 20 });
      const horizon = b.hasDeleteHorizon ? Number(b.baseTimestamp) : undefined;
      if (b.isControl) {
        const m = endTxnMarkerOf(b);
        out.push({
          offset: Number(b.baseOffset),
          control: true,
          marker: m ? (m.type === 1 ? 'COMMIT' : 'ABORT') : undefined,
          horizon,
          producerId: b.producerId,
          key: null,
          value: null,
        });
      } else {
        for (const r of b.records)
          out.push({
            offset: Number(b.baseOffset) + r.offsetDelta,
            control: false,
            producerId: b.producerId,
            key: r.key?.toString() ?? null,
            value: r.value?.toString() ?? null,
            horizon,
          });
      }
      next = Number(b.baseOffset) + b.lastOffsetDelta + 1;
    }
  }
  return out;
}

/** What a read_committed consumer sees from the start to the LSO: data records minus aborted ones. */
async function readCommitted(p: Partition): Promise<string[]> {
  const all = await entries(p.log);
  const aborted = p.log.collectAbortedTxns(p.log.logStartOffset, p.lastStableOffset);
  return all
    .filter((e) => !e.control && e.offset < p.lastStableOffset)
    .filter((e) => !aborted.some((t) => t.producerId === e.producerId && e.offset >= t.firstOffset && e.offset <= t.lastOffset))
    .map((e) => `${e.key}=${e.value}`);
}

const seqs = new Map<bigint, number>();
async function send(p: Partition, pid: bigint, recs: [string, string | null][], transactional = true): Promise<void> {
  const seq = seqs.get(pid) ?? 0;
  seqs.set(pid, seq + recs.length);
  const batch = encodeBatch({
    records: recs.map(([k, v], i) => ({
      attributes: 0,
      timestampDelta: 0,
      offsetDelta: i,
      key: Buffer.from(k),
      value: v === null ? null : Buffer.from(v),
      headers: [],
    })),
    baseTimestamp: BigInt(now),
    producerId: pid,
    producerEpoch: 0,
    baseSequence: pid < 0n ? -1 : seq,
    isTransactional: transactional,
  });
  const r = await p.appendAsLeader(batch);
  assert.equal(r.errorCode, 0, r.errorMessage);
}
async function end(p: Partition, pid: bigint, commit: boolean): Promise<void> {
  const r = await p.appendTxnMarker({ producerId: pid, producerEpoch: 0, coordinatorEpoch: 0, commit, timestamp: now });
  assert.equal(r.errorCode, 0);
}

test('cleaning removes aborted records, keeps an open transaction, keeps markers while their data may remain, then drops them after delete.retention.ms', async () => {
  await withTempDir(async (dir) => {
    let mgr = await openMgr(dir);
    let log = await mgr.createLog('ctx', 0, { cleanupPolicy: ['compact'], segmentBytes: 250, deleteRetentionMs: 5000, minCleanableDirtyRatio: 0.01 });
    let p = await Partition.open(log, 'id', 0, () => undefined);
    const [A, B, C] = [1n, 2n, 3n];
    await send(p, A, [
      ['k1', 'a1'],
      ['k2', 'a2'],
    ]);
    await send(p, B, [
      ['k1', 'b1-aborted'],
      ['k3', 'b3-aborted'],
    ]);
    await end(p, B, false);
    await end(p, A, true);
    await log.forceRoll();
    await send(p, -1n, [['k4', 'plain4']], false);
    await log.forceRoll();
    // C's transaction stays open: nothing from it on may be cleaned.
    await send(p, C, [['k4', 'c4-open']]);
    await log.forceRoll();
    await send(p, -1n, [['k1', 'plain-late-k1']], false);
    await log.forceRoll();
    await send(p, -1n, [['z', 'active']], false);
    const lso = p.lastStableOffset;
    const cOffset = (await entries(log)).find((e) => e.value === 'c4-open')!.offset;
    assert.equal(lso, cOffset);
    const before = await entries(log);
    const committedBefore = await readCommitted(p);
    assert.deepEqual(committedBefore, ['k1=a1', 'k2=a2', 'k4=plain4']);

    // Round 1: B's records go (its k1 must not shadow A's committed k1), its marker and index entry stay.
    await mgr.cleaner.cleanLog(log);
    let after = await entries(log);
    assert.ok(!after.some((e) => e.value?.endsWith('-aborted')), 'aborted records removed');
    assert.ok(
      after.some((e) => e.value === 'a1'),
      'the committed k1 stays: the aborted k1 after it does not count',
    );
    assert.deepEqual(
      after.filter((e) => e.offset >= lso),
      before.filter((e) => e.offset >= lso),
      'nothing at or past the LSO is touched',
    );
    assert.deepEqual(
      after.filter((e) => e.control).map((e) => [e.marker, e.horizon]),
      [
        ['ABORT', undefined],
        ['COMMIT', undefined],
      ],
    );
    assert.equal(log.collectAbortedTxns(0, lso).length, 1, 'the abort stays indexed while its marker says data was seen this round');
    assert.deepEqual(await readCommitted(p), committedBefore);
    assert.equal(p.lastStableOffset, lso);

    // Round 2: B's data is all gone, so its marker gets a delete horizon and its index entry goes.
    // A's data is still there: its COMMIT marker stays as it is.
    await mgr.cleaner.cleanLog(log);
    after = await entries(log);
    const abortMarker = after.find((e) => e.marker === 'ABORT')!;
    assert.equal(abortMarker.horizon, now + 5000);
    assert.equal(after.find((e) => e.marker === 'COMMIT')!.horizon, undefined);
    assert.equal(log.collectAbortedTxns(0, lso).length, 0);
    assert.deepEqual(await readCommitted(p), committedBefore);

    // Round 3, before the horizon: nothing changes.
    now += 4000;
    await mgr.cleaner.cleanLog(log);
    assert.ok((await entries(log)).some((e) => e.marker === 'ABORT'));
    // Past the horizon: the abort marker goes; the commit marker stays (A's records remain).
    now += 2000;
    await mgr.cleaner.cleanLog(log);
    after = await entries(log);
    assert.deepEqual(
      after.filter((e) => e.control).map((e) => e.marker),
      ['COMMIT'],
    );
    assert.deepEqual(await readCommitted(p), committedBefore);
    assert.equal(p.lastStableOffset, lso);

    // C commits; later records supersede all of A's and C's keys: their markers then go too.
    await end(p, C, true);
    await send(
      p,
      -1n,
      [
        ['k1', 'n1'],
        ['k2', 'n2'],
        ['k4', 'n4'],
      ],
      false,
    );
    await log.forceRoll();
    await send(p, -1n, [['z', 'active2']], false);
    assert.equal(p.lastStableOffset, log.logEndOffset);
    await mgr.cleaner.cleanLog(log); // A's and C's data go
    await mgr.cleaner.cleanLog(log); // their markers get a horizon
    assert.ok((await entries(log)).filter((e) => e.control).every((e) => e.horizon === now + 5000));
    now += 6000;
    await mgr.cleaner.cleanLog(log);
    after = await entries(log);
    assert.deepEqual(
      after.filter((e) => e.control),
      [],
      'every marker gone once its data is gone and the horizon passed',
    );
    const visible = await readCommitted(p);
    assert.deepEqual(
      visible,
      ['z=active', 'k1=n1', 'k2=n2', 'k4=n4', 'z=active2'],
      'z=active is superseded only in the active segment, which is never cleaned',
    );

    // A restart keeps the LSO and what read_committed sees.
    const lsoBefore = p.lastStableOffset;
    await mgr.shutdown();
    mgr = await openMgr(dir);
    log = mgr.getLog('ctx', 0)!;
    p = await Partition.open(log, 'id', 0, () => undefined);
    assert.equal(p.lastStableOffset, lsoBefore);
    assert.deepEqual(await readCommitted(p), visible);
    await mgr.shutdown();
  });
});

test('an open transaction in an old segment bounds cleaning: no segment at or past the LSO is cleaned, and the cleaner checkpoint stays below it', async () => {
  await withTempDir(async (dir) => {
    const mgr = await openMgr(dir);
    const log = await mgr.createLog('open', 0, { cleanupPolicy: ['compact'], segmentBytes: 250, minCleanableDirtyRatio: 0.01 });
    const p = await Partition.open(log, 'id', 0, () => undefined);
    await send(p, -1n, [['k', 'v0']], false);
    await log.forceRoll();
    await send(p, 7n, [['k', 'open']]);
    await log.forceRoll();
    for (let i = 1; i < 4; i++) {
      await send(p, -1n, [['k', `v${i}`]], false);
      await log.forceRoll();
    }
    await send(p, -1n, [['z', 'active']], false);
    const before = await entries(log);
    await mgr.cleaner.cleanLog(log);
    assert.deepEqual(
      await entries(log),
      before,
      'the open transaction (offset 1) is the LSO: nothing past it is cleaned, and v0 is in the segment before it, superseded only past the LSO',
    );
    assert.ok((mgr.cleaner.firstDirtyOffsets.get(log.name) ?? 0) <= p.lastStableOffset);
    await end(p, 7n, false);
    await mgr.cleaner.cleanLog(log);
    const after = await entries(log);
    assert.deepEqual(
      after.filter((e) => !e.control).map((e) => e.value),
      ['v3', 'active'],
    );
    await mgr.shutdown();
  });
});

test('with highWatermarkSetByOwner (the broker) a log no partition hosts is not cleaned: it has no high watermark, so no last stable offset, yet', async () => {
  await withTempDir(async (dir) => {
    const mgr = await LogManager.open({
      logDirs: [dir],
      defaults: testConfig(),
      logger: new CapturingLogger(),
      cleanerEnabled: false,
      clock: () => now,
      highWatermarkSetByOwner: true,
    });
    const log = await mgr.createLog('hosted', 0, { cleanupPolicy: ['compact'], minCleanableDirtyRatio: 0.01 });
    for (let i = 0; i < 3; i++) {
      await log.append(
        encodeBatch({
          records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: Buffer.from('k'), value: Buffer.from(`v${i}`), headers: [] }],
          baseTimestamp: BigInt(now),
        }),
        { leaderEpoch: 0 },
      );
      await log.forceRoll();
    }
    assert.equal(await mgr.cleaner.cleanOnce(), 0);
    await Partition.open(log, 'id', 0, () => undefined);
    assert.equal(await mgr.cleaner.cleanOnce(), 1);
    assert.deepEqual(
      (await entries(log)).map((e) => e.value),
      ['v2'],
    );
    await mgr.shutdown();
  });
});

test("CleanedTransactions: an unreadable control batch still ends its producer's aborted transaction (its later transaction is not taken for aborted) and is never discardable", () => {
  const t = new CleanedTransactions([{ producerId: 5n, firstOffset: 0, lastOffset: 2, lastStableOffset: 0 }]);
  assert.equal(t.onDataBatch(5n, 1, true), true, 'aborted');
  assert.deepEqual(t.onControlBatch(5n, 2, 'unreadable'), {
    discardable: false,
    keepEntry: { producerId: 5n, firstOffset: 0, lastOffset: 2, lastStableOffset: 0 },
  });
  assert.equal(t.onDataBatch(5n, 3, true), false, 'the next transaction of the producer is not aborted');
  assert.deepEqual(t.onControlBatch(5n, 4, 'unreadable'), { discardable: false });
  assert.equal(t.onDataBatch(5n, 5, true), false);
  assert.deepEqual(t.onControlBatch(5n, 6, 'commit'), { discardable: false }, 'data of the transaction was seen');
  assert.deepEqual(t.onControlBatch(5n, 7, 'commit'), { discardable: true });
  assert.deepEqual(t.onControlBatch(5n, 8, 'other'), { discardable: false });
});
