// Turning configuration text into typed values, with Kafka's wording for invalid values.
import type { ConfigDef } from './config-def.js';
import { invalidValue } from './errors.js';

export type ConfigValue = boolean | number | string | string[] | null;

const INT_RANGE: Record<'int' | 'short', [number, number]> = { int: [-2147483648, 2147483647], short: [-32768, 32767] };
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** Parses `text` as the def's type and validates it; throws ConfigError naming the key. */
export function parseConfigValue(def: ConfigDef, text: string): ConfigValue {
  const value = def.type === 'password' ? text : text.trim();
  const parsed = parseByType(def, value);
  validate(def, value, parsed);
  return parsed;
}

/** The def's default as a typed value (null when it has none). */
export function defaultConfigValue(def: ConfigDef): ConfigValue {
  return def.default === null ? null : parseConfigValue(def, def.default);
}

function parseByType(def: ConfigDef, value: string): ConfigValue {
  switch (def.type) {
    case 'boolean': {
      const lower = value.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      throw invalidValue(def.name, value, 'Expected value to be either true or false');
    }
    case 'int':
    case 'short': {
      const [min, max] = INT_RANGE[def.type];
      const n = /^[+-]?\d+$/.test(value) ? Number(value) : NaN;
      if (!Number.isInteger(n) || n < min || n > max) {
        throw invalidValue(def.name, value, `Not a number of type ${def.type.toUpperCase()}`);
      }
      return n;
    }
    case 'long': {
      const big = /^[+-]?\d+$/.test(value) ? BigInt(value) : null;
      if (big === null || big < LONG_MIN || big > LONG_MAX) throw invalidValue(def.name, value, 'Not a number of type LONG');
      // Values beyond 2^53 (Long.MAX_VALUE defaults, meaning "never") lose precision harmlessly.
      return Number(big);
    }
    case 'double': {
      const n = value === '' ? NaN : Number(value);
      if (Number.isNaN(n)) throw invalidValue(def.name, value, 'Not a number of type DOUBLE');
      return n;
    }
    case 'list':
      return value === '' ? [] : value.split(/\s*,\s*/);
    case 'string':
    case 'class':
    case 'password':
      // An empty value for a key without default means "unset" (e.g. "zookeeper.connect=").
      return value === '' && def.default === null ? null : value;
  }
}

function validate(def: ConfigDef, text: string, parsed: ConfigValue): void {
  const v = def.validator;
  if (v === undefined || parsed === null) return;
  if (typeof parsed === 'number') {
    if (v.min !== undefined && parsed < v.min) throw invalidValue(def.name, text, `Value must be at least ${v.min}`);
    if (v.max !== undefined && parsed > v.max) throw invalidValue(def.name, text, `Value must be no more than ${v.max}`);
  }
  if (v.oneOf !== undefined) {
    const items = Array.isArray(parsed) ? parsed : typeof parsed === 'string' ? [parsed] : [];
    for (const item of items) {
      if (!v.oneOf.includes(item)) throw invalidValue(def.name, text, `String must be one of: ${v.oneOf.map((o) => (o === '' ? '"" (empty)' : o)).join(', ')}`);
    }
  }
}
