/**
 * The error-code walks generated per response schema (src/server/metrics/response-error-walks.gen.ts,
 * by tools/codegen/error-walks.ts) count exactly what the generic walk counted: for every API's
 * response, a value with every field, array and struct filled, and fast-check values of the
 * response at every version of the schema. The committed file is what the generator writes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { ERROR_WALKS_PATH, errorWalksText } from '../../../tools/codegen/error-walks.js';
import { SCHEMA_PATH, parseSchema } from '../../../tools/codegen/schema.js';
import type { FieldModel, MessageModel, StructModel } from '../../../tools/codegen/spec.js';
import { structArb, structsOf } from '../../protocol/spec-arbitraries.js';
import { ERROR_SLOTS, RequestStats } from '../../../src/server/metrics/request-stats.js';
import { RESPONSE_ERROR_WALKS } from '../../../src/server/metrics/response-error-walks.gen.js';
import { countErrorCodesGeneric } from './request-error-walk-generic.js';

const root = resolve(import.meta.dirname, '../../..');
const responses = parseSchema(readFileSync(resolve(root, SCHEMA_PATH), 'utf8')).filter((m) => m.type === 'response' && m.apiKey !== undefined);

/** Error counts of one API as RequestStats keeps them (index code + 1), through the generated walk. */
function generated(apiKey: number, value: object): number[] {
  const stats = new RequestStats();
  stats.countErrors(apiKey, value);
  return [...stats.errors.subarray(apiKey * ERROR_SLOTS, (apiKey + 1) * ERROR_SLOTS)];
}

function generic(value: object): number[] {
  const errors = new Float64Array(ERROR_SLOTS);
  countErrorCodesGeneric(errors, 0, value);
  return [...errors];
}

/** A value of `s` with every field present, arrays of two, and each errorCode the next code of `codes`. */
function full(s: StructModel, structs: Map<string, StructModel>, next: () => number, depth = 0): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of s.fields) o[f.name] = fieldValue(f, structs, next, depth);
  return o;
}

function fieldValue(f: FieldModel, structs: Map<string, StructModel>, next: () => number, depth: number): unknown {
  if (f.struct !== undefined) {
    const make = (): Record<string, unknown> => full(structs.get(f.struct!)!, structs, next, depth + 1);
    return f.kind === 'array' ? [make(), make()] : make();
  }
  if (f.kind === 'array') return [];
  if (f.name === 'errorCode') return next();
  if (f.primitive === 'int64') return 7n;
  if (f.primitive === 'string') return 'x';
  if (f.primitive === 'bytes' || f.primitive === 'records') return Buffer.alloc(3);
  if (f.primitive === 'bool') return true;
  return 3; // a number that is not an errorCode field: never counted
}

test('the committed walks are what tools/codegen/error-walks.ts generates from the schema', () => {
  assert.equal(readFileSync(resolve(root, ERROR_WALKS_PATH), 'utf8'), errorWalksText());
});

test("every API's response, every field filled: the generated walk counts the generic walk's codes", () => {
  assert.ok(responses.length > 80, `${responses.length} responses in the schema`);
  let withCodes = 0;
  for (const m of responses) {
    let code = -1;
    // Codes -1 .. ERROR_SLOTS - 1: the last one is past what is counted, by both walks.
    const next = (): number => (code = code >= ERROR_SLOTS - 1 ? -1 : code + 1);
    const value = full(m.root, structsOf(m), next);
    const want = generic(value);
    assert.deepEqual(generated(m.apiKey!, value), want, `${m.name} (API ${m.apiKey})`);
    const counted = want.reduce((a, n) => a + n, 0);
    assert.equal(counted > 0, RESPONSE_ERROR_WALKS[m.apiKey!] !== undefined, `${m.name}: a walk exactly where the schema has an errorCode`);
    if (counted > 0) withCodes++;
  }
  assert.ok(withCodes > 75, `${withCodes} responses carry error codes`);
});

/** Brings each errorCode of a generated value into -1 .. ERROR_SLOTS - 1 (the last one is not counted), so codes are counted. */
function codesInRange(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(codesInRange);
  if (typeof v !== 'object' || v === null || Buffer.isBuffer(v)) return v;
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v))
    o[k] = k === 'errorCode' && typeof x === 'number' ? (((x % (ERROR_SLOTS + 1)) + ERROR_SLOTS + 1) % (ERROR_SLOTS + 1)) - 1 : codesInRange(x);
  return o;
}

test('fast-check responses of every API at every version: the generated walk counts the generic walk (property)', () => {
  let versions = 0;
  for (const m of responses as MessageModel[]) {
    const structs = structsOf(m);
    for (let v = m.valid.min; v <= m.valid.max; v++) {
      fc.assert(
        fc.property(structArb(m.root, structs, m, v), (raw) => {
          const value = codesInRange(raw) as object;
          assert.deepEqual(generated(m.apiKey!, value), generic(value), `${m.name} v${v}`);
        }),
        { numRuns: 20 },
      );
      versions++;
    }
  }
  assert.ok(versions > 300, `${versions} response versions`);
});

test('partial responses (fields a handler left out, null arrays) are walked without failing', () => {
  assert.deepEqual(generated(1, {}), generic({}));
  const fetch = { errorCode: 0, responses: [{ topic: 't', partitions: null }, { partitions: [{ errorCode: 3 }, null] }] };
  assert.deepEqual(generated(1, fetch), generic(fetch));
  assert.equal(generated(1, fetch)[0 + 1], 1);
  assert.equal(generated(1, fetch)[3 + 1], 1);
});
