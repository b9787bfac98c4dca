/**
 * Emits TypeScript for one message model: an interface per struct, a writer and a reader per
 * struct with version checks inline (as Kafka's own generated classes do), and a codec object
 * for the message root.
 */
import type { FieldModel, MessageModel, StructModel, VersionRange } from './spec.js';

const NUMBER_TYPES = new Set(['int8', 'int16', 'int32', 'uint16', 'uint32', 'float64']);

function isEmpty(r: VersionRange): boolean {
  return r.min > r.max;
}

/** A TS condition that is true when `v` lies in `r`, simplified against the message's valid range. */
export function cond(r: VersionRange, valid: VersionRange, v = 'v'): string {
  if (isEmpty(r)) return 'false';
  const parts: string[] = [];
  if (r.min > valid.min) parts.push(`${v} >= ${r.min}`);
  if (r.max < valid.max) parts.push(`${v} <= ${r.max}`);
  return parts.length ? parts.join(' && ') : 'true';
}

function intersects(a: VersionRange, b: VersionRange): boolean {
  return Math.max(a.min, b.min) <= Math.min(a.max, b.max);
}

function baseType(f: FieldModel): string {
  if (f.kind === 'struct' || (f.kind === 'array' && f.struct)) return f.struct!;
  const p = f.primitive!;
  if (NUMBER_TYPES.has(p)) return 'number';
  if (p === 'int64') return 'bigint';
  if (p === 'string' || p === 'uuid') return 'string';
  if (p === 'bool') return 'boolean';
  return 'Buffer';
}

function fieldType(f: FieldModel, m: MessageModel): string {
  const nullable = intersects(f.nullable, m.valid) || (f.default === 'null' && f.kind !== 'struct');
  const t = f.kind === 'array' ? `${baseType(f)}[]` : baseType(f);
  return nullable ? `${t} | null` : t;
}

class Emitter {
  out: string[] = [];
  constructor(readonly m: MessageModel) {}
  line(s: string): void {
    this.out.push(s);
  }
  c(r: VersionRange): string {
    return cond(r, this.m.valid);
  }
  flexExpr(f: FieldModel): string {
    return f.flexibleOverride && isEmpty(f.flexibleOverride) ? 'false' : 'flex';
  }
  structDefault(f: FieldModel): string {
    if (f.kind === 'struct') return intersects(f.nullable, this.m.valid) ? 'null' : `default${f.struct}()`;
    return f.default === 'EMPTY' ? 'EMPTY' : f.default;
  }

  /** Statements writing value expression `x` of field f (element-level when `elem`). */
  writeValue(f: FieldModel, x: string, w: string, ind: string, elem: boolean): void {
    const flex = this.flexExpr(f);
    if (f.kind === 'array' && !elem) {
      const nullCond = this.c(f.nullable);
      this.line(`${ind}if (${x} === null) {`);
      this.line(`${ind}  if (${nullCond}) ${w}.nullArray(${flex}); else ${w}.arrayLength(0, ${flex});`);
      this.line(`${ind}} else {`);
      this.line(`${ind}  ${w}.arrayLength(${x}.length, ${flex});`);
      const e = `e${ind.length}`;
      this.line(`${ind}  for (const ${e} of ${x}) {`);
      this.writeValue(f, e, w, ind + '    ', true);
      this.line(`${ind}  }`);
      this.line(`${ind}}`);
      return;
    }
    if (f.struct) {
      if (f.kind === 'struct' && intersects(f.nullable, this.m.valid)) {
        this.line(`${ind}if (${x} === null) ${w}.int8(-1); else { ${w}.int8(1); write${f.struct}(${w}, ${x}, v); }`);
      } else {
        this.line(`${ind}write${f.struct}(${w}, ${x} ?? {}, v);`);
      }
      return;
    }
    const p = f.primitive!;
    switch (p) {
      case 'string':
        if (elem) {
          this.line(`${ind}${w}.string(${x}, ${flex});`);
          return;
        }
        this.line(`${ind}if (${this.c(f.nullable)}) ${w}.nullableString(${x}, ${flex}); else ${w}.string(${x} ?? '', ${flex});`);
        return;
      case 'bytes':
      case 'records':
        if (elem) {
          this.line(`${ind}${w}.bytes(${x}, ${flex});`);
          return;
        }
        this.line(`${ind}if (${this.c(f.nullable)}) ${w}.nullableBytes(${x}, ${flex}); else ${w}.bytes(${x} ?? EMPTY, ${flex});`);
        return;
      default:
        this.line(`${ind}${w}.${p === 'bool' ? 'bool' : p}(${x});`);
    }
  }

