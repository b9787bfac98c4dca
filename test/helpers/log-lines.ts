/**
 * Reading a broker's JSON log lines in tests: a strict JSON parser that refuses a repeated key
 * in any object (JSON.parse keeps the last one silently, as `jq` does), a check of every line of
 * a log file, and the state-change lines (`"logger":"state.change.logger"`) of a broker's log,
 * for tests that look for the leader moves of a broker kill.
 */
import { existsSync, readFileSync } from 'node:fs';

export type LogLine = Record<string, unknown>;

/** JSON.parse, but a repeated key in any object throws (naming the key). */
export function parseStrictJson(text: string): unknown {
  let i = 0;
  const fail = (why: string): never => {
    throw new SyntaxError(`${why} at ${i} in ${text.length > 200 ? `${text.slice(0, 200)}...` : text}`);
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    if (text[i] !== '"') fail('expected a string');
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      const keys = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        const k = str();
        if (keys.has(k)) fail(`repeated key "${k}"`);
        keys.add(k);
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        out[k] = value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return out;
        }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return out;
        }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return str();
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 64));
    if (!m) return fail('unexpected character');
    i += m[0].length;
    return JSON.parse(m[0]) as unknown;
  };
  const v = value();
  ws();
  if (i !== text.length) fail('trailing text');
  return v;
}

/** Every line of a JSON log file, each parsed strictly (throws naming the file and line number). */
export function readLogLines(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  const out: LogLine[] = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, n) => {
    if (line === '' && n === lines.length - 1) return;
    let v: unknown;
    try {
      v = parseStrictJson(line);
    } catch (err) {
      throw new Error(`${file}:${n + 1}: not a strict JSON line: ${(err as Error).message}`);
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${file}:${n + 1}: not a JSON object`);
    out.push(v as LogLine);
  });
  return out;
}

/** The state-change log's lines of a broker's JSON log file. */
export function stateChangeLines(file: string): LogLine[] {
  return readLogLines(file).filter((l) => l.logger === 'state.change.logger');
}

/**
 * A broker kill seen in the state-change log of `file` (the controller's broker): per partition
 * of `topics` the dead broker led, its "leader election" line away from it, and the "leader
 * lost" lines of those left without one; the "partition offline" and "partition online" lines
 * (a partition whose leader died goes offline, then online again once another is elected).
 */
export function leaderMovesAway(
  file: string,
  deadBroker: number,
  topics?: readonly string[],
): { elected: LogLine[]; lost: LogLine[]; offline: LogLine[]; online: LogLine[] } {
  const lines = stateChangeLines(file).filter((l) => topics === undefined || topics.includes(String(l.topic)));
  return {
    elected: lines.filter((l) => l.msg === 'leader election' && l.oldLeader === deadBroker),
    lost: lines.filter((l) => l.msg === 'leader lost' && l.oldLeader === deadBroker),
    offline: lines.filter((l) => l.msg === 'partition offline'),
    online: lines.filter((l) => l.msg === 'partition online'),
  };
}
