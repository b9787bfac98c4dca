import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RecordsError } from '../../../src/protocol/records/errors.js';
import { decodeRecordsSection, encodeRecords } from '../../../src/protocol/records/record.js';
import { WalkResult, walkRecordsSection } from '../../../src/protocol/records/record-walk.js';
import { records } from './arbitraries.js';

test('the allocation-free walk accepts every well-formed section', () => {
  fc.assert(
    fc.property(records, (rs) => {
      const section = encodeRecords(rs);
      assert.equal(walkRecordsSection(section, 0, section.length, rs.length, true), WalkResult.Ok);
      assert.equal(walkRecordsSection(section, 0, section.length, rs.length + 1, false), WalkResult.CountMismatch);
      if (rs.length > 1) assert.equal(walkRecordsSection(section, 0, section.length, rs.length - 1, false), WalkResult.CountMismatch);
    }),
  );
});

test('the walk agrees with the full decoder on mutated sections and never throws', () => {
  fc.assert(
    fc.property(records, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }), (rs, edits) => {
      const section = encodeRecords(rs);
      for (const [where, byte] of edits) section[where % section.length] = byte;
      const walked = walkRecordsSection(section, 0, section.length, rs.length, false);
      let decoded = true;
      try {
        decodeRecordsSection(section, rs.length);
      } catch (err) {
        assert.ok(err instanceof RecordsError);
        decoded = false;
        // The only thing the walk does not check is a timestamp delta beyond ±2^52.
        if (walked === WalkResult.Ok) assert.match(err.message, /safe integer/);
      }
      if (decoded) assert.equal(walked, WalkResult.Ok);
    }),
    { numRuns: 2000 },
  );
});

test('offset deltas are checked only when asked', () => {
  const rs = [0, 5].map((d) => ({ attributes: 0, timestampDelta: 0, offsetDelta: d, key: null, value: null, headers: [] }));
  const section = encodeRecords(rs);
  assert.equal(walkRecordsSection(section, 0, section.length, 2, false), WalkResult.Ok);
  assert.equal(walkRecordsSection(section, 0, section.length, 2, true), WalkResult.OffsetMismatch);
});
