/**
 * Producer state snapshots: `<offset>.snapshot` files in the partition directory (offset = the
 * log end offset the state is valid at, 20 digits like segment files). On open, the newest
 * snapshot not beyond the log end is loaded and the batches after it are replayed.
 *
 * Binary layout (big-endian): "FJPS" u8 version=2, i32 producerCount, per producer:
 * i64 id, i16 epoch, i64 lastTimestamp, i64 currentTxnFirstOffset (-1: none), i32
 * coordinatorEpoch, u8 batchCount, per batch: i32 firstSeq, i32 lastSeq, i64 firstOffset,
 * i64 lastOffset, i64 timestamp; then a crc32c of everything before it. Version 1 (before
 * transactions) has no currentTxnFirstOffset/coordinatorEpoch and is still read.
 */
import { readdir, unlink } from 'node:fs/promises';
import { readWholeFile } from '../../checkpoint/whole-file.js';
import path from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { writeFileAtomically } from '../../checkpoint/atomic-file.js';
import { ProducerStateMap, newProducerEntry } from './producer-state.js';

export const SNAPSHOT_SUFFIX = '.snapshot';
const MAGIC = Buffer.from('FJPS');
const BATCH_BYTES = 4 + 4 + 8 + 8 + 8;
/** How many snapshots are kept per partition (older ones are deleted after a new one lands). */
const KEEP = 2;

export function snapshotFileName(offset: number): string {
  return `${String(offset).padStart(20, '0')}${SNAPSHOT_SUFFIX}`;
}

export function encodeSnapshot(state: ProducerStateMap): Buffer {
  let size = MAGIC.length + 1 + 4;
  for (const e of state.producers.values()) size += 8 + 2 + 8 + 8 + 4 + 1 + e.batches.length * BATCH_BYTES;
  const buf = Buffer.alloc(size + 4);
  let p = MAGIC.copy(buf, 0);
  p = buf.writeUInt8(2, p);
  p = buf.writeInt32BE(state.producers.size, p);
  for (const e of state.producers.values()) {
    p = buf.writeBigInt64BE(e.producerId, p);
    p = buf.writeInt16BE(e.epoch, p);
    p = buf.writeBigInt64BE(BigInt(e.lastTimestamp), p);
    p = buf.writeBigInt64BE(BigInt(e.currentTxnFirstOffset), p);
    p = buf.writeInt32BE(e.coordinatorEpoch, p);
    p = buf.writeUInt8(e.batches.length, p);
    for (const b of e.batches) {
      p = buf.writeInt32BE(b.firstSeq, p);
      p = buf.writeInt32BE(b.lastSeq, p);
      p = buf.writeBigInt64BE(BigInt(b.firstOffset), p);
      p = buf.writeBigInt64BE(BigInt(b.lastOffset), p);
      p = buf.writeBigInt64BE(BigInt(b.timestamp), p);
    }
  }
  buf.writeUInt32BE(crc32c(buf.subarray(0, p)), p);
  return buf;
}

export function decodeSnapshot(buf: Buffer): ProducerStateMap {
  if (buf.length < MAGIC.length + 9 || !buf.subarray(0, 4).equals(MAGIC)) throw new Error('not a producer state snapshot');
  const body = buf.subarray(0, buf.length - 4);
  if (crc32c(body) !== buf.readUInt32BE(buf.length - 4)) throw new Error('producer state snapshot fails its CRC check');
  const version = buf.readUInt8(4);
  if (version !== 1 && version !== 2) throw new Error(`unsupported snapshot version ${version}`);
  const state = new ProducerStateMap();
  let p = 5;
  const count = buf.readInt32BE(p);
  p += 4;
  for (let i = 0; i < count; i++) {
    const producerId = buf.readBigInt64BE(p);
    const epoch = buf.readInt16BE(p + 8);
    const entry = newProducerEntry(producerId, epoch, Number(buf.readBigInt64BE(p + 10)));
    p += 18;
    if (version >= 2) {
      entry.currentTxnFirstOffset = Number(buf.readBigInt64BE(p));
      entry.coordinatorEpoch = buf.readInt32BE(p + 8);
      p += 12;
    }
    const n = buf.readUInt8(p);
    p += 1;
    const batches = [];
    for (let j = 0; j < n; j++) {
      batches.push({
        firstSeq: buf.readInt32BE(p),
        lastSeq: buf.readInt32BE(p + 4),
        firstOffset: Number(buf.readBigInt64BE(p + 8)),
        lastOffset: Number(buf.readBigInt64BE(p + 16)),
        timestamp: Number(buf.readBigInt64BE(p + 24)),
      });
      p += BATCH_BYTES;
    }
    entry.batches = batches;
    state.restore(entry);
  }
  return state;
}

async function snapshotOffsets(dir: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith(SNAPSHOT_SUFFIX) && /^\d{20}\.snapshot$/.test(n))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b);
}

export async function writeSnapshot(dir: string, offset: number, state: ProducerStateMap): Promise<void> {
  await writeFileAtomically(path.join(dir, snapshotFileName(offset)), encodeSnapshot(state));
  const offsets = await snapshotOffsets(dir);
  for (const old of offsets.slice(0, Math.max(0, offsets.length - KEEP))) {
    await unlink(path.join(dir, snapshotFileName(old))).catch(() => undefined);
  }
}

/**
 * Loads the newest readable snapshot at or below `logEndOffset`, deleting any beyond it (they
 * describe data that no longer exists). Returns the state and the offset to replay from.
 */
export async function loadLatestSnapshot(
  dir: string,
  logEndOffset: number,
  onProblem: (msg: string) => void,
): Promise<{ state: ProducerStateMap; offset: number } | undefined> {
  const offsets = await snapshotOffsets(dir);
  for (const o of offsets.filter((x) => x > logEndOffset)) await unlink(path.join(dir, snapshotFileName(o))).catch(() => undefined);
  for (const o of offsets.filter((x) => x <= logEndOffset).reverse()) {
    try {
      return { state: decodeSnapshot(await readWholeFile(path.join(dir, snapshotFileName(o)))), offset: o };
    } catch (err) {
      onProblem(`ignoring producer snapshot ${snapshotFileName(o)} in ${dir}: ${(err as Error).message}`);
    }
  }
  return undefined;
}
