/**
 * How a client secures its connections: the listener's protocol, TLS settings for SSL and
 * SASL_SSL, and SASL credentials for SASL_PLAINTEXT and SASL_SSL. Tools build this from Kafka's
 * client config names (security.protocol, ssl.truststore.location, sasl.mechanism,
 * sasl.jaas.config, ...); the Connection applies it before any Kafka request is sent.
 */
import type { SecurityProtocol } from './security-protocol.js';

export interface ClientTls {
  /** PEM CA certificates to trust (ssl.truststore.*); Node's default CAs when absent. */
  ca?: string | Buffer;
  /** PEM client certificate chain and key (ssl.keystore.*), for brokers that ask for one. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** A PKCS12 key store (ssl.keystore.type=PKCS12), instead of cert/key; opened with passphrase. */
  pfx?: Buffer;
  passphrase?: string;
  /** ssl.enabled.protocols as Node's version range (defaults: TLSv1.2 .. TLSv1.3). */
  minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  maxVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  /** ssl.cipher.suites in OpenSSL's syntax. */
  ciphers?: string;
  /** ssl.endpoint.identification.algorithm: "https" (Kafka's default) checks the host name; "" does not. */
  verifyHostname?: boolean;
}

export type SaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export interface ClientSasl {
  mechanism: SaslMechanism;
  username: string;
  password: string;
  /** SCRAM with a delegation token (ScramLoginModule's tokenauth="true"): username = token id, password = its HMAC in base64. */
  tokenAuth?: boolean;
}

export interface ClientSecurity {
  protocol: SecurityProtocol;
  tls?: ClientTls;
  sasl?: ClientSasl;
}
