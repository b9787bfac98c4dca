// Kafka's connection limits read from the broker's configuration layers: max.connections,
// max.connections.per.ip, max.connections.per.ip.overrides, max.connection.creation.rate, and per
// listener listener.name.<l>.max.connections / .max.connection.creation.rate. As Kafka's
// DynamicConnectionQuota they are dynamic (per broker or cluster default, via kafka-configs.sh):
// ConnectionQuotaReloader re-reads them after each change and hands them to the socket server.
import { isIP } from 'node:net';
import { configDef } from '../../config/defs.js';
import { ConfigError, invalidValue } from '../../config/errors.js';
import { parseConfigValue } from '../../config/values.js';

export const UNLIMITED_CONNECTIONS = 2147483647;

export interface ListenerConnectionQuota {
  maxConnections: number;
  maxConnectionCreationRate: number;
}

export interface ConnectionQuotaSettings {
  /** max.connections: connections on listeners other than the inter-broker one, broker-wide. */
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** max.connections.per.ip.overrides: address (IP literal or host name) → its own maximum. */
  maxConnectionsPerIpOverrides: ReadonlyMap<string, number>;
  /** max.connection.creation.rate: new connections per second, broker-wide (inter-broker listener exempt). */
  maxConnectionCreationRate: number;
  /** By listener name: its own key, else the broker-wide one (Kafka's valuesWithPrefixOverride). */
  listeners: ReadonlyMap<string, ListenerConnectionQuota>;
}

export const NO_CONNECTION_QUOTAS: ConnectionQuotaSettings = {
  maxConnections: UNLIMITED_CONNECTIONS,
  maxConnectionsPerIp: UNLIMITED_CONNECTIONS,
  maxConnectionsPerIpOverrides: new Map(),
  maxConnectionCreationRate: UNLIMITED_CONNECTIONS,
  listeners: new Map(),
};

/** A key's value as configured (null = unset), highest layer first. */
export type ConfigLookup = (key: string) => string | null;

/** Reads and checks the limits; throws ConfigError worded like Kafka's. */
export function connectionQuotaSettings(get: ConfigLookup, listenerNames: readonly string[]): ConnectionQuotaSettings {
  const int = (key: string, base = key): number => {
    const text = get(key);
    return parseConfigValue({ ...configDef(base)!, name: key }, text ?? configDef(base)!.default!) as number;
  };
  const maxConnections = int('max.connections');
  const maxConnectionsPerIp = int('max.connections.per.ip');
  const maxConnectionsPerIpOverrides = parseIpOverrides(get('max.connections.per.ip.overrides') ?? '');
  if (maxConnectionsPerIp === 0 && maxConnectionsPerIpOverrides.size === 0) {
    throw new ConfigError('max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.', 'max.connections.per.ip');
  }
  const maxConnectionCreationRate = int('max.connection.creation.rate');
  const listeners = new Map<string, ListenerConnectionQuota>();
  for (const name of listenerNames) {
    const prefix = `listener.name.${name.toLowerCase()}.`;
    listeners.set(name.toUpperCase(), {
      maxConnections: get(`${prefix}max.connections`) === null ? maxConnections : int(`${prefix}max.connections`, 'max.connections'),
      maxConnectionCreationRate:
        get(`${prefix}max.connection.creation.rate`) === null
          ? maxConnectionCreationRate
          : int(`${prefix}max.connection.creation.rate`, 'max.connection.creation.rate'),
    });
  }
  return { maxConnections, maxConnectionsPerIp, maxConnectionsPerIpOverrides, maxConnectionCreationRate, listeners };
}

const HOST_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/** "host:count,host:count" (an IPv6 address keeps its colons: the count follows the last one). */
export function parseIpOverrides(value: string): Map<string, number> {
  const key = 'max.connections.per.ip.overrides';
  const out = new Map<string, number>();
  for (const entry of value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const colon = entry.lastIndexOf(':');
    const host =
      colon > 0
        ? entry
            .slice(0, colon)
            .trim()
            .replace(/^\[(.*)\]$/, '$1')
        : '';
    const count = colon > 0 ? entry.slice(colon + 1).trim() : '';
    if (host === '' || !/^\d+$/.test(count) || Number(count) > UNLIMITED_CONNECTIONS) {
      throw invalidValue(key, value, `entry "${entry}" is not host:count`);
    }
    if (isIP(host) === 0 && !HOST_PATTERN.test(host)) throw invalidValue(key, value, `${key} contains invalid addresses : ${host}`);
    out.set(normaliseAddress(host), Number(count));
  }
  return out;
}

/** One spelling per address: an IPv4 client of a dual-stack listener shows as ::ffff:a.b.c.d. */
export function normaliseAddress(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}

/** The layers a dynamic change is checked against (ConfigAdmin's BrokerReconfigurable). */
export interface DynamicConfigLayers {
  perBroker: ReadonlyMap<string, string>;
  clusterDefault: ReadonlyMap<string, string>;
}

export interface ConnectionQuotaHost {
  setConnectionQuotas(settings: ConnectionQuotaSettings): void;
}

/** Applies dynamic changes of the connection limits (registered with ConfigAdmin.addReconfigurable). */
export class ConnectionQuotaReloader {
  constructor(
    private readonly listenerNames: readonly string[],
    private readonly staticRaw: ReadonlyMap<string, string>,
    private readonly host: ConnectionQuotaHost,
  ) {}

  /** Start-up: server.properties alone. */
  initial(): ConnectionQuotaSettings {
    return this.validate({ perBroker: new Map(), clusterDefault: new Map() });
  }

  validate(layers: DynamicConfigLayers): ConnectionQuotaSettings {
    const get: ConfigLookup = (key) => layers.perBroker.get(key) ?? layers.clusterDefault.get(key) ?? this.staticRaw.get(key) ?? null;
    return connectionQuotaSettings(get, this.listenerNames);
  }

  apply(layers: DynamicConfigLayers): void {
    this.host.setConnectionQuotas(this.validate(layers));
  }
}
