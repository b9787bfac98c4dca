/**
 * SCRAM (RFC 5802, RFC 7677) as Kafka uses it for SCRAM-SHA-256 and SCRAM-SHA-512: the key
 * derivation, the stored credential in Kafka's text form
 * (`salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>`, as /config/users/<user> holds
 * it), and the four messages of an exchange. Shared by the broker's SCRAM server, the client
 * library's SCRAM client and the credential tools.
 */
import crypto from 'node:crypto';

export type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
export const SCRAM_MECHANISMS: readonly ScramMechanism[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];
/** Kafka's ScramMechanism minimum iterations (both mechanisms). */
export const SCRAM_MIN_ITERATIONS = 4096;
/** KIP-554: AlterUserScramCredentials refuses more iterations than this. */
export const SCRAM_MAX_ITERATIONS = 16384;
/** kafka-configs.sh's default when `iterations=` is not given. */
export const SCRAM_DEFAULT_ITERATIONS = 4096;

export function isScramMechanism(s: string): s is ScramMechanism {
  return s === 'SCRAM-SHA-256' || s === 'SCRAM-SHA-512';
}

/** Kafka's ScramMechanism type codes in DescribeUserScramCredentials/AlterUserScramCredentials. */
export function scramMechanismCode(m: ScramMechanism): number {
  return m === 'SCRAM-SHA-256' ? 1 : 2;
}
export function scramMechanismFromCode(code: number): ScramMechanism | undefined {
  return code === 1 ? 'SCRAM-SHA-256' : code === 2 ? 'SCRAM-SHA-512' : undefined;
}

const hashName = (m: ScramMechanism): 'sha256' | 'sha512' => (m === 'SCRAM-SHA-256' ? 'sha256' : 'sha512');
const hashLength = (m: ScramMechanism): number => (m === 'SCRAM-SHA-256' ? 32 : 64);

export interface ScramCredential {
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
  iterations: number;
}

export function hmac(m: ScramMechanism, key: Buffer, data: Buffer | string): Buffer {
  return crypto.createHmac(hashName(m), key).update(data).digest();
}

export function hash(m: ScramMechanism, data: Buffer): Buffer {
  return crypto.createHash(hashName(m)).update(data).digest();
}

/** Hi(password, salt, i) of RFC 5802: PBKDF2 with the mechanism's HMAC, one hash length long. */
export function saltedPassword(m: ScramMechanism, password: string, salt: Buffer, iterations: number): Buffer {
  return crypto.pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, hashLength(m), hashName(m));
}

