import { ConfigError } from './errors.js';

// A reader for the java.util.Properties text format, which Kafka's server.properties uses:
// '#' and '!' comment lines, "key=value", "key: value" and "key value" separators,
// backslash line continuations, and escapes (\t \n \r \f \uXXXX, "\x" meaning a literal x).

/** Parses properties text into an insertion-ordered map; a later duplicate key wins (as in Java). */
export function parseProperties(text: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const logicalLine of logicalLines(text)) {
    const { key, value } = splitKeyValue(logicalLine);
    result.set(unescapeText(key), unescapeText(value));
  }
  return result;
}

/**
 * Joins natural lines into logical lines: a line ending in an odd number of backslashes continues on
 * the next one, whose leading whitespace is dropped. Comment and blank lines are skipped, but only
 * where a logical line would start (a '#' inside a continuation is data).
 */
function* logicalLines(text: string): Generator<string> {
  const naturalLines = text.split(/\r\n|\r|\n/);
  let pending: string | null = null;
  for (const natural of naturalLines) {
    const stripped = natural.replace(/^[ \t\f]+/, '');
    if (pending === null && (stripped === '' || stripped.startsWith('#') || stripped.startsWith('!'))) continue;
    const joined: string = (pending ?? '') + stripped;
    if (endsWithOddBackslashes(joined)) {
      pending = joined.slice(0, -1);
      continue;
    }
    pending = null;
    yield joined;
  }
  // Java keeps a continued last line as it is (without the trailing backslash).
  if (pending !== null && pending !== '') yield pending;
}

function endsWithOddBackslashes(line: string): boolean {
  let count = 0;
  for (let i = line.length - 1; i >= 0 && line[i] === '\\'; i--) count++;
  return count % 2 === 1;
}

const WHITESPACE = new Set([' ', '\t', '\f']);

/** The key ends at the first unescaped '=', ':' or whitespace; one '='/':' (with spaces around) separates. */
function splitKeyValue(line: string): { key: string; value: string } {
  let i = 0;
  while (i < line.length) {
    const ch = line[i]!;
    if (ch === '\\') {
      i += 2;
      continue;
    }
    if (ch === '=' || ch === ':' || WHITESPACE.has(ch)) break;
    i++;
  }
  const key = line.slice(0, Math.min(i, line.length));
  let j = i;
  while (j < line.length && WHITESPACE.has(line[j]!)) j++;
  if (j < line.length && (line[j] === '=' || line[j] === ':')) {
    j++;
    while (j < line.length && WHITESPACE.has(line[j]!)) j++;
  }
  return { key, value: line.slice(j) };
}

function unescapeText(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = s[++i];
    if (next === undefined) break;
    switch (next) {
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        const hex = s.slice(i + 1, i + 5);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new ConfigError(`Malformed \\uxxxx encoding: \\u${hex}`);
        out += String.fromCharCode(parseInt(hex, 16));
        i += 4;
        break;
      }
      default:
        out += next;
    }
  }
  return out;
}

/**
 * Parses "--override key=value" style arguments (the value may itself contain '=').
 * Throws on an argument without '=' or with an empty key.
 */
export function parseOverride(arg: string): [string, string] {
  const eq = arg.indexOf('=');
  if (eq <= 0) throw new ConfigError(`Invalid override "${arg}": expected key=value`);
  return [arg.slice(0, eq).trim(), arg.slice(eq + 1)];
}
