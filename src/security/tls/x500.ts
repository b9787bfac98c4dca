/**
 * The subject of an X.509 certificate as Java's X500Principal.getName() writes it (RFC 2253),
 * which is the name Kafka's DefaultKafkaPrincipalBuilder hands to ssl.principal.mapping.rules:
 * RDNs from the last to the first, "," between them, "+" inside a multi-valued RDN; the keywords
 * CN, C, L, ST, O, OU, STREET, DC and UID, any other attribute as its OID with "#" and the hex
 * of its DER value; the characters , = + < > # ; " \ escaped with "\", and leading/trailing spaces too.
 * Read from the certificate's DER: nothing here depends on OpenSSL's own name formatting.
 */

interface Tlv {
  tag: number;
  /** Start of the whole element (tag byte). */
  start: number;
  /** Start and end of the content. */
  contentStart: number;
  end: number;
}

function readTlv(buf: Buffer, offset: number): Tlv {
  if (offset + 2 > buf.length) throw new Error('truncated DER');
  const tag = buf[offset]!;
  let len = buf[offset + 1]!;
  let p = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > buf.length) throw new Error('bad DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p + i]!;
    p += n;
  }
  if (p + len > buf.length) throw new Error('truncated DER');
  return { tag, start: offset, contentStart: p, end: p + len };
}

function children(buf: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let p = parent.contentStart; p < parent.end; ) {
    const t = readTlv(buf, p);
    out.push(t);
    p = t.end;
  }
  return out;
}

function decodeOid(bytes: Buffer): string {
  const parts: number[] = [];
  let value = 0;
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) {
      if (parts.length === 0) {
        const first = value < 80 ? Math.floor(value / 40) : 2;
        parts.push(first, value - first * 40);
      } else parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

const KEYWORDS: Readonly<Record<string, string>> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.9': 'STREET',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

// Java's DirectoryString types it writes as text (PrintableString, T61String, IA5String,
// GeneralString, BMPString, UTF8String).
const UTF8 = 0x0c,
  PRINTABLE = 0x13,
  T61 = 0x14,
  IA5 = 0x16,
  GENERAL = 0x1b,
  BMP = 0x1e;

function stringValue(tag: number, content: Buffer): string | null {
  switch (tag) {
    case UTF8:
      return content.toString('utf8');
    case PRINTABLE:
    case IA5:
    case T61:
    case GENERAL:
      return content.toString('latin1');
    case BMP: {
      const swapped = Buffer.from(content);
      if (swapped.length % 2 === 0) swapped.swap16();
      return swapped.toString('utf16le');
    }
    default:
      return null;
  }
}

const ESCAPED = ',=+<>#;"\\';

function escapeValue(value: string): string {
  let s = '';
  for (const c of value) {
    if (ESCAPED.includes(c)) s += `\\${c}`;
    else if (c === '\u0000') s += '\\00';
    else s += c;
  }
  let lead = 0;
  while (lead < s.length && (s[lead] === ' ' || s[lead] === '\r')) lead++;
  let trail = s.length - 1;
  while (trail >= 0 && (s[trail] === ' ' || s[trail] === '\r')) trail--;
  let out = '';
  for (let i = 0; i < s.length; i++) out += (i < lead || i > trail ? '\\' : '') + s[i];
  return out;
}

/** RFC 2253 text of a DER Name (SEQUENCE OF RDN). */
export function nameRfc2253(buf: Buffer, name: Tlv): string {
  const rdns = children(buf, name).map((set) =>
    children(buf, set)
      .map((ava) => {
        const [oidTlv, valueTlv] = children(buf, ava);
        if (oidTlv === undefined || valueTlv === undefined) throw new Error('bad AttributeTypeAndValue');
        const oid = decodeOid(buf.subarray(oidTlv.contentStart, oidTlv.end));
        const keyword = KEYWORDS[oid];
        const text = keyword === undefined ? null : stringValue(valueTlv.tag, buf.subarray(valueTlv.contentStart, valueTlv.end));
        if (keyword === undefined || text === null) return `${keyword ?? oid}=#${buf.subarray(valueTlv.start, valueTlv.end).toString('hex')}`;
        return `${keyword}=${escapeValue(text)}`;
      })
      .join('+'),
  );
  return rdns.reverse().join(',');
}

/** The subject of a DER certificate, as X500Principal.getName() (RFC 2253) writes it. */
export function subjectRfc2253(certDer: Buffer): string {
  const cert = readTlv(certDer, 0);
  const tbs = children(certDer, cert)[0];
  if (tbs === undefined) throw new Error('bad certificate');
  const fields = children(certDer, tbs);
  // [0] version (optional), serialNumber, signature, issuer, validity, subject
  const base = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[base + 4];
  if (subject === undefined || subject.tag !== 0x30) throw new Error('certificate has no subject');
  return nameRfc2253(certDer, subject);
}
