/**
 * The TLS side of an SSL or SASL_SSL listener, built from Kafka's ssl.* configs as Kafka's
 * DefaultSslEngineFactory reads them (listener.name.<listener>.ssl.* over ssl.*):
 * - key store: ssl.keystore.type=PEM with ssl.keystore.location (one file: private key and
 *   certificate chain) or inline ssl.keystore.key + ssl.keystore.certificate.chain, the key
 *   decrypted with ssl.key.password; PKCS12 with ssl.keystore.location + ssl.keystore.password;
 *   JKS is refused (Node has no reader for it);
 * - trust store: ssl.truststore.type=PEM with ssl.truststore.location or ssl.truststore.certificates;
 * - ssl.client.auth (required | requested | none), ssl.enabled.protocols, ssl.protocol, ssl.cipher.suites;
 * - ssl.principal.mapping.rules, turning a client certificate's subject into the principal name.
 * Anything wrong is a ConfigError with one line naming the listener and the key.
 */
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { ConfigError } from '../../config/errors.js';
import { SslPrincipalMapper } from './principal-mapper.js';

export type SslClientAuth = 'required' | 'requested' | 'none';

/** Reads one ssl.* setting for a listener (its listener.name.<l>. form first); null when unset. */
export type SslSettings = (key: string) => string | null;

/** PEM / PKCS12 material, also what the broker presents when it is the client of this listener. */
export interface TlsMaterial {
  cert?: string;
  key?: string;
  pfx?: Buffer;
  passphrase?: string;
  ca?: string;
}

export interface ListenerTls {
  listenerName: string;
  secureContext: tls.SecureContext;
  clientAuth: SslClientAuth;
  mapper: SslPrincipalMapper;
  material: TlsMaterial;
  minVersion: tls.SecureVersion;
  maxVersion: tls.SecureVersion;
  ciphers?: string;
  /** ssl.endpoint.identification.algorithm: "https" verifies the host name when this broker connects as a client. */
  verifyHostname: boolean;
  /** Files the context was read from (a dynamic reload re-reads them). */
  files: string[];
}

const VERSIONS: readonly tls.SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

// Kafka (Java) names TLS 1.2 suites by their IANA names; OpenSSL by its own. TLS 1.3 names agree.
const IANA_TO_OPENSSL: Readonly<Record<string, string>> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_DHE_RSA_WITH_AES_128_GCM_SHA256: 'DHE-RSA-AES128-GCM-SHA256',
  TLS_DHE_RSA_WITH_AES_256_GCM_SHA384: 'DHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384: 'ECDHE-ECDSA-AES256-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384: 'ECDHE-RSA-AES256-SHA384',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
};

function listOf(value: string | null): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function readFile(where: string, key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`${where}: cannot read ${key} ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? (err as Error).message)}`, key);
  }
}

/** Kafka's inline PEM values may come on one line (e.g. from a properties file); restore the line breaks. */
export function pemText(value: string): string {
  if (value.includes('\n')) return value;
  return value
    .replace(/(-----BEGIN [A-Z ]+-----)\s*/g, '$1\n')
    .replace(/\s*(-----END [A-Z ]+-----)/g, '\n$1')
    .replace(/(-----END [A-Z ]+-----)\s*/g, '$1\n')
    .replace(/([A-Za-z0-9+/=]{64})(?=[A-Za-z0-9+/=])/g, '$1\n');
}

const PRIVATE_KEY = /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z]+ )?PRIVATE KEY-----/;
const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The key store named by ssl.keystore.* (`where` starts each error line, e.g. "Listener SSL").
 * `required`: a missing key store is an error (servers); clients may have none.
 */
