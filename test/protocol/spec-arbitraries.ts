/**
 * fast-check arbitraries built from Kafka's own message specs (the codegen's model, as committed in
 * src/protocol/messages/schema.json), so the round-trip test checks the generated code against the
 * spec, not against itself.
 */
import fc from 'fast-check';
import type { FieldModel, MessageModel, StructModel, VersionRange } from '../../tools/codegen/spec.js';

const inRange = (r: VersionRange, v: number): boolean => v >= r.min && v <= r.max;

function defaultValue(f: FieldModel, structs: Map<string, StructModel>, m: MessageModel, v: number): unknown {
  if (f.kind === 'struct') {
    const nullableSomewhere = Math.max(f.nullable.min, m.valid.min) <= Math.min(f.nullable.max, m.valid.max);
    return nullableSomewhere ? null : structDefault(structs.get(f.struct!)!, structs, m, v);
  }
  switch (f.default) {
    case 'null':
      return null;
    case '[]':
      return [];
    case 'EMPTY':
      return Buffer.alloc(0);
    case 'ZERO_UUID':
      return 'AAAAAAAAAAAAAAAAAAAAAA';
    case 'true':
      return true;
    case 'false':
      return false;
  }
  if (f.default.endsWith('n')) return BigInt(f.default.slice(0, -1));
  if (f.default.startsWith('"')) return JSON.parse(f.default) as string;
  return Number(f.default);
}

function structDefault(s: StructModel, structs: Map<string, StructModel>, m: MessageModel, v: number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of s.fields) o[f.name] = defaultValue(f, structs, m, v);
  return o;
}

function primitiveArb(p: string, nullable: boolean): fc.Arbitrary<unknown> {
  let a: fc.Arbitrary<unknown>;
  switch (p) {
    case 'int8':
      a = fc.integer({ min: -128, max: 127 });
      break;
    case 'int16':
      a = fc.integer({ min: -32768, max: 32767 });
      break;
    case 'int32':
      a = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
      break;
    case 'uint16':
      a = fc.integer({ min: 0, max: 65535 });
      break;
    case 'uint32':
      a = fc.integer({ min: 0, max: 2 ** 32 - 1 });
      break;
    case 'int64':
      a = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
      break;
    case 'float64':
      a = fc.double({ noNaN: true });
      break;
    case 'bool':
      a = fc.boolean();
      break;
    case 'string':
      a = fc.string({ maxLength: 12, unit: 'grapheme' });
      break;
    case 'uuid':
      a = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64url'));
      break;
    case 'bytes':
    case 'records':
      a = fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b));
      break;
    default:
      throw new Error(`unknown primitive ${p}`);
  }
  return nullable ? fc.option(a, { nil: null, freq: 4 }) : a;
}

/** An arbitrary value of struct `s` as it exists at version `v`, plus the value decode must return. */
export function structArb(s: StructModel, structs: Map<string, StructModel>, m: MessageModel, v: number, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const flexible = inRange(m.flexible, v);
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of s.fields) {
    const tagged = f.tag !== undefined && inRange(f.tagged, v);
    const present = inRange(f.versions, v) && (!tagged || flexible);
    if (!present) {
      parts[f.name] = fc.constant(defaultValue(f, structs, m, v));
      continue;
    }
    const nullable = inRange(f.nullable, v);
    if (f.kind === 'array') {
      const elem = f.struct ? (depth > 3 ? null : structArb(structs.get(f.struct)!, structs, m, v, depth + 1)) : primitiveArb(f.primitive!, false);
      const arr: fc.Arbitrary<unknown[]> = elem ? fc.array(elem, { maxLength: 3 }) : fc.constant<unknown[]>([]);
      parts[f.name] = nullable ? fc.option(arr, { nil: null, freq: 4 }) : arr;
    } else if (f.kind === 'struct') {
      const st = structArb(structs.get(f.struct!)!, structs, m, v, depth + 1);
      parts[f.name] = nullable ? fc.option(st, { nil: null, freq: 4 }) : st;
    } else {
      parts[f.name] = primitiveArb(f.primitive!, nullable);
    }
  }
  return fc.record(parts).map((o) => ({ ...o })) as fc.Arbitrary<Record<string, unknown>>;
}

export function structsOf(m: MessageModel): Map<string, StructModel> {
  return new Map([...m.structs, m.root].map((s) => [s.name, s]));
}
