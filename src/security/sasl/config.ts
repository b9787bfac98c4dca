/**
 * The broker's SASL settings, per listener, with Kafka's names and precedence:
 * `listener.name.<listener>.<mechanism>.<key>` over `listener.name.<listener>.<key>` over `<key>`
 * (listener and mechanism in lower case).
 *
 * - sasl.enabled.mechanisms (Kafka default GSSAPI): Fjord serves PLAIN, SCRAM-SHA-256 and
 *   SCRAM-SHA-512. Others listed beside them are left out of the handshake's list (the client
 *   would fail on them anyway); a SASL listener with none of the three stops start-up.
 * - listener.name.<l>.plain.sasl.jaas.config: PlainLoginModule with user_<name>="<password>" for
 *   PLAIN's users, and username/password for the broker's own login on the inter-broker listener.
 * - sasl.mechanism.inter.broker.protocol: the broker's mechanism towards other brokers when the
 *   inter-broker listener is SASL; it must be enabled there and have a JAAS username/password.
 * - connections.max.reauth.ms (0 = off), sasl.server.max.receive.size,
 *   connection.failed.authentication.delay.ms.
 */
import { ConfigError } from '../../config/errors.js';
import { configDef } from '../../config/defs.js';
import { parseConfigValue, type ConfigValue } from '../../config/values.js';
import { usesSasl, type NamedListener } from '../security-protocol.js';
import { isSupportedMechanism, type SaslMechanismName } from './mechanisms.js';
import { type JaasParseError, parseJaasConfig, type JaasEntry } from './jaas.js';

export interface SaslListenerConfig {
  listenerName: string;
  /** Enabled and served, in the configured order. */
  mechanisms: SaslMechanismName[];
  /** PLAIN users (user_<name> options of the PLAIN JAAS config). */
  plainUsers: ReadonlyMap<string, string>;
  /** connections.max.reauth.ms for each mechanism; 0 = sessions do not expire. */
  reauthMs: ReadonlyMap<SaslMechanismName, number>;
}

export interface SaslLogin {
  mechanism: SaslMechanismName;
  username: string;
  password: string;
}

export interface SaslServerConfig {
  /** SASL listeners by upper-case name. */
  listeners: ReadonlyMap<string, SaslListenerConfig>;
  /** sasl.server.max.receive.size: largest frame read before authentication. */
  maxReceiveSize: number;
  /** connection.failed.authentication.delay.ms. */
  failedAuthDelayMs: number;
  /** The broker's own login when the inter-broker listener is SASL. */
  interBrokerLogin?: SaslLogin;
}

/** Reads one key with Kafka's listener/mechanism prefixes; typed by the key's def. */
function lookup(raw: ReadonlyMap<string, string>, values: ReadonlyMap<string, ConfigValue>, key: string, listener: string, mechanism?: string): ConfigValue {
  const l = listener.toLowerCase();
  const candidates = [...(mechanism ? [`listener.name.${l}.${mechanism.toLowerCase()}.${key}`] : []), `listener.name.${l}.${key}`];
  const def = configDef(key);
  if (def === undefined) throw new Error(`BUG: ${key} is not in the config table`);
  for (const name of candidates) {
    const text = raw.get(name);
    if (text !== undefined) return parseConfigValue({ ...def, name }, text);
  }
  return values.get(key) ?? null;
}

function jaasFor(raw: ReadonlyMap<string, string>, values: ReadonlyMap<string, ConfigValue>, listener: string, mechanism: string): JaasEntry | undefined {
  const text = lookup(raw, values, 'sasl.jaas.config', listener, mechanism);
  if (typeof text !== 'string' || text.trim() === '') return undefined;
  const key = `listener.name.${listener.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config`;
  try {
    return parseJaasConfig(text);
  } catch (err) {
    throw new ConfigError(`Invalid value for configuration ${key}: ${(err as JaasParseError).message}`, key);
  }
}

