// Parsing of Kafka's `listeners` / `advertised.listeners` values ("NAME://host:port,...").
import os from 'node:os';
import { ConfigError } from '../../config/errors.js';
import { isSecurityProtocol, type SecurityProtocol } from '../../security/security-protocol.js';

export interface ListenerSpec {
  /** Upper-cased listener name, e.g. PLAINTEXT. */
  name: string;
  /** Host to bind / advertise; '0.0.0.0' when the configured host was empty. */
  host: string;
  /** 0 = any free port (see SocketServer.boundPorts()). */
  port: number;
  securityProtocol: SecurityProtocol;
}

const KNOWN_PROTOCOLS = new Set(['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL']);
export const DEFAULT_SECURITY_PROTOCOL_MAP = 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL';
const LISTENER_PATTERN = /^([A-Za-z0-9_-]+):\/\/(\[[^\]]*\]|[^:/[\]]*):(\d+)$/;
const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::']);

/** Parses "NAME:PROTOCOL,..." (listener.security.protocol.map). */
export function parseSecurityProtocolMap(value: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const colon = entry.indexOf(':');
    if (colon <= 0)
      throw new ConfigError(
        `Invalid value ${value} for configuration listener.security.protocol.map: entry "${entry}" is not NAME:PROTOCOL`,
        'listener.security.protocol.map',
      );
    map.set(
      entry.slice(0, colon).trim().toUpperCase(),
      entry
        .slice(colon + 1)
        .trim()
        .toUpperCase(),
    );
  }
  return map;
}

/**
 * Parses a listeners string. Listener names missing from the protocol map are taken as PLAINTEXT
 * (Kafka would refuse them); a map entry naming an unknown protocol stops start-up with a ConfigError.
 */
export function parseListeners(
  value: string,
  securityProtocolMap: Map<string, string> = parseSecurityProtocolMap(DEFAULT_SECURITY_PROTOCOL_MAP),
  configKey = 'listeners',
): ListenerSpec[] {
  const specs: ListenerSpec[] = [];
  for (const entry of value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const match = LISTENER_PATTERN.exec(entry);
    if (match === null) {
      throw new ConfigError(`Invalid value ${value} for configuration ${configKey}: "${entry}" is not of the form NAME://host:port`, configKey);
    }
    const name = match[1]!.toUpperCase();
    const rawHost = match[2]!;
    const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
    const port = Number(match[3]);
    if (port > 65535) throw new ConfigError(`Invalid value ${value} for configuration ${configKey}: port ${port} is out of range`, configKey);
    const protocol = securityProtocolMap.get(name) ?? (KNOWN_PROTOCOLS.has(name) ? name : 'PLAINTEXT');
    if (!isSecurityProtocol(protocol)) {
      throw new ConfigError(
        `Listener ${entry} uses security protocol ${protocol}, which is none of ${[...KNOWN_PROTOCOLS].join(', ')} (listener.security.protocol.map)`,
        'listener.security.protocol.map',
      );
    }
    specs.push({ name, host: host === '' ? '0.0.0.0' : host, port, securityProtocol: protocol });
  }
  checkDistinct(specs, value, configKey);
  return specs;
}

function checkDistinct(specs: ListenerSpec[], value: string, configKey: string): void {
  const names = new Set<string>();
  const ports = new Set<number>();
  for (const spec of specs) {
    if (names.has(spec.name))
      throw new ConfigError(`Invalid value ${value} for configuration ${configKey}: listener name ${spec.name} is used twice`, configKey);
    names.add(spec.name);
    if (spec.port !== 0 && ports.has(spec.port)) {
      throw new ConfigError(`Invalid value ${value} for configuration ${configKey}: port ${spec.port} is used by two listeners`, configKey);
    }
    ports.add(spec.port);
  }
}

/**
 * advertised.listeners: parsed from its own value when set, otherwise copied from listeners.
 * A wildcard host (empty, 0.0.0.0, ::) inherited from listeners advertises the machine's host name;
 * an explicit 0.0.0.0 in advertised.listeners is refused as Kafka does.
 */
export function deriveAdvertisedListeners(
  listeners: ListenerSpec[],
  advertisedValue: string | null,
  securityProtocolMap?: Map<string, string>,
  hostname: string = os.hostname(),
): ListenerSpec[] {
  if (advertisedValue === null) {
    return listeners.map((l) => ({ ...l, host: WILDCARD_HOSTS.has(l.host) ? hostname : l.host }));
  }
  const advertisedEmptyHosts = new Set(
    advertisedValue
      .split(',')
      .map((s) => s.trim())
      .filter((s) => /^[^:]+:\/\/:/.test(s))
      .map((s) => s.split(':')[0]!.toUpperCase()),
  );
  const advertised = parseListeners(advertisedValue, securityProtocolMap, 'advertised.listeners');
  const listenerNames = new Set(listeners.map((l) => l.name));
  return advertised.map((a) => {
    if (!listenerNames.has(a.name)) {
      throw new ConfigError(`advertised.listeners listener ${a.name} is not one of the listeners (${[...listenerNames].join(', ')})`, 'advertised.listeners');
    }
    if (advertisedEmptyHosts.has(a.name)) return { ...a, host: hostname };
    if (WILDCARD_HOSTS.has(a.host)) {
      throw new ConfigError(`advertised.listeners cannot use the nonroutable meta-address ${a.host}. Use a routable IP address.`, 'advertised.listeners');
    }
    return a;
  });
}

/** Replaces advertised port 0 by the port actually bound for the listener of the same name. */
export function resolveAdvertisedPorts(advertised: ListenerSpec[], boundPorts: Map<string, number>): ListenerSpec[] {
  return advertised.map((a) => (a.port === 0 && boundPorts.has(a.name) ? { ...a, port: boundPorts.get(a.name)! } : a));
}
