/**
 * A .txnindex lost before the last producer snapshot (issue 14): the replay after a restart
 * starts at that snapshot, so it cannot re-add the aborts of older segments. Partition.open
 * finds segments holding ABORT markers without a (valid) index and rebuilds their entries by
 * replaying producer state from the log start, as Kafka's recoverSegment rebuilds producer
 * state up to a segment before recovering it, so each entry keeps its real first offset (even
 * for a transaction that began in an earlier segment) and last stable offset.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { access, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { encodeBatch } from '../../src/protocol/records/batch.js';
import { Partition } from '../../src/replication/partition/partition.js';
import { CLEAN_SHUTDOWN_MARKER } from '../../src/storage/checkpoint/checkpoint-files.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { CapturingLogger, testConfig, withTempDir } from '../storage/helpers.js';

const openMgr = (dir: string) => LogManager.open({ logDirs: [dir], defaults: testConfig(), logger: new CapturingLogger(), cleanerEnabled: false });

async function send(p: Partition, pid: bigint, seq: number, value: string, transactional = true): Promise<number> {
  const r = await p.appendAsLeader(
    encodeBatch({
      records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(value), headers: [] }],
      baseTimestamp: BigInt(Date.now()),
      producerId: pid,
      producerEpoch: 0,
      baseSequence: pid < 0n ? -1 : seq,
      isTransactional: transactional,
    }),
  );
  assert.equal(r.errorCode, 0, r.errorMessage);
  return r.baseOffset;
}
async function abort(p: Partition, pid: bigint): Promise<void> {
  const r = await p.appendTxnMarker({ producerId: pid, producerEpoch: 0, coordinatorEpoch: 0, commit: false, timestamp: Date.now() });
  assert.equal(r.errorCode, 0);
}

for (const how of ['clean', 'unclean', 'corrupt'] as const) {
  test(`a lost .txnindex of older segments is rebuilt on a ${how} restart: read_committed still gets every abort`, async () => {
    await withTempDir(async (dir) => {
      let mgr = await openMgr(dir);
      let log = await mgr.createLog('rb', 0, {});
      let p = await Partition.open(log, 'id', 0, () => undefined);
      const [A, B, C] = [1n, 2n, 3n];
      await send(p, A, 0, 'a0');
      await send(p, B, 0, 'b0'); // B's transaction spans three segments
      await log.forceRoll();
      await abort(p, A);
      await send(p, C, 0, 'c0');
      await send(p, B, 1, 'b1');
      await abort(p, C);
      await log.forceRoll();
      await abort(p, B);
      await send(p, -1n, -1, 'plain', false);
      await log.forceRoll();
      await send(p, -1n, -1, 'active', false);
      const lso = p.lastStableOffset;
      const before = log.collectAbortedTxns(0, lso);
      assert.deepEqual(
        before.map((t) => [t.producerId, t.firstOffset, t.lastOffset]),
        [
          [1n, 0, 2],
          [3n, 3, 5],
          [2n, 1, 6],
        ],
      );
      // The snapshot covers everything: the replay after the restart reads nothing.
      await p.snapshotProducerState(true);
      await mgr.shutdown();

      const lost = log.segments.slice(1, 3).map((s) => s.txnIndex.file);
      for (const f of lost) {
        if (how === 'corrupt') await writeFile(f, Buffer.alloc(7, 1));
        else await rm(f);
      }
      if (how === 'unclean') await rm(path.join(dir, CLEAN_SHUTDOWN_MARKER));

      mgr = await openMgr(dir);
      log = mgr.getLog('rb', 0)!;
      p = await Partition.open(log, 'id', 0, () => undefined);
      assert.equal(p.lastStableOffset, lso);
      assert.deepEqual(log.collectAbortedTxns(0, lso), before, 'every entry back, first offsets and last stable offsets as written');
      assert.deepEqual(
        log.collectAbortedTxns(3, 4),
        before.filter((t) => t.lastOffset >= 3),
        'a fetch from the middle gets the abort of B, begun two segments earlier',
      );
      for (const f of lost) await access(f);
      await mgr.shutdown();
    });
  });
}
