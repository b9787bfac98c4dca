/**
 * Per-group dynamic configs (Kafka 4.0's GROUP config resource, type 32): a consumer group's own
 * consumer.session.timeout.ms and consumer.heartbeat.interval.ms, which win over the broker's
 * group.consumer.* settings at the group's members' next heartbeats. Validated as Kafka 4.0's
 * GroupConfig validates them (names, INT parsing, the broker's min/max bounds, the session
 * longer than the interval) with its error words, all answered INVALID_CONFIG; described with
 * the broker's values as DEFAULT_CONFIG where the group sets none. Kafka's share.* keys (share
 * groups, KIP-932) are not served: Fjord has no share groups.
 */
import { CONFIG_TYPE_CODES } from '../../config/index.js';
import type { GroupConfigOverrides } from '../../coordinator/group/consumer/settings.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { ConfigEntry } from './config-describer.js';

export const CONSUMER_SESSION_TIMEOUT_MS = 'consumer.session.timeout.ms';
export const CONSUMER_HEARTBEAT_INTERVAL_MS = 'consumer.heartbeat.interval.ms';
const GROUP_CONFIG_NAMES = [CONSUMER_SESSION_TIMEOUT_MS, CONSUMER_HEARTBEAT_INTERVAL_MS] as const;

/** DescribeConfigs' source code for a key the group sets (ConfigSource.GROUP_CONFIG). */
export const GROUP_CONFIG_SOURCE = 8;
const DEFAULT_CONFIG_SOURCE = 5;

/** The broker settings group configs default to and are bounded by (BrokerConfig has them). */
export interface GroupConfigBounds {
  readonly groupConsumerSessionTimeoutMs: number;
  readonly groupConsumerHeartbeatIntervalMs: number;
  readonly groupConsumerMinSessionTimeoutMs: number;
  readonly groupConsumerMaxSessionTimeoutMs: number;
  readonly groupConsumerMinHeartbeatIntervalMs: number;
  readonly groupConsumerMaxHeartbeatIntervalMs: number;
}

const DOCS: Readonly<Record<string, string>> = {
  [CONSUMER_SESSION_TIMEOUT_MS]: 'The timeout to detect client failures when using the consumer group protocol.',
  [CONSUMER_HEARTBEAT_INTERVAL_MS]: 'The heartbeat interval given to the members of a consumer group.',
};

/** A key's type and default, as IncrementalAlterConfigs' APPEND and SUBTRACT need them (both refused on INT keys). */
export function groupConfigKeyInfo(name: string): { type: 'int'; default: string | null } | undefined {
  return (GROUP_CONFIG_NAMES as readonly string[]).includes(name) ? { type: 'int', default: null } : undefined;
}

/** Kafka's INT parsing (ConfigDef), then its atLeast(1). */
function parseInt32(name: string, text: string): number {
  const trimmed = text.trim();
  const n = Number(trimmed);
  if (!/^[+-]?\d+$/.test(trimmed) || n > 2_147_483_647 || n < -2_147_483_648) {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${text} for configuration ${name}: Not a number of type INT`);
  }
  if (n < 1) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${n} for configuration ${name}: Value must be at least 1`);
  return n;
}

/**
 * Throws Kafka's INVALID_CONFIG for configs (as they would be stored) Kafka would refuse. A key
 * the group leaves unset counts at the broker's value: the one its members would get.
 */
