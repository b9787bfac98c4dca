import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { parseSchema, SCHEMA_PATH } from '../../tools/codegen/schema.js';
import { structArb, structsOf } from './spec-arbitraries.js';
import { Reader, Writer, type MessageCodec } from '../../src/protocol/primitives/index.js';
import * as messages from '../../src/protocol/messages/index.js';
import * as records from '../../src/protocol/coordinator-records/index.js';

const codecs = new Map<string, MessageCodec<unknown>>();
for (const mod of [messages, records] as Record<string, unknown>[]) {
  for (const [k, v] of Object.entries(mod)) if (k.endsWith('Codec')) codecs.set(k.slice(0, -5), v as MessageCodec<unknown>);
}

// The committed description of Kafka's specs (written by tools/codegen beside the generated code,
// and checked against the specs by codegen-fresh.test.ts wherever they are present), so this test
// needs only the repository.
const models = parseSchema(readFileSync(resolve(import.meta.dirname, '../..', SCHEMA_PATH), 'utf8'));

test('every spec has a generated codec with the same version range', () => {
  assert.ok(models.length > 180, `found ${models.length} messages in ${SCHEMA_PATH}`);
  for (const m of models) {
    const codec = codecs.get(m.name);
    assert.ok(codec, `no codec for ${m.name}`);
    assert.equal(codec.minVersion, m.valid.min, m.name);
    assert.equal(codec.maxVersion, m.valid.max, m.name);
  }
});

test('every message round-trips at every version (property)', () => {
  let cases = 0;
  for (const m of models) {
    const codec = codecs.get(m.name)!;
    const structs = structsOf(m);
    for (let v = m.valid.min; v <= m.valid.max; v++) {
      fc.assert(
        fc.property(structArb(m.root, structs, m, v), (value) => {
          const w = new Writer(8);
          codec.write(w, value as never, v);
          const bytes = w.result();
          const r = new Reader(bytes);
          const decoded = codec.read(r, v);
          assert.equal(r.remaining, 0, `${m.name} v${v}: ${r.remaining} bytes left after decode`);
          assert.deepStrictEqual(decoded, value, `${m.name} v${v}`);
        }),
        { numRuns: 15 },
      );
      cases++;
    }
  }
  assert.ok(cases > 500, `ran ${cases} message versions`);
});
