/**
 * Who a connection is, as Kafka names it: a principal type and a name ("User:alice"). Every
 * connection starts as User:ANONYMOUS (Kafka's principal for PLAINTEXT and for SSL without a
 * client certificate); TLS client authentication or SASL replace it. Authorizers, quotas and
 * logs use it; nothing in this file depends on how it was established.
 */
export interface KafkaPrincipal {
  readonly principalType: string;
  readonly name: string;
  /** Authenticated with a delegation token (SCRAM, tokenauth=true): such a connection may not manage tokens. */
  readonly tokenAuthenticated?: boolean;
}

export const USER_TYPE = 'User';
export const ANONYMOUS: KafkaPrincipal = Object.freeze({ principalType: USER_TYPE, name: 'ANONYMOUS' });

export function userPrincipal(name: string): KafkaPrincipal {
  return { principalType: USER_TYPE, name };
}

export function principalToString(p: KafkaPrincipal): string {
  return `${p.principalType}:${p.name}`;
}

/** Parses "Type:name" (the name may itself hold colons, as Kafka's SecurityUtils.parseKafkaPrincipal allows). */
export function parsePrincipal(text: string): KafkaPrincipal {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new Error(`Invalid principal ${JSON.stringify(text)}: expected Type:name, e.g. User:alice`);
  return { principalType: text.slice(0, colon), name: text.slice(colon + 1) };
}

export function samePrincipal(a: KafkaPrincipal, b: KafkaPrincipal): boolean {
  return a.principalType === b.principalType && a.name === b.name;
}