  /** Expression or statements reading one value of field f into variable `x`. */
  readValue(f: FieldModel, x: string, ind: string, elem: boolean): void {
    const flex = this.flexExpr(f);
    if (f.kind === 'array' && !elem) {
      const n = `n${ind.length}`;
      this.line(`${ind}const ${n} = r.arrayLength(${flex});`);
      this.line(`${ind}if (${n} < 0) {`);
      if (intersects(f.nullable, this.m.valid)) {
        this.line(`${ind}  if (!(${this.c(f.nullable)})) throw new DecodeError('null array ${f.specName}');`);
        this.line(`${ind}  ${x} = null;`);
      } else {
        this.line(`${ind}  throw new DecodeError('null array ${f.specName}');`);
      }
      this.line(`${ind}} else {`);
      const a = `a${ind.length}`;
      this.line(`${ind}  const ${a}: ${baseType(f)}[] = new Array(${n});`);
      const i = `i${ind.length}`;
      this.line(`${ind}  for (let ${i} = 0; ${i} < ${n}; ${i}++) {`);
      const ev = `ev${ind.length}`;
      this.line(`${ind}    let ${ev}: ${baseType(f)};`);
      this.readValue(f, ev, ind + '    ', true);
      this.line(`${ind}    ${a}[${i}] = ${ev};`);
      this.line(`${ind}  }`);
      this.line(`${ind}  ${x} = ${a};`);
      this.line(`${ind}}`);
      return;
    }
    if (f.struct) {
      if (f.kind === 'struct' && intersects(f.nullable, this.m.valid)) {
        this.line(`${ind}${x} = r.int8() < 0 ? null : read${f.struct}(r, v);`);
      } else {
        this.line(`${ind}${x} = read${f.struct}(r, v);`);
      }
      return;
    }
    const p = f.primitive!;
    switch (p) {
      case 'string':
        if (elem) {
          this.line(`${ind}${x} = r.string(${flex});`);
          return;
        }
        if (!intersects(f.nullable, this.m.valid)) {
          this.line(`${ind}${x} = r.string(${flex});`);
          return;
        }
        this.line(`${ind}${x} = ${this.c(f.nullable)} ? r.nullableString(${flex}) : r.string(${flex});`);
        return;
      case 'bytes':
      case 'records':
        if (elem) {
          this.line(`${ind}${x} = r.bytes(${flex});`);
          return;
        }
        if (!intersects(f.nullable, this.m.valid)) {
          this.line(`${ind}${x} = r.bytes(${flex});`);
          return;
        }
        this.line(`${ind}${x} = ${this.c(f.nullable)} ? r.nullableBytes(${flex}) : r.bytes(${flex});`);
        return;
      default:
        this.line(`${ind}${x} = r.${p}();`);
    }
  }

  isTaggedSomewhere(f: FieldModel): boolean {
    return f.tag !== undefined && !isEmpty(f.tagged);
  }

  regularCond(f: FieldModel): string {
    // present, and not carried in the tagged section (a field is tagged only in flexible versions)
    if (!this.isTaggedSomewhere(f)) return this.c(f.versions);
    const inV = this.c(f.versions);
    const inT = this.c(f.tagged);
    return `(${inV}) && !(${inT})`;
  }