export function keyStore(where: string, get: SslSettings, required = true): { material: TlsMaterial; files: string[] } {
  const type = (get('ssl.keystore.type') ?? 'JKS').toUpperCase();
  const location = get('ssl.keystore.location');
  const inlineKey = get('ssl.keystore.key');
  const inlineChain = get('ssl.keystore.certificate.chain');
  const keyPassword = get('ssl.key.password') ?? undefined;
  if (inlineKey !== null || inlineChain !== null) {
    if (type !== 'PEM')
      throw new ConfigError(`${where}: ssl.keystore.key / ssl.keystore.certificate.chain need ssl.keystore.type=PEM, but it is ${type}`, 'ssl.keystore.type');
    if (inlineKey === null || inlineChain === null)
      throw new ConfigError(`${where}: ssl.keystore.key and ssl.keystore.certificate.chain must be set together`, 'ssl.keystore.key');
    if (location !== null)
      throw new ConfigError(`${where}: ssl.keystore.location cannot be set with ssl.keystore.key / ssl.keystore.certificate.chain`, 'ssl.keystore.location');
    return { material: { key: pemText(inlineKey), cert: pemText(inlineChain), ...(keyPassword !== undefined ? { passphrase: keyPassword } : {}) }, files: [] };
  }
  if (location === null) {
    if (!required) return { material: {}, files: [] };
    throw new ConfigError(
      `${where} uses TLS but has no key store: set ssl.keystore.type=PEM and ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain)`,
      'ssl.keystore.location',
    );
  }
  if (type === 'PEM') {
    const text = readFile(where, 'ssl.keystore.location', location).toString('utf8');
    const key = PRIVATE_KEY.exec(text)?.[0];
    const certs = text.match(CERTIFICATE);
    if (key === undefined || certs === null) {
      throw new ConfigError(`${where}: ssl.keystore.location ${location} must hold a PEM private key and its certificate chain`, 'ssl.keystore.location');
    }
    return { material: { key, cert: certs.join('\n'), ...(keyPassword !== undefined ? { passphrase: keyPassword } : {}) }, files: [location] };
  }
  if (type === 'PKCS12') {
    const password = get('ssl.keystore.password') ?? undefined;
    return {
      material: { pfx: readFile(where, 'ssl.keystore.location', location), ...(password !== undefined ? { passphrase: password } : {}) },
      files: [location],
    };
  }
  throw new ConfigError(`${where}: ssl.keystore.type ${type} is not supported; use PEM (or PKCS12)`, 'ssl.keystore.type');
}

/** The trust store named by ssl.truststore.* (none when unset). */
export function trustStore(where: string, get: SslSettings): { ca?: string; files: string[] } {
  const type = (get('ssl.truststore.type') ?? 'JKS').toUpperCase();
  const location = get('ssl.truststore.location');
  const inline = get('ssl.truststore.certificates');
  if (location === null && inline === null) return { files: [] };
  if (type !== 'PEM') throw new ConfigError(`${where}: ssl.truststore.type ${type} is not supported; use ssl.truststore.type=PEM`, 'ssl.truststore.type');
  if (location !== null && inline !== null)
    throw new ConfigError(`${where}: set ssl.truststore.location or ssl.truststore.certificates, not both`, 'ssl.truststore.certificates');
  const text = inline !== null ? pemText(inline) : readFile(where, 'ssl.truststore.location', location!).toString('utf8');
  const certs = text.match(CERTIFICATE);
  if (certs === null)
    throw new ConfigError(`${where}: the trust store (${location ?? 'ssl.truststore.certificates'}) holds no PEM certificate`, 'ssl.truststore.location');
  return { ca: certs.join('\n'), files: location !== null ? [location] : [] };
}

function protocols(listener: string, get: SslSettings): { minVersion: tls.SecureVersion; maxVersion: tls.SecureVersion } {
  const enabled = listOf(get('ssl.enabled.protocols') ?? 'TLSv1.2,TLSv1.3');
  const known = enabled.filter((p): p is tls.SecureVersion => (VERSIONS as readonly string[]).includes(p));
  if (known.length === 0)
    throw new ConfigError(`Listener ${listener}: ssl.enabled.protocols (${enabled.join(',')}) names none of ${VERSIONS.join(', ')}`, 'ssl.enabled.protocols');
  const idx = known.map((p) => VERSIONS.indexOf(p));
  // ssl.protocol names the SSLContext: TLSv1.2 cannot speak 1.3; TLS / TLSv1.3 speak all enabled ones.
  const protocol = get('ssl.protocol') ?? 'TLSv1.3';
  const cap = protocol === 'TLS' ? VERSIONS.length - 1 : VERSIONS.indexOf(protocol as tls.SecureVersion);
  if (cap < 0) throw new ConfigError(`Listener ${listener}: ssl.protocol ${protocol} is not one of TLS, ${VERSIONS.join(', ')}`, 'ssl.protocol');
  const max = Math.min(Math.max(...idx), cap);
  const min = Math.min(...idx);
  if (min > max)
    throw new ConfigError(`Listener ${listener}: ssl.protocol ${protocol} allows none of ssl.enabled.protocols (${enabled.join(',')})`, 'ssl.protocol');
  return { minVersion: VERSIONS[min]!, maxVersion: VERSIONS[max]! };
}

