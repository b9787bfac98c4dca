/**
 * The text output of kafka-dump-log (Kafka's DumpLogSegments) for .log, .index, .timeindex and .txnindex
 * files. Pure formatting over the same readers the broker uses.
 */
import { TransactionIndex } from '../segment/transaction-index.js';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { BATCH_LENGTH, CompressionType, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD } from '../../protocol/records/batch-header.js';
import { TimestampType, decodeBatch, readBatchHeaderInfo, recordTimestamp, type RecordBatch } from '../../protocol/records/batch.js';
import { RecordsError } from '../../protocol/records/errors.js';
import { readDecompressionCap } from '../../protocol/records/read-limits.js';
import { decodeControlRecordKey, endTxnMarkerOf } from '../../protocol/records/control.js';
import { MIN_BATCH_LENGTH } from '../segment/batch-scan.js';
import { baseOffsetOfFileName } from '../segment/segment-names.js';
import { decodeOffsetsRecord, decodeTransactionLogRecord } from './offsets-decoder.js';

export interface DumpOptions {
  printDataLog: boolean;
  indexSanityCheck: boolean;
  offsetsDecoder: boolean;
  /** Decode __transaction_state records (Kafka's --transaction-log-decoder). */
  transactionLogDecoder?: boolean;
  /** Cap on one batch's inflated records; default readDecompressionCap() (32 MiB). */
  maxDecompressedBytes?: number;
}

/** What a dump found wrong that did not stop it. */
export interface DumpSummary {
  /** Batches whose records could not be decoded (corrupt, or inflating past the cap). */
  undecodableBatches: number;
}

export class DumpError extends Error {}

const CODEC_NAMES: Record<number, string> = {
  [CompressionType.None]: 'none',
  [CompressionType.Gzip]: 'gzip',
  [CompressionType.Snappy]: 'snappy',
  [CompressionType.Lz4]: 'lz4',
  [CompressionType.Zstd]: 'zstd',
};

type BatchHeader = Omit<RecordBatch, 'records'> & { count: number };

function lastSequence(batch: BatchHeader): number {
  if (batch.baseSequence < 0) return -1;
  return (batch.baseSequence + batch.lastOffsetDelta) % 2 ** 31;
}

function timestampLabel(batch: Pick<RecordBatch, 'timestampType'>): string {
  return batch.timestampType === TimestampType.LogAppendTime ? 'LogAppendTime' : 'CreateTime';
}

function batchLine(batch: BatchHeader, position: number, valid: boolean): string {
  const base = Number(batch.baseOffset);
  return [
    `baseOffset: ${base} lastOffset: ${base + batch.lastOffsetDelta} count: ${batch.count}`,
    `baseSequence: ${batch.baseSequence} lastSequence: ${lastSequence(batch)} producerId: ${batch.producerId}`,
    `producerEpoch: ${batch.producerEpoch} partitionLeaderEpoch: ${batch.partitionLeaderEpoch}`,
    `isTransactional: ${batch.isTransactional} isControl: ${batch.isControl}`,
    `deleteHorizonMs: ${batch.hasDeleteHorizon ? `OptionalLong[${batch.baseTimestamp}]` : 'OptionalLong.empty'}`,
    `position: ${position} ${timestampLabel(batch)}: ${batch.maxTimestamp} size: ${batch.sizeInBytes}`,
    `magic: 2 compresscodec: ${CODEC_NAMES[batch.compression] ?? 'unknown'} crc: ${batch.crc} isvalid: ${valid}`,
  ].join(' ');
}

function recordLines(batch: RecordBatch, opts: DumpOptions): string[] {
  const lines: string[] = [];
  for (const r of batch.records) {
    const offset = Number(batch.baseOffset) + r.offsetDelta;
    const seq = batch.baseSequence < 0 ? -1 : batch.baseSequence + r.offsetDelta;
    let line =
      `| offset: ${offset} ${timestampLabel(batch)}: ${recordTimestamp(batch, r)} keySize: ${r.key?.length ?? -1} ` +
      `valueSize: ${r.value?.length ?? -1} sequence: ${seq} headerKeys: [${r.headers.map((h) => h.key).join(',')}]`;
    if (batch.isControl) {
      try {
        const type = decodeControlRecordKey(r.key).type;
        const marker = endTxnMarkerOf(batch);
        line += marker ? ` endTxnMarker: ${type === 0 ? 'ABORT' : 'COMMIT'} coordinatorEpoch: ${marker.coordinatorEpoch}` : ` controlType: ${type}`;
      } catch {
        line += ' controlType: unknown';
      }
    } else if (opts.offsetsDecoder || opts.transactionLogDecoder) {
      const decoded = opts.offsetsDecoder ? decodeOffsetsRecord(r.key, r.value) : decodeTransactionLogRecord(r.key, r.value);
      line += ` key: ${decoded.key} payload: ${decoded.payload}`;
    } else if (opts.printDataLog) {
      if (r.key !== null) line += ` key: ${r.key.toString('utf8')}`;
      line += ` payload: ${r.value === null ? 'null' : r.value.toString('utf8')}`;
    }
    lines.push(line);
  }
  return lines;
}