  emitStruct(s: StructModel, isRoot: boolean): void {
    const m = this.m;
    const flexCond = this.c(m.flexible);
    // interface
    this.line(`export interface ${s.name} {`);
    for (const f of s.fields) {
      if (f.about) this.line(`  /** ${f.about.replace(/\s+/g, ' ')} */`);
      this.line(`  ${f.name}: ${fieldType(f, m)};`);
    }
    this.line(`}`);
    this.line('');
    // default
    this.line(`export function default${s.name}(): ${s.name} {`);
    this.line(`  return {`);
    for (const f of s.fields) this.line(`    ${f.name}: ${this.structDefault(f)},`);
    this.line(`  };`);
    this.line(`}`);
    this.line('');
    // writer
    const tagged = s.fields.filter((f) => this.isTaggedSomewhere(f)).sort((a, b) => a.tag! - b.tag!);
    const writerStart = this.out.length;
    this.line(`${isRoot ? 'export ' : ''}function write${s.name}(w: Writer, d: Input<${s.name}>, v: number): void {`);
    if (flexCond !== 'false') this.line(`  const flex = ${flexCond};`);
    else this.line(`  const flex = false;`);
    for (const f of s.fields) {
      const rc = this.regularCond(f);
      if (rc === 'false') continue;
      const x = `d.${f.name} === undefined ? ${this.structDefault(f)} : d.${f.name}`;
      this.line(`  if (${rc}) {`);
      this.line(`    const x = ${x};`);
      this.writeValue(f, 'x', 'w', '    ', false);
      this.line(`  }`);
    }
    if (flexCond !== 'false') {
      if (tagged.length === 0) {
        this.line(`  if (flex) w.uvarint(0);`);
      } else {
        this.line(`  if (flex) {`);
        this.line(`    const tags: [number, Buffer][] = [];`);
        for (const f of tagged) {
          const present =
            f.kind === 'array'
              ? `x !== null && x.length > 0`
              : f.kind === 'struct'
                ? `x !== null`
                : f.primitive === 'bytes' || f.primitive === 'records'
                  ? `x !== null && x.length > 0`
                  : `x !== ${f.default}`;
          this.line(`    if (${this.c(f.tagged)} && d.${f.name} !== undefined) {`);
          this.line(`      const x = d.${f.name};`);
          this.line(`      if (${present}) {`);
          this.line(`        const tw = new Writer(32);`);
          this.writeValue(f, 'x', 'tw', '        ', false);
          this.line(`        tags.push([${f.tag}, tw.result()]);`);
          this.line(`      }`);
          this.line(`    }`);
        }
        this.line(`    w.uvarint(tags.length);`);
        this.line(`    for (const [tag, b] of tags) { w.uvarint(tag); w.uvarint(b.length); w.raw(b); }`);
        this.line(`  }`);
      }
    }
    this.line(`}`);
    this.dropUnused(writerStart, ['d', 'v']);
    this.line('');
    // reader
    const readerStart = this.out.length;
    this.line(`${isRoot ? 'export ' : ''}function read${s.name}(r: Reader, v: number): ${s.name} {`);
    this.line(`  const flex = ${flexCond};`);
    for (const f of s.fields) {
      const rc = this.regularCond(f);
      this.line(`  let ${f.name}: ${fieldType(f, m)} = ${this.structDefault(f)};`);
      if (rc === 'false') continue;
      this.line(`  if (${rc}) {`);
      this.readValue(f, f.name, '    ', false);
      this.line(`  }`);
    }
    if (flexCond !== 'false') {
      this.line(`  if (flex) {`);
      this.line(`    const count = r.uvarint();`);
      this.line(`    for (let t = 0; t < count; t++) {`);
      // a struct that knows no tagged field skips every one, whatever its tag
      this.line(tagged.length ? `      const tag = r.uvarint();` : `      r.uvarint();`);
      this.line(`      const size = r.uvarint();`);
      if (tagged.length) {
        this.line(`      const end = r.offset + size;`);
        this.line(`      switch (tag) {`);
        for (const f of tagged) {
          this.line(`        case ${f.tag}:`);
          this.line(`          if (${this.c(f.tagged)}) {`);
          this.readValue(f, f.name, '            ', false);
          this.line(`          }`);
          this.line(`          break;`);
        }
        this.line(`      }`);
        this.line(`      if (r.offset > end) throw new DecodeError('tagged field ' + tag + ' overran its size');`);
        this.line(`      r.offset = end;`);
      } else {
        this.line(`      r.skip(size);`);
      }
      this.line(`    }`);
      this.line(`  }`);
    }
    this.line(`  return { ${s.fields.map((f) => f.name).join(', ')} };`);
    this.line(`}`);
    this.dropUnused(readerStart, ['v']);
    this.line('');
  }

