/**
 * client-metrics config resources (KIP-714, ConfigResource type 16): a named subscription with
 * `metrics` (metric name prefixes; `*` = all, empty = none), `interval.ms` (how often matching
 * clients push) and `match` (selectors that pick the clients). Validated as Kafka 4.0's
 * ClientMetricsConfigs validates them, with its error codes and words; parsed into the
 * Subscription the client instances are matched against. Match values are regular expressions
 * that must match the whole value, as Java's Pattern.matcher().matches(); they are compiled with
 * re2js (RE2J's dialect, linear time), so a pattern cannot stall the event loop.
 */
import { RE2JS } from 're2js';
import { CONFIG_TYPE_CODES } from '../../config/index.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { ConfigEntry } from '../admin/index.js';

export const METRICS_CONFIG = 'metrics';
export const INTERVAL_MS_CONFIG = 'interval.ms';
export const MATCH_CONFIG = 'match';

/** Kafka's DescribeConfigs source code for a client-metrics entry (CLIENT_METRICS_CONFIG). */
export const CLIENT_METRICS_CONFIG_SOURCE = 7;

/** `metrics` holding this subscribes to every metric. */
export const ALL_SUBSCRIBED_METRICS = '*';
/** Kafka's interval.ms default (5 minutes) and bounds (100 ms .. 1 hour). */
export const INTERVAL_MS_DEFAULT = 300_000;
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 3_600_000;

/** The client properties a `match` selector may name. */
export const MATCH_SELECTORS = [
  'client_instance_id',
  'client_id',
  'client_software_name',
  'client_software_version',
  'client_source_address',
  'client_source_port',
] as const;
export type MatchSelector = (typeof MATCH_SELECTORS)[number];

const KEY_TYPES: Readonly<Record<string, 'list' | 'int'>> = { [METRICS_CONFIG]: 'list', [INTERVAL_MS_CONFIG]: 'int', [MATCH_CONFIG]: 'list' };

/** A key's type and textual default, as IncrementalAlterConfigs' APPEND and SUBTRACT need them. */
export function clientMetricsKeyInfo(name: string): { type: 'list' | 'int'; default: string | null } | undefined {
  const type = KEY_TYPES[name];
  if (type === undefined) return undefined;
  return { type, default: type === 'int' ? String(INTERVAL_MS_DEFAULT) : '' };
}

/** One subscription, parsed. */
export interface Subscription {
  readonly name: string;
  readonly metrics: readonly string[];
  readonly intervalMs: number;
  readonly match: ReadonlyMap<MatchSelector, RE2JS>;
}

/** Kafka's LIST parsing: comma-separated, trimmed; empty text is the empty list. */
function parseList(text: string | undefined): string[] {
  if (text === undefined || text.trim() === '') return [];
  return text.trim().split(/\s*,\s*/);
}

function parseInterval(text: string | undefined): number {
  if (text === undefined) return INTERVAL_MS_DEFAULT;
  const trimmed = text.trim();
  const n = Number(trimmed);
  if (!/^[+-]?\d+$/.test(trimmed) || !Number.isSafeInteger(n) || n > 2_147_483_647 || n < -2_147_483_648) {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${text} for configuration ${INTERVAL_MS_CONFIG}: Not a number of type INT`);
  }
  return n;
}

/** `selector=regex` entries: a selector Kafka knows, one '=', a regex that compiles. */
function parseMatch(patterns: readonly string[]): Map<MatchSelector, RE2JS> {
  const out = new Map<MatchSelector, RE2JS>();
  for (const pattern of patterns) {
    // Java's split("=") drops trailing empty parts: "a=" and "a=b=c" are both illegal.
    const parts = pattern.split('=');
    while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
    const illegal = new KafkaError(ErrorCode.INVALID_CONFIG, `Illegal client matching pattern: ${pattern}`);
    if (parts.length !== 2) throw illegal;
    const selector = parts[0]!.trim();
    if (!(MATCH_SELECTORS as readonly string[]).includes(selector)) throw illegal;
    try {
      out.set(selector as MatchSelector, RE2JS.compile(parts[1]!.trim()));
    } catch {
      throw illegal;
    }
  }
  return out;
}

/** Throws Kafka's error for a subscription Kafka would refuse; `configs` are the keys as they would be stored. */
export function validateClientMetricsConfigs(name: string, configs: Readonly<Record<string, string>>): void {
  if (name === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty");
  for (const key of Object.keys(configs)) {
    if (KEY_TYPES[key] === undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown client metrics configuration: ${key}`);
  }
  if (configs[INTERVAL_MS_CONFIG] !== undefined) {
    const interval = parseInterval(configs[INTERVAL_MS_CONFIG]);
    if (interval < MIN_INTERVAL_MS || interval > MAX_INTERVAL_MS) {
      throw new KafkaError(
        ErrorCode.INVALID_REQUEST,
        `Invalid value ${interval} for ${INTERVAL_MS_CONFIG}, interval must be between ${MIN_INTERVAL_MS} and ${MAX_INTERVAL_MS} (1 hour)`,
      );
    }
  }
  parseMatch(parseList(configs[MATCH_CONFIG]));
}

/** The subscription stored configs describe (validated when stored). */
export function parseSubscription(name: string, configs: Readonly<Record<string, string>>): Subscription {
  return {
    name,
    metrics: parseList(configs[METRICS_CONFIG]),
    intervalMs: parseInterval(configs[INTERVAL_MS_CONFIG]),
    match: parseMatch(parseList(configs[MATCH_CONFIG])),
  };
}

/** DescribeConfigs' entries: the keys set on the subscription (as Kafka, no defaults), optionally only `keys`. */
export function describeClientMetricsEntries(configs: Readonly<Record<string, string>>, keys: readonly string[] | null): ConfigEntry[] {
  return Object.entries(configs)
    .filter(([name]) => keys === null || keys.includes(name))
    .map(([name, value]) => ({
      name,
      value,
      readOnly: false,
      isDefault: false,
      source: CLIENT_METRICS_CONFIG_SOURCE,
      sensitive: false,
      synonyms: [],
      configType: CONFIG_TYPE_CODES[KEY_TYPES[name] ?? 'string'],
      documentation: '',
    }));
}

/** The subscriptions ConfigAdmin reads and changes (client-metrics-resources.ts's ClientMetricsResources). */
export interface ClientMetricsStore {
  get(name: string): Readonly<Record<string, string>>;
  set(name: string, configs: Record<string, string>): Promise<void>;
}

/** DescribeConfigs on a client-metrics resource (an unknown name has no entries, as Kafka). */
export function describeClientMetrics(store: ClientMetricsStore, name: string, keys: readonly string[] | null): ConfigEntry[] {
  if (name === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Client metrics subscription name must not be empty');
  return describeClientMetricsEntries(store.get(name), keys);
}

/** (Incremental)AlterConfigs on a client-metrics resource: validated as Kafka does, then stored (no keys left: deleted). */
export async function alterClientMetrics(
  store: ClientMetricsStore,
  name: string,
  change: (current: Record<string, string>) => Record<string, string>,
  validateOnly: boolean,
): Promise<Record<string, string> | undefined> {
  const next = change({ ...store.get(name) });
  validateClientMetricsConfigs(name, next);
  if (validateOnly) return undefined;
  await store.set(name, next);
  return next;
}
