// What a broker configuration definition is (name, type, Kafka's default, validator) and the small
// builders the definition tables are written with. Separate from defs.ts so that the tables, split by
// area, can share the builders without importing the file that assembles them.

export type ConfigType = 'boolean' | 'string' | 'int' | 'short' | 'long' | 'double' | 'list' | 'class' | 'password';

export interface ConfigValidator {
  min?: number;
  max?: number;
  /** Allowed values (for 'string') or allowed items (for 'list'), compared case-sensitively. */
  oneOf?: readonly string[];
}

export interface ConfigDef {
  name: string;
  type: ConfigType;
  /** Kafka's textual default, as DescribeConfigs shows it; null = no default. */
  default: string | null;
  /** One short line. */
  doc: string;
  /** Values are hidden from DescribeConfigs. */
  sensitive: boolean;
  validator?: ConfigValidator;
  /** Accepted for compatibility only. */
  noEffect?: boolean;
}

/** Kafka's DescribeConfigs configType codes. */
export const CONFIG_TYPE_CODES: Readonly<Record<ConfigType, number>> = {
  boolean: 1,
  string: 2,
  int: 3,
  short: 4,
  long: 5,
  double: 6,
  list: 7,
  class: 8,
  password: 9,
};

export const INT_MAX = '2147483647';
export const LONG_MAX = '9223372036854775807';

/** One definition; `extra` carries what only some keys have. */
export function def(
  name: string,
  type: ConfigType,
  defaultValue: string | null,
  doc: string,
  extra: { validator?: ConfigValidator; noEffect?: boolean; sensitive?: boolean } = {},
): ConfigDef {
  return { name, type, default: defaultValue, doc, sensitive: extra.sensitive ?? false, validator: extra.validator, noEffect: extra.noEffect };
}
export const atLeast = (min: number): { validator: ConfigValidator } => ({ validator: { min } });
export const NO_EFFECT = { noEffect: true } as const;