export function validateGroupConfigs(group: string, configs: Readonly<Record<string, string>>, bounds: GroupConfigBounds): GroupConfigOverrides {
  if (group === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Group name must not be empty');
  for (const key of Object.keys(configs)) {
    if (groupConfigKeyInfo(key) === undefined) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown group config name: ${key}`);
  }
  const overrides = parseGroupConfigs(configs);
  const heartbeat = overrides.heartbeatIntervalMs ?? bounds.groupConsumerHeartbeatIntervalMs;
  const session = overrides.sessionTimeoutMs ?? bounds.groupConsumerSessionTimeoutMs;
  const refuse = (message: string): never => {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, message);
  };
  const atLeast = 'must be greater than or equal to';
  const atMost = 'must be less than or equal to';
  if (heartbeat < bounds.groupConsumerMinHeartbeatIntervalMs) refuse(`${CONSUMER_HEARTBEAT_INTERVAL_MS} ${atLeast} group.consumer.min.heartbeat.interval.ms`);
  if (heartbeat > bounds.groupConsumerMaxHeartbeatIntervalMs) refuse(`${CONSUMER_HEARTBEAT_INTERVAL_MS} ${atMost} group.consumer.max.heartbeat.interval.ms`);
  if (session < bounds.groupConsumerMinSessionTimeoutMs) refuse(`${CONSUMER_SESSION_TIMEOUT_MS} ${atLeast} group.consumer.min.session.timeout.ms`);
  if (session > bounds.groupConsumerMaxSessionTimeoutMs) refuse(`${CONSUMER_SESSION_TIMEOUT_MS} ${atMost} group.consumer.max.session.timeout.ms`);
  if (session <= heartbeat) refuse(`${CONSUMER_SESSION_TIMEOUT_MS} must be greater than ${CONSUMER_HEARTBEAT_INTERVAL_MS}`);
  return overrides;
}

/** The coordinator's view of stored (validated) configs. */
export function parseGroupConfigs(configs: Readonly<Record<string, string>>): GroupConfigOverrides {
  const session = configs[CONSUMER_SESSION_TIMEOUT_MS];
  const heartbeat = configs[CONSUMER_HEARTBEAT_INTERVAL_MS];
  return {
    ...(session !== undefined ? { sessionTimeoutMs: parseInt32(CONSUMER_SESSION_TIMEOUT_MS, session) } : {}),
    ...(heartbeat !== undefined ? { heartbeatIntervalMs: parseInt32(CONSUMER_HEARTBEAT_INTERVAL_MS, heartbeat) } : {}),
  };
}

/** DescribeConfigs' entries: every group config, the group's own as GROUP_CONFIG, else the broker's value as DEFAULT_CONFIG. */
export function describeGroupConfigEntries(
  group: string,
  configs: Readonly<Record<string, string>>,
  bounds: GroupConfigBounds,
  keys: readonly string[] | null,
): ConfigEntry[] {
  if (group === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Group name must not be empty');
  const brokerValue: Record<string, number> = {
    [CONSUMER_SESSION_TIMEOUT_MS]: bounds.groupConsumerSessionTimeoutMs,
    [CONSUMER_HEARTBEAT_INTERVAL_MS]: bounds.groupConsumerHeartbeatIntervalMs,
  };
  return GROUP_CONFIG_NAMES.filter((name) => keys === null || keys.includes(name)).map((name) => {
    const own = configs[name];
    const value = own ?? String(brokerValue[name]);
    return {
      name,
      value,
      readOnly: false,
      isDefault: own === undefined,
      source: own === undefined ? DEFAULT_CONFIG_SOURCE : GROUP_CONFIG_SOURCE,
      sensitive: false,
      synonyms: own === undefined ? [] : [{ name, value: own, source: GROUP_CONFIG_SOURCE }],
      configType: CONFIG_TYPE_CODES.int,
      documentation: DOCS[name] ?? '',
    };
  });
}

/** The groups' configs ConfigAdmin reads and changes (group-config-store.ts's GroupConfigStore). */
export interface GroupConfigsStore {
  get(group: string): Readonly<Record<string, string>>;
  set(group: string, configs: Record<string, string>): Promise<void>;
}

/** (Incremental)AlterConfigs on a group: validated as Kafka does, then stored (no keys left: deleted). Returns what was stored. */
export async function alterGroupConfigs(
  store: GroupConfigsStore,
  group: string,
  change: (current: Record<string, string>) => Record<string, string>,
  bounds: GroupConfigBounds,
  validateOnly: boolean,
): Promise<Record<string, string> | undefined> {
  const next = change({ ...store.get(group) });
  validateGroupConfigs(group, next, bounds);
  if (validateOnly) return undefined;
  await store.set(group, next);
  return next;
}
