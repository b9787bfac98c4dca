/**
 * How the console shows a record's key, value and headers: JSON pretty-printed, other UTF-8 as
 * text, anything else as hex. What goes to the page is bounded (a value over the bound is cut,
 * with its full size, so the page says so): a 100 MB record never reaches the browser.
 */

export interface ShownBytes {
  kind: 'null' | 'json' | 'text' | 'binary';
  /** The shown form: pretty JSON, the text, or hex pairs separated by spaces. */
  text: string;
  /** The bytes' full length. */
  size: number;
  /** Whether `text` was cut at the bound. */
  truncated: boolean;
}

/** Characters of a value sent to the page (hex shows half as many bytes). */
export const MAX_SHOWN_CHARS = 16 * 1024;
/** Values longer than this are not pretty-printed (parsing would cost more than it shows). */
const MAX_JSON_BYTES = 1024 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text when the bytes are valid UTF-8 without control characters other than tab and newlines. */
function asText(buf: Buffer): string | undefined {
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    return undefined;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text) ? undefined : text;
}

function cut(text: string, max: number): { text: string; truncated: boolean } {
  return text.length > max ? { text: text.slice(0, max), truncated: true } : { text, truncated: false };
}

export function showBytes(buf: Buffer | null, max = MAX_SHOWN_CHARS): ShownBytes {
  if (buf === null) return { kind: 'null', text: '', size: 0, truncated: false };
  const text = asText(buf);
  if (text === undefined) {
    const bytes = Math.floor(max / 3);
    const hex = (buf.length > bytes ? buf.subarray(0, bytes) : buf).toString('hex').replace(/(..)(?!$)/g, '$1 ');
    return { kind: 'binary', text: hex, size: buf.length, truncated: buf.length > bytes };
  }
  const trimmed = text.trim();
  if (buf.length <= MAX_JSON_BYTES && (trimmed.startsWith('{') || trimmed.startsWith('['))) {
    try {
      return { kind: 'json', ...cut(JSON.stringify(JSON.parse(trimmed), null, 2), max), size: buf.length };
    } catch {
      // Not JSON after all: shown as text.
    }
  }
  return { kind: 'text', ...cut(text, max), size: buf.length };
}

/** Whether a record's key, value or a header contains `needle` (case-insensitive, lossy UTF-8). */
export function recordMatches(needle: string, key: Buffer | null, value: Buffer | null, headers: readonly { key: string; value: Buffer | null }[]): boolean {
  const n = needle.toLowerCase();
  const has = (b: Buffer | null) => b !== null && b.toString('utf8').toLowerCase().includes(n);
  return has(key) || has(value) || headers.some((h) => h.key.toLowerCase().includes(n) || has(h.value));
}