async function dumpLog(file: string, opts: DumpOptions, out: (line: string) => void): Promise<DumpSummary> {
  const data = await readFile(file);
  const summary: DumpSummary = { undecodableBatches: 0 };
  const maxBytes = opts.maxDecompressedBytes ?? readDecompressionCap();
  out(`Log starting offset: ${baseOffsetOfFileName(path.basename(file)) ?? 0}`);
  let pos = 0;
  while (pos + RECORD_BATCH_OVERHEAD <= data.length) {
    const length = data.readInt32BE(pos + BATCH_LENGTH);
    const size = length + LOG_OVERHEAD;
    if (length < MIN_BATCH_LENGTH || pos + size > data.length) break;
    let batch: RecordBatch | undefined;
    let valid = true;
    let failure: RecordsError | undefined;
    try {
      batch = decodeBatch(data, pos, { maxBytes });
    } catch (err) {
      if (!(err instanceof RecordsError)) throw err;
      valid = err.reason !== 'crc_mismatch';
      try {
        batch = decodeBatch(data, pos, { verifyCrc: false, maxBytes });
      } catch (err2) {
        if (!(err2 instanceof RecordsError)) throw err2;
        failure = err2;
      }
    }
    if (batch) {
      out(batchLine({ ...batch, count: batch.records.length }, pos, valid));
      if (opts.printDataLog || opts.offsetsDecoder || opts.transactionLogDecoder) for (const l of recordLines(batch, opts)) out(l);
    } else {
      // The header is readable and says where the next batch starts: report this one, go on.
      summary.undecodableBatches++;
      out(`${batchLine(readBatchHeaderInfo(data, pos), pos, valid)} | records not decoded: ${failure?.message ?? 'unknown error'}`);
    }
    pos += size;
  }
  if (pos < data.length) out(`Found ${data.length - pos} invalid bytes at the end of ${path.basename(file)}`);
  // Invalid bytes after valid batches are a torn tail, as after a crash; a non-empty file with no
  // batch at all is not a log segment.
  if (pos === 0 && data.length > 0) throw new DumpError(`${file} is not a log segment: no record batch could be read from it`);
  return summary;
}

async function dumpIndex(file: string, entrySize: 8 | 12, opts: DumpOptions, out: (line: string) => void): Promise<void> {
  const data = await readFile(file);
  const base = baseOffsetOfFileName(path.basename(file)) ?? 0;
  const problems: string[] = [];
  if (data.length % entrySize !== 0) problems.push(`Index file ${path.basename(file)} has size ${data.length}, not a multiple of ${entrySize}`);
  let prevKey = -Infinity;
  for (let i = 0; i + entrySize <= data.length; i += entrySize) {
    if (entrySize === 8) {
      const offset = base + data.readInt32BE(i);
      const position = data.readInt32BE(i + 4);
      if (!opts.indexSanityCheck) out(`offset: ${offset} position: ${position}`);
      if (offset <= prevKey) problems.push(`entry ${i / 8} offset ${offset} is not larger than the previous one`);
      prevKey = offset;
    } else {
      const ts = Number(data.readBigInt64BE(i));
      const offset = base + data.readInt32BE(i + 8);
      if (!opts.indexSanityCheck) out(`timestamp: ${ts} offset: ${offset}`);
      if (ts <= prevKey) problems.push(`entry ${i / 12} timestamp ${ts} is not larger than the previous one`);
      prevKey = ts;
    }
  }
  if (opts.indexSanityCheck) {
    if (problems.length === 0) out(`${file} passed sanity check.`);
    else for (const p of problems) out(`Found an error in ${file}: ${p}`);
  }
}

export async function dumpFile(file: string, opts: DumpOptions, out: (line: string) => void): Promise<DumpSummary> {
  let isFile = false;
  try {
    isFile = (await stat(file)).isFile();
  } catch {
    throw new DumpError(`File ${file} does not exist or cannot be read`);
  }
  if (!isFile) throw new DumpError(`${file} is not a regular file`);
  // A file the tool cannot read as a segment or index is an error (Kafka's tool says "Ignoring
  // unknown file" and exits 0, which hides a wrong path from a script).
  if (!/\.(log|index|timeindex|txnindex)$/.test(file)) {
    throw new DumpError(`${file} is not a log segment (.log), offset index (.index), time index (.timeindex) or transaction index (.txnindex) file`);
  }
  out(`Dumping ${file}`);
  if (file.endsWith('.log')) return dumpLog(file, opts, out);
  if (file.endsWith('.txnindex')) {
    await dumpTxnIndex(file, out);
    return { undecodableBatches: 0 };
  }
  if (file.endsWith('.index')) await dumpIndex(file, 8, opts, out);
  else await dumpIndex(file, 12, opts, out);
  return { undecodableBatches: 0 };
}

/** A .txnindex, one line per aborted transaction as Kafka's DumpLogSegments prints it. */
async function dumpTxnIndex(file: string, out: (line: string) => void): Promise<void> {
  const idx = new TransactionIndex(file, 0);
  try {
    await idx.load();
  } catch (err) {
    throw new DumpError(err instanceof Error ? err.message : String(err));
  }
  for (const t of idx.all()) {
    out(`version: 0 producerId: ${t.producerId} firstOffset: ${t.firstOffset} lastOffset: ${t.lastOffset} lastStableOffset: ${t.lastStableOffset}`);
  }
}
