/**
 * Kafka's client quota config keys (QuotaConfigs) as they are stored beside SCRAM credentials in
 * the client entity store: `producer_byte_rate` and `consumer_byte_rate` (LONG, bytes/s),
 * `request_percentage` (DOUBLE, percent of one request handler per second) and
 * `controller_mutation_rate` (DOUBLE, partition mutations/s; stored and described as Kafka does,
 * not enforced by Fjord).
 */

export const PRODUCER_BYTE_RATE = 'producer_byte_rate';
export const CONSUMER_BYTE_RATE = 'consumer_byte_rate';
export const REQUEST_PERCENTAGE = 'request_percentage';
export const CONTROLLER_MUTATION_RATE = 'controller_mutation_rate';

export const QUOTA_CONFIG_TYPES: Readonly<Record<string, 'LONG' | 'DOUBLE'>> = {
  [PRODUCER_BYTE_RATE]: 'LONG',
  [CONSUMER_BYTE_RATE]: 'LONG',
  [REQUEST_PERCENTAGE]: 'DOUBLE',
  [CONTROLLER_MUTATION_RATE]: 'DOUBLE',
};

export function isQuotaConfig(key: string): boolean {
  return Object.hasOwn(QUOTA_CONFIG_TYPES, key);
}

export class QuotaConfigError extends Error {
  override readonly name = 'QuotaConfigError';
}

/**
 * The text stored for a quota value, as Kafka's AlterClientQuotas stores it: LONG keys must hold a
 * whole number (within 1e-6) and are stored as an integer; DOUBLE keys as Java prints a double.
 */
export function quotaValueText(key: string, value: number): string {
  const type = QUOTA_CONFIG_TYPES[key];
  if (type === undefined) throw new QuotaConfigError(`Invalid configuration key ${key}`);
  if (!Number.isFinite(value)) throw new QuotaConfigError(`Configuration ${key} must be a ${type} value`);
  if (type === 'DOUBLE') return javaDoubleString(value);
  const whole = Math.trunc(value + 1e-6);
  if (Math.abs(whole - value) > 1e-6) throw new QuotaConfigError(`Configuration ${key} must be a LONG value`);
  return String(whole);
}

/** Parses a stored quota value (kafka-configs --zookeeper writes the text as typed); NaN when unreadable. */
export function parseQuotaValue(text: string): number {
  return /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(text) ? Number(text) : NaN;
}

/** Checks a value given as text (kafka-configs --zookeeper), Kafka's ConfigDef parse of LONG/DOUBLE. */
export function validateQuotaText(key: string, text: string): void {
  const type = QUOTA_CONFIG_TYPES[key];
  if (type === undefined) throw new QuotaConfigError(`Invalid configuration key ${key}`);
  const ok = type === 'LONG' ? /^\s*[-+]?\d+\s*$/.test(text) : !Number.isNaN(parseQuotaValue(text));
  if (!ok) throw new QuotaConfigError(`Invalid value ${text} for configuration ${key}: Not a number of type ${type}`);
}

/** Java's Double.toString: 1048576.0, 0.5, 1.048576E7, 1.0E-4. */
export function javaDoubleString(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(v);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(v);
    return s.includes('.') || s.includes('e') ? s : `${s}.0`;
  }
  const [mantissa, exp] = v.toExponential().split('e') as [string, string];
  const m = mantissa.includes('.') ? mantissa : `${mantissa}.0`;
  return `${m}E${exp.startsWith('+') ? exp.slice(1) : exp}`;
}
