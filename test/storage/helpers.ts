/** Test helpers: batch building via the records module, temp dirs, reading a log back. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CompressionType } from '../../src/protocol/records/batch-header.js';
import { decodeBatch, encodeBatch, iterateBatches, recordTimestamp } from '../../src/protocol/records/index.js';
import { defaultLogConfig, type LogConfig } from '../../src/storage/config.js';
import { LocalLog } from '../../src/storage/log/local-log.js';
import type { UnifiedLog } from '../../src/storage/log/unified-log.js';
import type { StorageLogger } from '../../src/storage/logger.js';

export interface TestRecord {
  key?: string | null;
  value: string | null;
  timestamp?: number;
}

export function makeBatch(records: (TestRecord | string)[], opts: { compression?: CompressionType; baseOffset?: number; timestamp?: number } = {}): Buffer {
  const recs = records.map((r) => (typeof r === 'string' ? { value: r } : r));
  const baseTs = recs[0]?.timestamp ?? opts.timestamp ?? 1700000000000;
  return encodeBatch({
    baseOffset: BigInt(opts.baseOffset ?? 0),
    baseTimestamp: BigInt(baseTs),
    compression: opts.compression ?? CompressionType.None,
    records: recs.map((r, i) => ({
      attributes: 0,
      timestampDelta: (r.timestamp ?? baseTs) - baseTs,
      offsetDelta: i,
      key: r.key === undefined || r.key === null ? null : Buffer.from(r.key),
      value: r.value === null ? null : Buffer.from(r.value),
      headers: [],
    })),
  });
}

export interface ReadBack {
  offset: number;
  key: string | null;
  value: string | null;
  timestamp: number;
}

export function decodeAll(buf: Buffer): ReadBack[] {
  const out: ReadBack[] = [];
  for (const e of iterateBatches(buf)) {
    const b = decodeBatch(e.buf, e.start, { maxBytes: 1 << 30 });
    for (const r of b.records) {
      out.push({
        offset: Number(b.baseOffset) + r.offsetDelta,
        key: r.key === null ? null : r.key.toString(),
        value: r.value === null ? null : r.value.toString(),
        timestamp: Number(recordTimestamp(b, r)),
      });
    }
  }
  return out;
}

/** Every record from `from` to the end, following batches across segments. */
export async function readAll(log: LocalLog | UnifiedLog, from = log.logStartOffset): Promise<ReadBack[]> {
  const out: ReadBack[] = [];
  let next = from;
  while (next < log.logEndOffset) {
    const { records } = await log.read(next, 1 << 20);
    const decoded = decodeAll(records).filter((r) => r.offset >= next);
    if (records.length === 0) break;
    out.push(...decoded);
    let last = next - 1;
    for (const e of iterateBatches(records)) last = Number(records.readBigInt64BE(e.start)) + records.readInt32BE(e.start + 23);
    next = last + 1;
  }
  return out;
}

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-storage-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export class CapturingLogger implements StorageLogger {
  lines: string[] = [];
  info(msg: string): void {
    this.lines.push(`INFO ${msg}`);
  }
  warn(msg: string): void {
    this.lines.push(`WARN ${msg}`);
  }
  error(msg: string): void {
    this.lines.push(`ERROR ${msg}`);
  }
}

export function testConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return { ...defaultLogConfig(), fileDeleteDelayMs: 0, ...overrides };
}

export async function openLog(
  dir: string,
  overrides: Partial<LogConfig> = {},
  extra: { recoveryPoint?: number; hadCleanShutdown?: boolean; logStartOffset?: number; logger?: StorageLogger } = {},
): Promise<LocalLog> {
  return LocalLog.open({
    dir: path.join(dir, 'topic-0'),
    topic: 'topic',
    partition: 0,
    config: testConfig(overrides),
    logger: extra.logger ?? new CapturingLogger(),
    ...extra,
  });
}
