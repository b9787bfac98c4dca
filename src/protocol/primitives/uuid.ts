/**
 * Kafka UUIDs (topic ids) travel as 16 bytes and are shown, by Kafka's tools, in URL-safe
 * base64 without padding (22 characters). We keep them in that printable form.
 */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export function uuidFromBytes(b: Buffer): string {
  return b.toString('base64url');
}

export function uuidToBytes(s: string): Buffer {
  const b = Buffer.from(s, 'base64url');
  if (b.length !== 16) throw new RangeError(`not a 16-byte uuid: ${s}`);
  return b;
}

/** A random (version 4) UUID in Kafka's printable form; never the zero or "metadata topic" id. */
export function randomUuid(): string {
  for (;;) {
    const b = Buffer.from(crypto.getRandomValues(new Uint8Array(16)));
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const s = uuidFromBytes(b);
    if (!s.startsWith('-') && s !== ZERO_UUID) return s; // Kafka avoids ids starting with '-'
  }
}
