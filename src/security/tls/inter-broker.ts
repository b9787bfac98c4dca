/**
 * How this broker secures its own connections to other brokers (controller requests, replica
 * fetches, transaction markers, controlled shutdown): the protocol of the inter-broker listener
 * and, for SSL / SASL_SSL, that listener's TLS settings used as a client, as Kafka does: its trust
 * store checks the other broker, its key store is the client certificate (presented when the
 * listener asks for one), ssl.endpoint.identification.algorithm decides the host name check.
 */
import type { ClientSecurity } from '../client-security.js';
import type { SecurityProtocol } from '../security-protocol.js';
import type { ListenerTls } from './server-tls.js';

/** The broker settings it reads (BrokerConfig has them). */
export interface InterBrokerListenerSettings {
  interBrokerListenerName: string;
  interBrokerSecurityProtocol: SecurityProtocol;
  listenerTls: ReadonlyMap<string, ListenerTls>;
}

export function interBrokerClientSecurity(cfg: InterBrokerListenerSettings): ClientSecurity | undefined {
  const protocol = cfg.interBrokerSecurityProtocol;
  if (protocol === 'PLAINTEXT') return undefined;
  const t = cfg.listenerTls.get(cfg.interBrokerListenerName);
  if (t === undefined) return { protocol };
  const m = t.material;
  return {
    protocol,
    tls: {
      ...(m.ca !== undefined ? { ca: m.ca } : {}),
      ...(m.cert !== undefined ? { cert: m.cert } : {}),
      ...(m.key !== undefined ? { key: m.key } : {}),
      ...(m.pfx !== undefined ? { pfx: m.pfx } : {}),
      ...(m.passphrase !== undefined ? { passphrase: m.passphrase } : {}),
      minVersion: t.minVersion,
      maxVersion: t.maxVersion,
      ...(t.ciphers !== undefined ? { ciphers: t.ciphers } : {}),
      verifyHostname: t.verifyHostname,
    },
  };
}
