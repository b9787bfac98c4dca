/**
 * Reads Kafka's JSON message specs (`//`-commented JSON) into a normalized model the emitter
 * walks: versions as numeric ranges, struct types resolved (inline and commonStructs).
 */
import { readFileSync } from 'node:fs';

export interface VersionRange {
  min: number;
  max: number; // Infinity for "N+"
}
export const NONE: VersionRange = { min: 1, max: 0 }; // empty

export type PrimitiveType = 'int8' | 'int16' | 'int32' | 'int64' | 'uint16' | 'uint32' | 'float64' | 'string' | 'bytes' | 'records' | 'bool' | 'uuid';

export interface FieldModel {
  name: string; // camelCase
  specName: string;
  kind: 'primitive' | 'struct' | 'array';
  /** primitive type, or element type for arrays of primitives */
  primitive?: PrimitiveType;
  /** struct name for struct fields and arrays of structs */
  struct?: string;
  versions: VersionRange;
  nullable: VersionRange;
  tagged: VersionRange;
  tag?: number;
  flexibleOverride?: VersionRange; // "flexibleVersions": "none" on the header's ClientId
  default: string; // a TS expression
  about: string;
}

export interface StructModel {
  name: string;
  fields: FieldModel[];
}

export interface MessageModel {
  name: string; // e.g. MetadataRequest
  type: 'request' | 'response' | 'header' | 'data';
  apiKey?: number;
  /** Which listeners serve the API (requests only): zkBroker, broker, controller. */
  listeners?: string[];
  valid: VersionRange;
  flexible: VersionRange;
  root: StructModel; // root.name === name
  structs: StructModel[]; // nested, in declaration order
}

export function parseRange(s: string | undefined): VersionRange {
  if (s === undefined || s === 'none') return NONE;
  const t = s.trim();
  if (t.endsWith('+')) return { min: Number(t.slice(0, -1)), max: Infinity };
  const dash = t.indexOf('-');
  if (dash > 0) return { min: Number(t.slice(0, dash)), max: Number(t.slice(dash + 1)) };
  const n = Number(t);
  return { min: n, max: n };
}

export function readSpecJson(path: string): Record<string, unknown> {
  const text = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => !l.trim().startsWith('//'))
    .join('\n');
  return JSON.parse(text) as Record<string, unknown>;
}

const PRIMITIVES = new Set<string>(['int8', 'int16', 'int32', 'int64', 'uint16', 'uint32', 'float64', 'string', 'bytes', 'records', 'bool', 'uuid']);

function camel(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

interface RawField {
  name: string;
  type: string;
  versions?: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  flexibleVersions?: string;
  default?: string | number | boolean;
  about?: string;
  fields?: RawField[];
}

function defaultExpr(f: FieldModel, raw: RawField): string {
  const d = raw.default;
  if (f.kind === 'array') return d === 'null' ? 'null' : '[]';
  if (f.kind === 'struct') return 'null'; // replaced by the struct's defaults at use sites
  switch (f.primitive) {
    case 'bool':
      return d === undefined ? 'false' : String(d === true || d === 'true');
    case 'string':
      if (d === 'null') return 'null';
      return JSON.stringify(d === undefined ? '' : String(d));
    case 'bytes':
    case 'records':
      return d === 'null' || f.nullable.min <= f.nullable.max ? 'null' : 'EMPTY';
    case 'uuid':
      return 'ZERO_UUID';
    case 'int64': {
      if (d === undefined || d === '') return '0n';
      return `${BigInt(String(d))}n`;
    }
    default: {
      if (d === undefined || d === '') return '0';
      const n = Number(String(d).trim());
      if (Number.isNaN(n)) throw new Error(`bad default ${String(d)} for ${f.specName}`);
      return String(n);
    }
  }
}

export function loadMessage(path: string): MessageModel {
  const json = readSpecJson(path);
  const name = json.name as string;
  const structs: StructModel[] = [];
  const common = new Map<string, RawField[]>();
  for (const c of (json.commonStructs as { name: string; fields: RawField[] }[] | undefined) ?? []) {
    common.set(c.name, c.fields);
  }
  const seen = new Set<string>();

  function buildStruct(structName: string, rawFields: RawField[]): StructModel {
    const fields = rawFields.map((rf) => buildField(rf));
    return { name: structName, fields };
  }
  function registerStruct(typeName: string, rawFields: RawField[] | undefined): void {
    if (seen.has(typeName)) return;
    const fieldsRaw = rawFields ?? common.get(typeName);
    if (!fieldsRaw) throw new Error(`${name}: unknown struct ${typeName}`);
    seen.add(typeName);
    structs.push(buildStruct(typeName, fieldsRaw));
  }
  function buildField(rf: RawField): FieldModel {
    const isArray = rf.type.startsWith('[]');
    const elem = isArray ? rf.type.slice(2) : rf.type;
    const prim = PRIMITIVES.has(elem);
    const f: FieldModel = {
      name: camel(rf.name),
      specName: rf.name,
      kind: isArray ? 'array' : prim ? 'primitive' : 'struct',
      versions: parseRange(rf.versions),
      nullable: parseRange(rf.nullableVersions),
      tagged: parseRange(rf.taggedVersions),
      default: '',
      about: (rf.about ?? '').replace(/\*\//g, '*\\/'),
    };
    if (rf.tag !== undefined) f.tag = rf.tag;
    if (rf.flexibleVersions !== undefined) f.flexibleOverride = parseRange(rf.flexibleVersions);
    if (prim) f.primitive = elem as PrimitiveType;
    else {
      f.struct = elem;
      registerStruct(elem, rf.fields);
    }
    f.default = defaultExpr(f, rf);
    return f;
  }

  const root = buildStruct(name, json.fields as RawField[]);
  const model: MessageModel = {
    name,
    type: json.type as MessageModel['type'],
    valid: parseRange(json.validVersions as string),
    flexible: parseRange(json.flexibleVersions as string),
    root,
    structs,
  };
  if (typeof json.apiKey === 'number') model.apiKey = json.apiKey;
  if (Array.isArray(json.listeners)) model.listeners = (json.listeners as unknown[]).map(String);
  return model;
}
