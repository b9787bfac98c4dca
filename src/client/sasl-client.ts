/**
 * The client side of SASL, run by Connection right after ApiVersions on SASL_PLAINTEXT and
 * SASL_SSL: SaslHandshake v1 naming the mechanism, then SaslAuthenticate requests carrying the
 * mechanism's tokens (PLAIN: one; SCRAM: client-first and client-final, the server's final
 * signature checked). The broker's error becomes a KafkaError (SASL_AUTHENTICATION_FAILED, with
 * the broker's message).
 */
import { KafkaError, errorName } from '../protocol/errors.js';
import {
  authMessage,
  clientKey,
  constantTimeEqual,
  hash,
  hmac,
  parseServerFirst,
  randomNonce,
  saltedPasswordAsync,
  serverKey,
  SCRAM_MIN_ITERATIONS,
  toSaslName,
  xor,
  type ScramMechanism,
} from '../security/sasl/scram.js';
import type { ClientSasl } from '../security/client-security.js';

/** What the authentication needs from the connection: one SaslAuthenticate round trip. */
export interface SaslTransport {
  handshake(mechanism: string): Promise<{ errorCode: number; mechanisms: string[] }>;
  authenticate(token: Buffer): Promise<{ errorCode: number; errorMessage: string | null; authBytes: Buffer; sessionLifetimeMs: bigint }>;
}

/** Runs the exchange; resolves with the session lifetime the broker granted (0 = unlimited). */
export async function saslAuthenticate(t: SaslTransport, sasl: ClientSasl): Promise<bigint> {
  const hs = await t.handshake(sasl.mechanism);
  if (hs.errorCode !== 0) {
    throw new KafkaError(
      hs.errorCode,
      `${errorName(hs.errorCode)}: the broker does not enable SASL mechanism ${sasl.mechanism} (it enables ${hs.mechanisms.join(', ') || 'none'})`,
    );
  }
  const round = async (token: Buffer): Promise<{ authBytes: Buffer; sessionLifetimeMs: bigint }> => {
    const r = await t.authenticate(token);
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode, `${errorName(r.errorCode)}: ${r.errorMessage ?? 'authentication failed'}`);
    return r;
  };
  if (sasl.mechanism === 'PLAIN') {
    return (await round(Buffer.from(`\u0000${sasl.username}\u0000${sasl.password}`, 'utf8'))).sessionLifetimeMs;
  }
  return scram(sasl.mechanism, sasl.username, sasl.password, round, sasl.tokenAuth === true);
}

async function scram(
  m: ScramMechanism,
  username: string,
  password: string,
  round: (token: Buffer) => Promise<{ authBytes: Buffer; sessionLifetimeMs: bigint }>,
  tokenAuth: boolean,
): Promise<bigint> {
  const nonce = randomNonce();
  // Kafka's ScramExtensions: tokenauth=true follows the nonce in the client-first message.
  const firstBare = `n=${toSaslName(username)},r=${nonce}${tokenAuth ? ',tokenauth=true' : ''}`;
  const serverFirstText = (await round(Buffer.from(`n,,${firstBare}`, 'utf8'))).authBytes.toString('utf8');
  const sf = parseServerFirst(serverFirstText);
  if (sf === undefined) throw new KafkaError(58, `SASL_AUTHENTICATION_FAILED: invalid SCRAM server first message`);
  if (!sf.nonce.startsWith(nonce) || sf.nonce.length === nonce.length) throw new KafkaError(58, 'SASL_AUTHENTICATION_FAILED: invalid server nonce');
  if (sf.iterations < SCRAM_MIN_ITERATIONS)
    throw new KafkaError(58, `SASL_AUTHENTICATION_FAILED: requested iterations ${sf.iterations} is less than the minimum ${SCRAM_MIN_ITERATIONS} for ${m}`);
  const salted = await saltedPasswordAsync(m, password, sf.salt, sf.iterations);
  const ck = clientKey(m, salted);
  const withoutProof = `c=biws,r=${sf.nonce}`;
  const auth = authMessage(firstBare, serverFirstText, withoutProof);
  const proof = xor(ck, hmac(m, hash(m, ck), auth));
  const last = await round(Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8'));
  const text = last.authBytes.toString('utf8');
  if (text.startsWith('e=')) throw new KafkaError(58, `SASL_AUTHENTICATION_FAILED: ${text.slice(2)}`);
  const v = /^v=([A-Za-z0-9+/]+=*)/.exec(text);
  if (v === null || !constantTimeEqual(Buffer.from(v[1]!, 'base64'), hmac(m, serverKey(m, salted), auth))) {
    throw new KafkaError(58, 'SASL_AUTHENTICATION_FAILED: invalid server signature in the SCRAM server final message');
  }
  return last.sessionLifetimeMs;
}
