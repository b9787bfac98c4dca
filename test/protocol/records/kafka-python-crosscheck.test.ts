/**
 * Cross-check against kafka-python's pure-Python record implementation (v2 batches and legacy
 * magic 0/1 message sets; it only has gzip here, as python-snappy/lz4/zstandard are absent).
 * Peer: /usr/bin/python3 with the `kafka` package. Skipped when missing, failing under CI=true.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { CompressionType } from '../../../src/protocol/records/batch-header.js';
import { decodeBatch, encodeBatch, recordTimestamp } from '../../../src/protocol/records/batch.js';
import { type LegacyMagic, encodeLegacyMessageSet, readLegacyMessageSet } from '../../../src/protocol/records/legacy.js';
import { records } from './arbitraries.js';

const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import sys, json
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords
h = lambda s: None if s is None else bytes.fromhex(s)
x = lambda b: None if b is None else bytes(b).hex()
req = json.load(sys.stdin)
if req['action'] == 'build':
    m = req['magic']
    if m == 2:
        b = DefaultRecordBatchBuilder(2, req['compression'], 0, -1, -1, -1, 1 << 30)
    else:
        b = LegacyRecordBatchBuilder(m, req['compression'], 1 << 30)
    for r in req['records']:
        hs = [(k, h(v)) for k, v in r['headers']]
        if m == 2:
            b.append(r['offset'], r['timestamp'], h(r['key']), h(r['value']), hs)
        else:
            b.append(r['offset'], r['timestamp'], h(r['key']), h(r['value']))
    print(json.dumps({'hex': bytes(b.build()).hex()}))
else:
    mr = MemoryRecords(bytes.fromhex(req['hex']))
    out = []
    while mr.has_next():
        batch = mr.next_batch()
        out.append({'crc_ok': batch.validate_crc(), 'records': [
            {'offset': r.offset, 'timestamp': r.timestamp, 'key': x(r.key), 'value': x(r.value),
             'headers': [[k, x(v)] for k, v in (getattr(r, 'headers', None) or [])]} for r in batch]})
    print(json.dumps(out))
`;

interface PyRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
}

function havePeer(): boolean {
  return spawnSync(PYTHON, ['-c', 'import kafka.record.default_records']).status === 0;
}

function python<T>(request: object): T {
  const run = spawnSync(PYTHON, ['-c', SCRIPT], { input: JSON.stringify(request), maxBuffer: 64 << 20 });
  assert.equal(run.status, 0, run.stderr.toString());
  return JSON.parse(run.stdout.toString()) as T;
}

const hex = (b: Buffer | null): string | null => (b === null ? null : b.toString('hex'));
const codecs = fc.constantFrom(CompressionType.None, CompressionType.Gzip);

function peerOrSkip(t: { skip(msg: string): void }): boolean {
  if (havePeer()) return true;
  assert.notEqual(process.env.CI, 'true', 'kafka-python (/usr/bin/python3 -m kafka) is required under CI');
  t.skip('kafka-python not available');
  return false;
}

test('kafka-python reads our v2 batches (CRC valid, same records)', (t) => {
  if (!peerOrSkip(t)) return;
  fc.assert(
    fc.property(records, codecs, (rs, compression) => {
      const buf = encodeBatch({ records: rs, compression, baseOffset: 10n, baseTimestamp: 1_600_000_000_000n });
      const [batch] = python<{ crc_ok: boolean; records: PyRecord[] }[]>({ action: 'read', hex: buf.toString('hex') });
      assert.ok(batch);
      assert.equal(batch.crc_ok, true);
      assert.deepEqual(
        batch.records,
        rs.map((r) => ({
          offset: 10 + r.offsetDelta,
          timestamp: 1_600_000_000_000 + r.timestampDelta,
          key: hex(r.key),
          value: hex(r.value),
          headers: r.headers.map((hd) => [hd.key, hex(hd.value)]),
        })),
      );
    }),
    { numRuns: 10 },
  );
});

test('we read kafka-python v2 batches', (t) => {
  if (!peerOrSkip(t)) return;
  fc.assert(
    fc.property(records, codecs, (rs, compression) => {
      const input = rs.map((r) => ({
        offset: r.offsetDelta,
        timestamp: 1_600_000_000_000 + r.timestampDelta + 1_000_000,
        key: hex(r.key),
        value: hex(r.value),
        headers: r.headers.map((hd) => [hd.key, hex(hd.value)]),
      }));
      const { hex: out } = python<{ hex: string }>({ action: 'build', magic: 2, compression, records: input });
      const b = decodeBatch(Buffer.from(out, 'hex'), 0, { maxBytes: 1 << 30 });
      // kafka-python keeps a batch uncompressed when compressing would not shrink it.
      assert.ok(b.compression === compression || b.compression === CompressionType.None);
      assert.deepEqual(
        b.records.map((r) => ({
          offset: Number(b.baseOffset) + r.offsetDelta,
          timestamp: Number(recordTimestamp(b, r)),
          key: hex(r.key),
          value: hex(r.value),
          headers: r.headers.map((hd) => [hd.key, hex(hd.value)]),
        })),
        input,
      );
    }),
    { numRuns: 10 },
  );
});

test('legacy magic 0/1 message sets agree with kafka-python both ways', (t) => {
  if (!peerOrSkip(t)) return;
  fc.assert(
    fc.property(records, codecs, fc.constantFrom<LegacyMagic>(0, 1), (rs, compression, magic) => {
      const ms = rs.map((r, i) => ({ offset: BigInt(i), timestamp: BigInt(1_600_000_000_000 + Math.abs(r.timestampDelta)), key: r.key, value: r.value }));
      const expected = ms.map((m) => ({
        offset: Number(m.offset),
        timestamp: magic === 1 ? Number(m.timestamp) : -1,
        key: hex(m.key),
        value: hex(m.value),
        headers: [],
      }));

      const ours = encodeLegacyMessageSet({ magic, messages: ms, compression });
      const read = python<{ crc_ok: boolean; records: PyRecord[] }[]>({ action: 'read', hex: ours.toString('hex') });
      assert.ok(read.every((b) => b.crc_ok));
      // kafka-python reports -1 timestamps for magic 0 as None
      assert.deepEqual(
        read.flatMap((b) => b.records).map((r) => ({ ...r, timestamp: r.timestamp ?? -1 })),
        expected,
      );

      const { hex: theirs } = python<{ hex: string }>({
        action: 'build',
        magic,
        compression,
        records: ms.map((m) => ({
          offset: Number(m.offset),
          timestamp: magic === 1 ? Number(m.timestamp) : null,
          key: hex(m.key),
          value: hex(m.value),
          headers: [],
        })),
      });
      const back = readLegacyMessageSet(Buffer.from(theirs, 'hex'));
      assert.ok(back.compression === compression || back.compression === CompressionType.None);
      assert.deepEqual(
        back.messages.map((m) => ({ offset: Number(m.offset), timestamp: Number(m.timestamp), key: hex(m.key), value: hex(m.value), headers: [] })),
        expected,
      );
    }),
    { numRuns: 10 },
  );
});