function ciphers(get: SslSettings): string | undefined {
  const suites = listOf(get('ssl.cipher.suites'));
  if (suites.length === 0) return undefined;
  return suites.map((s) => IANA_TO_OPENSSL[s] ?? s).join(':');
}

/** Builds a listener's TLS set-up from its settings; throws ConfigError (one line) when unusable. */
export function buildListenerTls(listenerName: string, get: SslSettings): ListenerTls {
  const clientAuth = (get('ssl.client.auth') ?? 'none').toLowerCase();
  if (clientAuth !== 'required' && clientAuth !== 'requested' && clientAuth !== 'none') {
    throw new ConfigError(`Listener ${listenerName}: ssl.client.auth must be required, requested or none, got ${clientAuth}`, 'ssl.client.auth');
  }
  const ks = keyStore(`Listener ${listenerName}`, get);
  const ts = trustStore(`Listener ${listenerName}`, get);
  const versions = protocols(listenerName, get);
  const cipherList = ciphers(get);
  let mapper: SslPrincipalMapper;
  try {
    mapper = SslPrincipalMapper.fromRules(get('ssl.principal.mapping.rules'));
  } catch (err) {
    throw new ConfigError(`Listener ${listenerName}: ssl.principal.mapping.rules: ${(err as Error).message}`, 'ssl.principal.mapping.rules');
  }
  const material: TlsMaterial = { ...ks.material, ...(ts.ca !== undefined ? { ca: ts.ca } : {}) };
  let secureContext: tls.SecureContext;
  try {
    secureContext = tls.createSecureContext({ ...material, ...versions, ...(cipherList !== undefined ? { ciphers: cipherList } : {}) });
  } catch (err) {
    throw new ConfigError(`Listener ${listenerName}: invalid TLS key store, trust store or cipher suites: ${describeTlsError(err)}`, 'ssl.keystore.location');
  }
  if (clientAuth !== 'none' && ts.ca === undefined) {
    throw new ConfigError(
      `Listener ${listenerName}: ssl.client.auth=${clientAuth} needs a trust store (ssl.truststore.location or ssl.truststore.certificates) to check client certificates`,
      'ssl.truststore.location',
    );
  }
  const endpointId = get('ssl.endpoint.identification.algorithm') ?? 'https';
  return {
    listenerName,
    secureContext,
    clientAuth,
    mapper,
    material,
    ...versions,
    ...(cipherList !== undefined ? { ciphers: cipherList } : {}),
    verifyHostname: endpointId.toLowerCase() === 'https',
    files: [...ks.files, ...ts.files],
  };
}

function describeTlsError(err: unknown): string {
  const e = err as { message?: string; code?: string; reason?: string };
  const msg = e.reason ?? e.message ?? String(err);
  if (/bad decrypt|BAD_DECRYPT|bad password/i.test(msg)) return 'the private key cannot be decrypted (check ssl.key.password)';
  if (/mac verify failure|MAC/i.test(msg)) return 'the PKCS12 key store cannot be opened (check ssl.keystore.password)';
  if (/key values mismatch|KEY_VALUES_MISMATCH/i.test(msg)) return 'the private key does not belong to the certificate';
  if (/no cipher match|NO_CIPHER_MATCH/i.test(msg)) return 'ssl.cipher.suites matches no cipher suite';
  return msg.split('\n')[0]!;
}

/** The settings of one listener: listener.name.<lower-case name>.<key> first, then <key>. */
export function listenerSettings(raw: ReadonlyMap<string, string>, listenerName: string, defaults: (key: string) => string | null): SslSettings {
  const prefix = `listener.name.${listenerName.toLowerCase()}.`;
  return (key) => raw.get(prefix + key) ?? raw.get(key) ?? defaults(key);
}