export function saslServerConfig(
  raw: ReadonlyMap<string, string>,
  values: ReadonlyMap<string, ConfigValue>,
  listeners: readonly NamedListener[],
  interBrokerListenerName: string,
): SaslServerConfig {
  const byName = new Map<string, SaslListenerConfig>();
  for (const l of listeners) {
    if (!usesSasl(l.securityProtocol)) continue;
    const enabledValue = lookup(raw, values, 'sasl.enabled.mechanisms', l.name);
    const enabled = (Array.isArray(enabledValue) ? enabledValue : []).map((m) => m.trim().toUpperCase()).filter((m) => m !== '');
    const mechanisms = enabled.filter(isSupportedMechanism);
    if (mechanisms.length === 0) {
      throw new ConfigError(
        `Listener ${l.name} (${l.securityProtocol}) enables SASL mechanisms [${enabled.join(', ')}], none of which Fjord supports (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512): set sasl.enabled.mechanisms or listener.name.${l.name.toLowerCase()}.sasl.enabled.mechanisms`,
        'sasl.enabled.mechanisms',
      );
    }
    const plainUsers = new Map<string, string>();
    if (mechanisms.includes('PLAIN')) {
      const jaas = jaasFor(raw, values, l.name, 'PLAIN');
      if (jaas === undefined) {
        throw new ConfigError(
          `Listener ${l.name} enables SASL mechanism PLAIN but has no JAAS configuration: set listener.name.${l.name.toLowerCase()}.plain.sasl.jaas.config (PlainLoginModule with user_<name>="<password>" entries)`,
          'sasl.jaas.config',
        );
      }
      for (const [k, v] of jaas.options) if (k.startsWith('user_') && k.length > 5) plainUsers.set(k.slice(5), v);
    }
    const reauthMs = new Map<SaslMechanismName, number>();
    for (const m of mechanisms) {
      const v = lookup(raw, values, 'connections.max.reauth.ms', l.name, m);
      reauthMs.set(m, typeof v === 'number' && v > 0 ? v : 0);
    }
    byName.set(l.name, { listenerName: l.name, mechanisms, plainUsers, reauthMs });
  }

  let interBrokerLogin: SaslLogin | undefined;
  const ib = byName.get(interBrokerListenerName);
  if (ib !== undefined) {
    const mech = String(values.get('sasl.mechanism.inter.broker.protocol') ?? 'GSSAPI')
      .trim()
      .toUpperCase();
    if (!isSupportedMechanism(mech) || !ib.mechanisms.includes(mech)) {
      throw new ConfigError(
        `sasl.mechanism.inter.broker.protocol ${mech} must be one of the mechanisms Fjord serves on the inter-broker listener ${ib.listenerName} (${ib.mechanisms.join(', ')})`,
        'sasl.mechanism.inter.broker.protocol',
      );
    }
    const jaas = jaasFor(raw, values, ib.listenerName, mech);
    const username = jaas?.options.get('username');
    const password = jaas?.options.get('password');
    if (username === undefined || password === undefined) {
      throw new ConfigError(
        `The inter-broker listener ${ib.listenerName} uses SASL ${mech}: listener.name.${ib.listenerName.toLowerCase()}.${mech.toLowerCase()}.sasl.jaas.config needs username="..." password="..." for the broker's own login`,
        'sasl.jaas.config',
      );
    }
    interBrokerLogin = { mechanism: mech, username, password };
  }

  const maxReceiveSize = values.get('sasl.server.max.receive.size');
  const delay = values.get('connection.failed.authentication.delay.ms');
  return {
    listeners: byName,
    maxReceiveSize: typeof maxReceiveSize === 'number' ? maxReceiveSize : 524288,
    failedAuthDelayMs: typeof delay === 'number' ? delay : 100,
    ...(interBrokerLogin ? { interBrokerLogin } : {}),
  };
}

/** Whether `key` is a listener-prefixed form (listener.name.<l>.[<mech>.]<key>) of a known key. */
export function isListenerPrefixedKey(key: string): boolean {
  const m = /^listener\.name\.[^.]+\.(.+)$/.exec(key);
  if (m === null) return false;
  const rest = m[1]!;
  if (configDef(rest) !== undefined) return true;
  const dot = rest.indexOf('.');
  return dot > 0 && configDef(rest.slice(dot + 1)) !== undefined;
}
