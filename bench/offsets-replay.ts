/**
 * Loading a `__consumer_offsets` partition: 1,000,000 OffsetCommit records (10,000 groups ×
 * 100 partitions, v3 values) written to a real storage Log in 1,000-record batches, then
 * replayed through the group coordinator's runtime exactly as at broker start-up (read the log,
 * decode batches and Kafka records, GroupShard.replay). Target: under 5 s.
 * Run: node --import tsx bench/offsets-replay.ts [records, default 1000000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodeBatch } from '../src/protocol/records/batch.js';
import { defaultLogConfig } from '../src/storage/config.js';
import { LocalLog } from '../src/storage/log/local-log.js';
import { silentLogger } from '../src/storage/logger.js';
import { CoordinatorRuntime } from '../src/coordinator/runtime/runtime.js';
import { replayLog } from '../src/coordinator/runtime/partition-log.js';
import { GroupShard } from '../src/coordinator/group/group-shard.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from '../src/coordinator/group/records.js';

const total = Number(process.argv[2] ?? '1000000');
const dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-offsets-replay-'));
try {
  const log = await LocalLog.open({
    dir,
    topic: '__consumer_offsets',
    partition: 0,
    config: { ...defaultLogConfig(), cleanupPolicy: ['compact'] },
    logger: silentLogger,
  });
  const now = Date.now();
  const tw = process.hrtime.bigint();
  for (let base = 0; base < total; base += 1000) {
    const records = [];
    for (let i = 0; i < Math.min(1000, total - base); i++) {
      const n = base + i;
      const enc = encodeRecord({
        type: 'offset',
        group: `group-${n % 10_000}`,
        topic: 'orders',
        partition: Math.floor(n / 10_000) % 100,
        value: { offset: BigInt(n), leaderEpoch: 0, metadata: '', commitTimestamp: BigInt(now), expireTimestamp: -1n },
      });
      records.push({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: enc.key, value: enc.value, headers: [] });
    }
    await log.append(encodeBatch({ records, baseTimestamp: BigInt(now) }), { leaderEpoch: 0 });
  }
  const writeSecs = Number(process.hrtime.bigint() - tw) / 1e9;

  let shard: GroupShard | undefined;
  const runtime = new CoordinatorRuntime<GroupShard, CoordinatorRecord>({
    log: {
      append: async () => undefined,
      replay: (_p, on) =>
        replayLog(
          {
            logStartOffset: log.logStartOffset,
            logEndOffset: log.logEndOffset,
            read: (o, m, min, upTo) => log.read(o, m, { maxOffset: upTo, minOneBatch: min }),
          },
          on,
        ),
    },
    serde: { encode: encodeRecord, decode: decodeRecord },
    newShard: (ctx) =>
      (shard = new GroupShard(ctx, {
        minSessionTimeoutMs: 6000,
        maxSessionTimeoutMs: 1_800_000,
        initialRebalanceDelayMs: 0,
        maxGroupSize: 1000,
        offsetMetadataMaxBytes: 4096,
        offsetsRetentionMs: 7 * 24 * 3600_000,
        offsetsRetentionCheckIntervalMs: 600_000,
      })),
  });
  const t0 = process.hrtime.bigint();
  await runtime.load(0);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const kept = shard!.offsets.count();
  runtime.close();
  await log.close();
  console.log(`wrote ${total} records (${(log.size / 1024 / 1024).toFixed(1)} MiB) in ${writeSecs.toFixed(2)} s`);
  console.log(
    `replayed ${total} offset records in ${secs.toFixed(2)} s (${Math.round(total / secs)} rec/s); ${kept} offsets in memory; target < 5 s: ${secs < 5 ? 'met' : 'MISSED'}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
