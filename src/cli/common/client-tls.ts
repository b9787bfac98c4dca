/**
 * Kafka's client security config names → the client library's ClientSecurity (protocol and TLS):
 * security.protocol, ssl.truststore.type=PEM with ssl.truststore.location or
 * ssl.truststore.certificates, ssl.keystore.type=PEM with ssl.keystore.location (key and chain
 * in one file) or ssl.keystore.key + ssl.keystore.certificate.chain, PKCS12 key stores,
 * ssl.key.password, ssl.keystore.password, ssl.endpoint.identification.algorithm ("https", the
 * default, checks the broker's host name; "" does not), ssl.enabled.protocols, ssl.cipher.suites.
 * Bad settings are a CliError: one line, no stack trace.
 */
import type { ClientSecurity, ClientTls } from '../../security/client-security.js';
import { isSecurityProtocol, usesTls } from '../../security/security-protocol.js';
import { ConfigError } from '../../config/errors.js';
import { keyStore, trustStore } from '../../security/tls/server-tls.js';
import { CliError } from './tool.js';

const VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
type Version = (typeof VERSIONS)[number];

/** The protocol and TLS part of a client's security from its properties; undefined for PLAINTEXT defaults. */
export function clientTlsSecurityFrom(props: ReadonlyMap<string, string>): ClientSecurity | undefined {
  const raw = props.get('security.protocol')?.trim();
  if (raw === undefined || raw === '') return undefined;
  const protocol = raw.toUpperCase();
  if (!isSecurityProtocol(protocol)) throw new CliError(`security.protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got "${raw}"`);
  if (!usesTls(protocol)) return { protocol };
  return { protocol, tls: clientTlsFrom(props) };
}

function clientTlsFrom(props: ReadonlyMap<string, string>): ClientTls {
  const get = (key: string): string | null => {
    const v = props.get(key);
    return v === undefined || v.trim() === '' ? null : v;
  };
  const where = 'client config';
  try {
    const ks = keyStore(where, get, false);
    const ts = trustStore(where, get);
    const tls: ClientTls = {
      ...(ts.ca !== undefined ? { ca: ts.ca } : {}),
      ...(ks.material.cert !== undefined ? { cert: ks.material.cert } : {}),
      ...(ks.material.key !== undefined ? { key: ks.material.key } : {}),
      ...(ks.material.pfx !== undefined ? { pfx: ks.material.pfx } : {}),
      ...(ks.material.passphrase !== undefined ? { passphrase: ks.material.passphrase } : {}),
      verifyHostname: (props.get('ssl.endpoint.identification.algorithm') ?? 'https').trim().toLowerCase() === 'https',
    };
    const enabled = (get('ssl.enabled.protocols') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s): s is Version => (VERSIONS as readonly string[]).includes(s));
    if (enabled.length > 0) {
      const idx = enabled.map((v) => VERSIONS.indexOf(v));
      tls.minVersion = VERSIONS[Math.min(...idx)]!;
      tls.maxVersion = VERSIONS[Math.max(...idx)]!;
    }
    const suites = get('ssl.cipher.suites');
    if (suites !== null)
      tls.ciphers = suites
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
        .join(':');
    return tls;
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
}