  /**
   * Makes the function emitted from line `start` on pass noUnusedLocals/noUnusedParameters: a
   * `flex` local its body never reads is dropped, and a parameter it never reads (the codec's
   * signature needs every one) is renamed with a leading underscore.
   */
  dropUnused(start: number, params: string[]): void {
    const uses = (name: string, from: number): boolean => {
      const re = new RegExp(`(?<![.\\w])${name}\\b`);
      return this.out.slice(from).some((l) => re.test(l));
    };
    const flexAt = this.out.findIndex((l, i) => i > start && l.startsWith('  const flex = '));
    if (flexAt > 0 && !uses('flex', flexAt + 1)) this.out.splice(flexAt, 1);
    for (const p of params) {
      if (!uses(p, start + 1)) this.out[start] = this.out[start]!.replace(` ${p}: `, ` _${p}: `);
    }
  }

  emitMessage(): void {
    const m = this.m;
    for (const s of m.structs) this.emitStruct(s, false);
    this.emitStruct(m.root, true);
    const flexMin = isEmpty(m.flexible) ? 'Infinity' : String(m.flexible.min);
    this.line(`export const ${m.name}Codec: MessageCodec<${m.name}> = {`);
    this.line(`  name: '${m.name}',`);
    this.line(`  minVersion: ${m.valid.min},`);
    this.line(`  maxVersion: ${m.valid.max},`);
    this.line(`  flexibleFrom: ${flexMin},`);
    this.line(`  write: write${m.name},`);
    this.line(`  read: read${m.name},`);
    this.line(`  defaults: default${m.name},`);
    this.line(`};`);
    this.line('');
  }
}

/**
 * Biome neither lints, formats nor reorders generated code (tsc and the codec tests check it);
 * every generated TypeScript file starts with these lines.
 */
export const GENERATED_BY_BIOME = [
  '// biome-ignore-all lint: generated code',
  '// biome-ignore-all format: generated code',
  '// biome-ignore-all assist: generated code',
];

export function emitMessages(models: MessageModel[], importPrefix: string, source: string): string {
  const body: string[] = [];
  const structNames = new Set<string>();
  for (const m of models) {
    // Kafka scopes nested structs inside their message class; one TS module holds both the
    // request and the response, so a name the request already took is prefixed by the response's.
    const renames = new Map<string, string>();
    for (const s of m.structs) {
      if (structNames.has(s.name)) {
        const renamed = `${m.name}${s.name}`;
        renames.set(s.name, renamed);
        s.name = renamed;
      }
    }
    for (const s of [...m.structs, m.root]) {
      for (const f of s.fields) if (f.struct && renames.has(f.struct)) f.struct = renames.get(f.struct)!;
      if (structNames.has(s.name)) throw new Error(`duplicate struct name ${s.name} in ${source}`);
      structNames.add(s.name);
    }
    const e = new Emitter(m);
    e.emitMessage();
    body.push(...e.out);
  }
  const text = body.join('\n');
  const uses = (s: string): boolean => text.includes(s);
  const prim = ['Reader', 'Writer', 'type Input', 'type MessageCodec'];
  if (uses('DecodeError')) prim.push('DecodeError');
  if (uses('ZERO_UUID')) prim.push('ZERO_UUID');
  if (uses('EMPTY')) prim.push('EMPTY');
  const header = [
    `// Generated by tools/codegen from Kafka's message specs (${source}). Do not edit by hand.`,
    ...GENERATED_BY_BIOME,
    `import { ${prim.join(', ')} } from '${importPrefix}primitives/index.js';`,
    '',
  ];
  return header.join('\n') + text + '\n';
}
