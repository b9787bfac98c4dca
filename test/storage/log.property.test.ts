/**
 * Random sequences of append / read / roll / delete-records / truncate / reopen (clean and
 * unclean) checked against an in-memory model of the partition.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { CompressionType } from '../../src/protocol/records/batch-header.js';
import { LogCleaner } from '../../src/storage/cleaner/log-cleaner.js';
import type { LocalLog } from '../../src/storage/log/local-log.js';
import { UnifiedLog } from '../../src/storage/log/unified-log.js';
import { silentLogger } from '../../src/storage/logger.js';
import { applyRetention } from '../../src/storage/manager/retention.js';
import { decodeAll, makeBatch, openLog, readAll, withTempDir } from './helpers.js';

type Op =
  | { kind: 'append'; values: string[]; gzip: boolean }
  | { kind: 'read'; at: number; maxBytes: number }
  | { kind: 'roll' }
  | { kind: 'deleteRecords'; at: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'reopen'; clean: boolean }
  | { kind: 'retention'; bytes: number }
  | { kind: 'compact' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      values: fc.array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 6 }),
      gzip: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retention' as const), bytes: fc.integer({ min: 0, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('read' as const), at: fc.nat(), maxBytes: fc.integer({ min: 1, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('roll' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteRecords' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const), clean: fc.boolean() }) },
);

test('log behaves like an in-memory model', { timeout: 300000 }, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), fc.integer({ min: 200, max: 2000 }), async (ops, segmentBytes) => {
      await withTempDir(async (dir) => {
        await mkdir(path.join(dir, 'topic-0'));
        const cfg = {
          segmentBytes,
          indexIntervalBytes: 100,
          cleanupPolicy: ['delete' as const, 'compact' as const],
          retentionMs: -1,
          minCleanableDirtyRatio: 0,
        };
        // Keys cycle through a few values so compaction has work to do.
        const keyOf = (value: string): string => `k${value.length % 3}`;
        let log: LocalLog = await openLog(dir, cfg);
        // model: value by offset (batch boundaries matter for truncation, so keep them too)
        const model = new Map<number, string>();
        const batchStarts: number[] = [];
        let start = 0;
        let end = 0;
        for (const op of ops) {
          if (op.kind === 'append') {
            const recs = op.values.map((v) => ({ key: keyOf(v), value: v }));
            const res = await log.append(makeBatch(recs, { compression: op.gzip ? CompressionType.Gzip : CompressionType.None }), { leaderEpoch: 0 });
            assert.equal(res.firstOffset, end);
            batchStarts.push(end);
            op.values.forEach((v, i) => model.set(end + i, v));
            end += op.values.length;
          } else if (op.kind === 'read' && end > start) {
            const at = start + (op.at % (end - start));
            const { records } = await log.read(at, op.maxBytes);
            const got = decodeAll(records);
            // Compaction may have removed `at`: the read must then reach the next existing record,
            // or stop inside the batch that spans `at` (its kept records all lie before `at`).
            const next = [...model.keys()].filter((o) => o >= at).sort((a, b) => a - b)[0];
            if (next !== undefined) {
              assert.ok(got.length > 0, `read at ${at} returns data`);
              assert.ok(got.some((r) => r.offset === next) || got.every((r) => r.offset < next), `read at ${at} reaches ${next}`);
            }
            for (const r of got) assert.equal(r.value, model.get(r.offset));
          } else if (op.kind === 'roll') {
            await log.forceRoll();
          } else if (op.kind === 'deleteRecords') {
            const at = start + (op.at % (end - start + 1));
            start = Math.max(start, at);
            assert.equal(await log.deleteRecordsBefore(at), start);
          } else if (op.kind === 'truncate' && end > start) {
            // Replicas truncate at batch boundaries.
            const candidates = batchStarts.filter((b) => b >= start && b < end);
            if (candidates.length === 0) continue;
            const at = candidates[op.at % candidates.length]!;
            await log.truncateTo(at);
            for (let o = at; o < end; o++) model.delete(o);
            end = at;
            batchStarts.splice(batchStarts.findIndex((b) => b >= at));
          } else if (op.kind === 'retention') {
            log.updateConfig({ retentionBytes: op.bytes });
            await applyRetention(log, Date.now());
            log.updateConfig({ retentionBytes: -1 });
            assert.ok(log.logStartOffset >= start && log.logStartOffset <= end);
            if (log.logStartOffset !== start) assert.equal(log.logStartOffset, log.segments[0]!.baseOffset, 'retention moves the start to a segment boundary');
            start = log.logStartOffset;
          } else if (op.kind === 'compact') {
            const activeBase = log.activeSegment.baseOffset;
            const unified = await UnifiedLog.open(log);
            await new LogCleaner(() => [unified], silentLogger, Date.now).cleanLog(unified);
            const after = await readAll(log);
            const latest = new Map<string, number>();
            for (const [o, v] of [...model.entries()].sort((a, b) => a[0] - b[0])) if (o >= start) latest.set(keyOf(v), o);
            for (const r of after) assert.equal(r.value, model.get(r.offset), 'compaction keeps content at its offset');
            for (const o of latest.values())
              assert.ok(
                after.some((r) => r.offset === o),
                `latest record ${o} kept`,
              );
            for (const [o] of model)
              if (o >= activeBase && o >= start)
                assert.ok(
                  after.some((r) => r.offset === o),
                  'active segment untouched',
                );
            // The compacted log is the new truth for the model.
            const kept = new Set(after.map((r) => r.offset));
            for (const o of [...model.keys()]) if (o >= start && !kept.has(o)) model.delete(o);
          } else if (op.kind === 'reopen') {
            await log.close();
            log = await openLog(dir, cfg, { hadCleanShutdown: op.clean, recoveryPoint: op.clean ? end : 0, logStartOffset: start });
          }
          assert.equal(log.logStartOffset, start);
          assert.equal(log.logEndOffset, end);
        }
        const all = (await readAll(log)).filter((r) => r.offset >= start);
        assert.deepEqual(
          all.map((r) => [r.offset, r.value]),
          [...model.entries()].filter(([o]) => o >= start).sort((a, b) => a[0] - b[0]),
        );
        await log.close();
      });
    }),
    { numRuns: 100 },
  );
});
