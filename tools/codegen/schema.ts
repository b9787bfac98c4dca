/**
 * A compact, committed description of every message the codec is generated from
 * (src/protocol/messages/schema.json): names, version ranges, and each struct's fields with
 * their kinds, types, versions, nullability, tags and defaults. The generator writes it beside
 * the generated code, so tests that check the codec against the specs (the round-trip property
 * test) need only the repository, not Kafka's JSON specs.
 */
import { NONE, type FieldModel, type MessageModel, type StructModel, type VersionRange, parseRange } from './spec.js';

export const SCHEMA_PATH = 'src/protocol/messages/schema.json';

/** A range in the specs' own notation: "none", "3", "0-5", "9+". */
function rangeText(r: VersionRange): string {
  if (r.min > r.max) return 'none';
  if (r.max === Infinity) return `${r.min}+`;
  return r.min === r.max ? `${r.min}` : `${r.min}-${r.max}`;
}

interface FieldJson {
  n: string; // name (camelCase)
  k: 'p' | 's' | 'a'; // primitive, struct, array
  t: string; // primitive type or struct name (element type for arrays)
  v: string; // versions
  nv?: string; // nullable versions
  tv?: string; // tagged versions
  tag?: number;
  fv?: string; // flexible-versions override
  d: string; // default (a TS expression, as the generated code uses)
}

interface StructJson {
  name: string;
  fields: FieldJson[];
}

interface MessageJson {
  name: string;
  type: MessageModel['type'];
  apiKey?: number;
  valid: string;
  flexible: string;
  root: StructJson;
  structs: StructJson[];
}

const KIND_CODE = { primitive: 'p', struct: 's', array: 'a' } as const;
const KIND_NAME = { p: 'primitive', s: 'struct', a: 'array' } as const;

function fieldJson(f: FieldModel): FieldJson {
  const o: FieldJson = { n: f.name, k: KIND_CODE[f.kind], t: f.struct ?? f.primitive!, v: rangeText(f.versions), d: f.default };
  if (f.nullable.min <= f.nullable.max) o.nv = rangeText(f.nullable);
  if (f.tagged.min <= f.tagged.max) o.tv = rangeText(f.tagged);
  if (f.tag !== undefined) o.tag = f.tag;
  if (f.flexibleOverride) o.fv = rangeText(f.flexibleOverride);
  return o;
}

const structJson = (s: StructModel): StructJson => ({ name: s.name, fields: s.fields.map(fieldJson) });

/** The schema file's text: one message per line, so a spec change shows as a readable diff. */
export function schemaText(models: MessageModel[]): string {
  const lines = models.map((m) => {
    const o: MessageJson = {
      name: m.name,
      type: m.type,
      ...(m.apiKey !== undefined ? { apiKey: m.apiKey } : {}),
      valid: rangeText(m.valid),
      flexible: rangeText(m.flexible),
      root: structJson(m.root),
      structs: m.structs.map(structJson),
    };
    return JSON.stringify(o);
  });
  return `{"generatedBy":"tools/codegen","messages":[\n${lines.join(',\n')}\n]}\n`;
}

function fieldModel(o: FieldJson): FieldModel {
  const kind = KIND_NAME[o.k];
  const f: FieldModel = {
    name: o.n,
    specName: o.n.charAt(0).toUpperCase() + o.n.slice(1),
    kind,
    versions: parseRange(o.v),
    nullable: o.nv === undefined ? NONE : parseRange(o.nv),
    tagged: o.tv === undefined ? NONE : parseRange(o.tv),
    default: o.d,
    about: '',
  };
  if (o.tag !== undefined) f.tag = o.tag;
  if (o.fv !== undefined) f.flexibleOverride = parseRange(o.fv);
  if (kind === 'struct' || (kind === 'array' && !isPrimitive(o.t))) f.struct = o.t;
  else f.primitive = o.t as FieldModel['primitive'];
  return f;
}

const PRIMITIVE_NAMES = new Set(['int8', 'int16', 'int32', 'int64', 'uint16', 'uint32', 'float64', 'string', 'bytes', 'records', 'bool', 'uuid']);
const isPrimitive = (t: string): boolean => PRIMITIVE_NAMES.has(t);

const structModel = (o: StructJson): StructModel => ({ name: o.name, fields: o.fields.map(fieldModel) });

/** Reads the schema file back into the generator's model (without the fields' descriptions). */
export function parseSchema(text: string): MessageModel[] {
  const doc = JSON.parse(text) as { messages: MessageJson[] };
  return doc.messages.map((o) => {
    const m: MessageModel = {
      name: o.name,
      type: o.type,
      valid: parseRange(o.valid),
      flexible: parseRange(o.flexible),
      root: structModel(o.root),
      structs: o.structs.map(structModel),
    };
    if (o.apiKey !== undefined) m.apiKey = o.apiKey;
    return m;
  });
}
