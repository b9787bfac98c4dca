/** Kafka's four security protocols, as they appear in listener.security.protocol.map. */
export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';

export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

export function isSecurityProtocol(s: string): s is SecurityProtocol {
  return (SECURITY_PROTOCOLS as readonly string[]).includes(s);
}

export const usesTls = (p: SecurityProtocol): boolean => p === 'SSL' || p === 'SASL_SSL';
export const usesSasl = (p: SecurityProtocol): boolean => p === 'SASL_PLAINTEXT' || p === 'SASL_SSL';

/** A listener as security/ sees it: its name and protocol (server/network's ListenerSpec has both). */
export interface NamedListener {
  name: string;
  securityProtocol: SecurityProtocol;
}