export function saltedPasswordAsync(m: ScramMechanism, password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    crypto.pbkdf2(Buffer.from(password, 'utf8'), salt, iterations, hashLength(m), hashName(m), (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export const clientKey = (m: ScramMechanism, salted: Buffer): Buffer => hmac(m, salted, 'Client Key');
export const serverKey = (m: ScramMechanism, salted: Buffer): Buffer => hmac(m, salted, 'Server Key');

export function xor(a: Buffer, b: Buffer): Buffer {
  if (a.length !== b.length) throw new Error('xor of buffers of different lengths');
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** A random salt as Kafka makes it (the bytes of a random base-36 string). */
export function randomSalt(): Buffer {
  return Buffer.from(randomNonce(), 'ascii');
}

/** A printable random nonce without ',' (RFC 5802 "printable"): base-36 of 130 random bits, as Kafka. */
export function randomNonce(): string {
  return BigInt(`0x${crypto.randomBytes(17).toString('hex')}`).toString(36);
}

export function credentialFromSaltedPassword(m: ScramMechanism, salt: Buffer, salted: Buffer, iterations: number): ScramCredential {
  return { salt, storedKey: hash(m, clientKey(m, salted)), serverKey: serverKey(m, salted), iterations };
}

/** A new credential for `password` (PBKDF2 runs off the event loop). */
export async function makeCredential(m: ScramMechanism, password: string, iterations: number, salt: Buffer = randomSalt()): Promise<ScramCredential> {
  return credentialFromSaltedPassword(m, salt, await saltedPasswordAsync(m, password, salt, iterations), iterations);
}

/** Kafka's ScramCredentialUtils.credentialToString. */
export function formatCredential(c: ScramCredential): string {
  return `salt=${c.salt.toString('base64')},stored_key=${c.storedKey.toString('base64')},server_key=${c.serverKey.toString('base64')},iterations=${c.iterations}`;
}

/** Kafka's ScramCredentialUtils.credentialFromString; undefined when the text is not one. */
export function parseCredential(text: string): ScramCredential | undefined {
  const fields = new Map<string, string>();
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  const salt = fields.get('salt');
  const stored = fields.get('stored_key');
  const server = fields.get('server_key');
  const iterations = Number(fields.get('iterations'));
  if (salt === undefined || stored === undefined || server === undefined || !Number.isInteger(iterations) || iterations <= 0) return undefined;
  return { salt: Buffer.from(salt, 'base64'), storedKey: Buffer.from(stored, 'base64'), serverKey: Buffer.from(server, 'base64'), iterations };
}

/** RFC 5802 saslname: ',' and '=' escaped as =2C and =3D. */
export function toSaslName(username: string): string {
  return username.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

/** undefined when the name holds a '=' that is not one of the two escapes. */
export function fromSaslName(saslName: string): string | undefined {
  if (/=(?!2C|3D)/.test(saslName)) return undefined;
  return saslName.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

export interface ClientFirst {
  /** "n,," or "n,a=<authzid>,": what c= of the final message must encode. */
  gs2Header: string;
  authzid: string;
  username: string;
  nonce: string;
  /** client-first-message-bare: part of the AuthMessage. */
  bare: string;
  extensions: Map<string, string>;
}

/** Parses client-first-message; undefined when malformed. Channel binding ("p=") is not offered. */
export function parseClientFirst(text: string): ClientFirst | undefined {
  const m = /^([ny]),(?:a=([^,]*))?,(n=([^,]*),r=([^,]+)((?:,[^,]*)*))$/.exec(text);
  if (m === null) return undefined;
  const username = fromSaslName(m[4]!);
  if (username === undefined || username === '') return undefined;
  const extensions = new Map<string, string>();
  for (const ext of m[6]!.split(',').filter((s) => s !== '')) {
    const eq = ext.indexOf('=');
    if (eq <= 0) return undefined;
    extensions.set(ext.slice(0, eq), ext.slice(eq + 1));
  }
  const authzid = m[2] === undefined ? '' : (fromSaslName(m[2]) ?? '');
  return { gs2Header: text.slice(0, text.length - m[3]!.length), authzid, username, nonce: m[5]!, bare: m[3]!, extensions };
}

export interface ClientFinal {
  channelBinding: string;
  nonce: string;
  proof: Buffer;
  /** client-final-message-without-proof: part of the AuthMessage. */
  withoutProof: string;
}

export function parseClientFinal(text: string): ClientFinal | undefined {
  const m = /^(c=([A-Za-z0-9+/]+=*),r=([^,]+)(?:,[^,]*)*?),p=([A-Za-z0-9+/]+=*)$/.exec(text);
  if (m === null) return undefined;
  return { withoutProof: m[1]!, channelBinding: m[2]!, nonce: m[3]!, proof: Buffer.from(m[4]!, 'base64') };
}

export function serverFirstMessage(nonce: string, salt: Buffer, iterations: number): string {
  return `r=${nonce},s=${salt.toString('base64')},i=${iterations}`;
}

export interface ServerFirst {
  nonce: string;
  salt: Buffer;
  iterations: number;
}

export function parseServerFirst(text: string): ServerFirst | undefined {
  const m = /^(?:m=[^,]*,)?r=([^,]+),s=([A-Za-z0-9+/]+=*),i=(\d+)(?:,.*)?$/.exec(text);
  if (m === null) return undefined;
  return { nonce: m[1]!, salt: Buffer.from(m[2]!, 'base64'), iterations: Number(m[3]) };
}

/** AuthMessage of RFC 5802 section 3. */
export function authMessage(clientFirstBare: string, serverFirst: string, clientFinalWithoutProof: string): string {
  return `${clientFirstBare},${serverFirst},${clientFinalWithoutProof}`;
}

/** Compares in time independent of where the buffers differ. */
export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
