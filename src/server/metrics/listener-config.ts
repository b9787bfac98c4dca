/**
 * The metrics listener's settings from the broker's configuration (metrics.* keys,
 * src/config/defs-metrics-listener.ts), checked when the configuration loads: every invalid
 * combination is a one-line ConfigError naming the key (https without a key store, a user
 * without a password, ...). TLS is built by security/tls's listener code (PEM and PKCS12 key
 * stores, PEM trust stores, client auth), reading metrics.ssl.<key> where a listener reads ssl.<key>.
 */
import type { SecureContextOptions } from 'node:tls';
import { configDef } from '../../config/defs.js';
import { ConfigError } from '../../config/errors.js';
import { buildListenerTls, type SslClientAuth } from '../../security/tls/server-tls.js';

export interface MetricsListenerTls {
  /** Key store, trust store, protocol versions and ciphers, checked (a secure context was built from them). */
  options: SecureContextOptions;
  clientAuth: SslClientAuth;
}

export interface MetricsListenerConfig {
  /** As configured, for log lines. */
  url: string;
  scheme: 'http' | 'https';
  /** '' = every interface. */
  host: string;
  port: number;
  tls?: MetricsListenerTls;
  /** metrics.basic.auth.*: what /metrics asks of a scraper. */
  basicAuth?: { user: string; password: string };
}

const LISTENER = /^(https?):\/\/(\[[0-9A-Fa-f:.]+\]|[^:/[\]\s]*):(\d{1,5})\/?$/;
const KEY = 'metrics.listener';

/** The metrics listener's settings, or null when metrics.listener is empty (off). */
export function metricsListenerConfig(raw: ReadonlyMap<string, string>): MetricsListenerConfig | null {
  const setting = (key: string): string | null => {
    const v = raw.get(key)?.trim();
    return v === undefined || v === '' ? null : v;
  };
  const url = setting(KEY);
  const user = setting('metrics.basic.auth.user');
  // Not trimmed (a password may start or end with a space); empty = unset, as for other keys.
  const password = raw.get('metrics.basic.auth.password') || null;
  if (url === null) return null;
  const m = LISTENER.exec(url);
  const port = m ? Number(m[3]) : -1;
  if (!m || port > 65535) {
    throw new ConfigError(
      `Invalid value ${url} for configuration ${KEY}: expected http://host:port or https://host:port (empty host: every interface; empty value: off)`,
      KEY,
    );
  }
  if (user !== null && password === null) {
    throw new ConfigError('metrics.basic.auth.user is set without metrics.basic.auth.password', 'metrics.basic.auth.password');
  }
  if (user === null && password !== null) {
    throw new ConfigError('metrics.basic.auth.password is set without metrics.basic.auth.user', 'metrics.basic.auth.user');
  }
  const scheme = m[1] as 'http' | 'https';
  const tlsKeys = [...raw.keys()].filter((k) => k.startsWith('metrics.ssl.') && setting(k) !== null);
  if (scheme === 'http' && tlsKeys.length > 0) {
    throw new ConfigError(`${tlsKeys[0]} is set but ${KEY} ${url} is not https`, tlsKeys[0]);
  }
  return {
    url,
    scheme,
    host: m[2]!.replace(/^\[|\]$/g, ''),
    port,
    ...(scheme === 'https' ? { tls: metricsTls(url, setting) } : {}),
    ...(user !== null ? { basicAuth: { user, password: password! } } : {}),
  };
}

function metricsTls(url: string, setting: (key: string) => string | null): MetricsListenerTls {
  if (setting('metrics.ssl.keystore.location') === null) {
    throw new ConfigError(
      `${KEY} ${url} is https but has no key store: set metrics.ssl.keystore.location (metrics.ssl.keystore.type=PEM or PKCS12)`,
      'metrics.ssl.keystore.location',
    );
  }
  // The listener code reads ssl.<key>: give it metrics.ssl.<key>, else the metrics key's default,
  // else Kafka's (protocols, principal mapping).
  const get = (key: string): string | null => setting(`metrics.${key}`) ?? configDef(`metrics.${key}`)?.default ?? configDef(key)?.default ?? null;
  try {
    const tls = buildListenerTls(KEY, get);
    const options = { ...tls.material, minVersion: tls.minVersion, maxVersion: tls.maxVersion, ...(tls.ciphers !== undefined ? { ciphers: tls.ciphers } : {}) };
    return { options, clientAuth: tls.clientAuth };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Its lines name ssl.<key>: here they are metrics.ssl.<key>.
    const key = err.key?.startsWith('ssl.') ? `metrics.${err.key}` : err.key;
    throw new ConfigError(err.message.replace(/(?<![\w.])ssl\./g, 'metrics.ssl.'), key);
  }
}
