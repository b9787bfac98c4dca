// Process-wide logger. One pino root writes to stdout; every module asks for a named child.
//   FJORD_LOG_LEVEL  trace|debug|info|warn|error|fatal|silent, default info.
//   FJORD_LOG_FORMAT json (JSON lines, for machines) | pretty (one readable line per event, for a
//                    terminal); default pretty when stdout is a terminal, json otherwise.
//   FJORD_LOG_LEVEL_STATE_CHANGE  the state-change log's own level (common/state-change-log.ts).
// The pretty form is pino's JSON line turned into text by formatPrettyLine below (no extra
// dependency): "<time> <LEVEL> [<name/component>] <msg> key=value ...".
// A JSON line never repeats a key: a child binding a key its parent already binds replaces it,
// and a nested `component` joins its parent's ("replica-manager/replica-fetcher"); see
// joinRepeatedBindings. A log call's field that the logger already binds is dropped when equal,
// else kept as `<key>_call` (renameBoundFields).
import { writeSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

export type LogFormat = 'json' | 'pretty';

const VALID_LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

function levelFromEnv(): string {
  const requested = (process.env.FJORD_LOG_LEVEL ?? 'info').trim().toLowerCase();
  return VALID_LEVELS.has(requested) ? requested : 'info';
}

/** FJORD_LOG_FORMAT when it names a format, else pretty on a terminal and json elsewhere. */
export function chooseLogFormat(env: NodeJS.ProcessEnv, stdoutIsTTY: boolean): LogFormat {
  const requested = (env.FJORD_LOG_FORMAT ?? '').trim().toLowerCase();
  if (requested === 'json' || requested === 'pretty') return requested;
  return stdoutIsTTY ? 'pretty' : 'json';
}

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields shown in the line's head rather than as key=value. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'component', 'err']);

function formatValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/**
 * One pino JSON line as a readable line: time, level, where from, message, then the other fields
 * as key=value; an error's stack follows on indented lines. A line that is not JSON is kept.
 */
export function formatPrettyLine(line: string): string {
  let o: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return line.endsWith('\n') ? line : `${line}\n`;
    o = parsed as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const level = typeof o.level === 'number' ? (LEVEL_NAMES[o.level] ?? String(o.level)) : String(o.level ?? '');
  const where = [o.name, o.component].filter((x) => typeof x === 'string' && x !== '').join('/');
  let text = `${typeof o.time === 'string' ? o.time : new Date(typeof o.time === 'number' ? o.time : Date.now()).toISOString()} ${level.padEnd(5)}`;
  if (where !== '') text += ` [${where}]`;
  if (typeof o.msg === 'string' && o.msg !== '') text += ` ${o.msg}`;
  for (const [k, v] of Object.entries(o)) {
    if (HEAD_FIELDS.has(k) || v === undefined) continue;
    text += ` ${k}=${formatValue(v)}`;
  }
  const err = o.err;
  if (err !== undefined) {
    if (err !== null && typeof err === 'object') {
      const e = err as { message?: unknown; stack?: unknown };
      const stack = typeof e.stack === 'string' ? e.stack : typeof e.message === 'string' ? e.message : JSON.stringify(err);
      text += `\n    ${stack.split('\n').join('\n    ')}`;
    } else {
      text += ` err=${formatValue(err)}`;
    }
  }
  return `${text}\n`;
}

/** A destination that writes pretty lines synchronously to a file descriptor (or a sink). */
export function prettyDestination(write: (text: string) => void = (text) => void writeSync(1, text)): DestinationStream {
  return { write: (line: string) => write(formatPrettyLine(line)) };
}

type WithChindings = Logger & { [pino.symbols.chindingsSym]: string };

/** A logger's bindings as its serialised `,"k":v` text parses (JSON.parse keeps a repeated key's last value). */
function parseChindings(text: string): Record<string, unknown> {
  return text === '' ? {} : (JSON.parse(`{${text.slice(1)}}`) as Record<string, unknown>);
}

/**
 * pino's onChild hook: pino appends a child's bindings to its parent's as text, so a key bound
 * twice (a component's logger handed to a sub-component that binds `component` again) would
 * appear twice in every line, and `jq` would keep only the last. When the child binds a key its
 * parent has, its bindings are rewritten: `component` becomes "parent/child", any other key
 * takes the child's value. Runs once per child creation, not per line.
 */
export function joinRepeatedBindings(child: Logger): void {
  const parent = Object.getPrototypeOf(child) as WithChindings;
  const own = child as WithChindings;
  const inherited = parent[pino.symbols.chindingsSym] ?? '';
  const all = own[pino.symbols.chindingsSym];
  if (typeof all !== 'string' || !all.startsWith(inherited) || all.length === inherited.length) return;
  const before = parseChindings(inherited);
  const added = parseChindings(all.slice(inherited.length));
  if (!Object.keys(added).some((k) => k in before)) return;
  const merged: Record<string, unknown> = { ...before };
  for (const [k, v] of Object.entries(added)) {
    merged[k] = k === 'component' && typeof before[k] === 'string' && typeof v === 'string' ? `${before[k]}/${v}` : v;
  }
  own[pino.symbols.chindingsSym] = Object.entries(merged)
    .map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join('');
}

/** Each logger's bound keys and values (parsed once per logger, on its first object-carrying call). */
const boundFields = new WeakMap<object, Record<string, unknown>>();

/**
 * pino's logMethod hook: pino writes a call's fields after the logger's bindings without
 * looking, so `log.info({ fetcher }, ...)` on a logger bound with `fetcher` would repeat the key.
 * Such a field is dropped when its value is the bound one, else renamed `<key>_call`. The object
 * is copied only when a key clashes; a call without an object costs one typeof.
 */
function renameBoundFields(this: Logger, args: Parameters<Logger['info']>, method: Logger['info']): void {
  const first: unknown = args[0];
  if (first !== null && typeof first === 'object' && !(first instanceof Error) && !Array.isArray(first)) {
    const logger = this as WithChindings;
    let bound = boundFields.get(logger);
    if (bound === undefined) {
      bound = parseChindings(logger[pino.symbols.chindingsSym] ?? '');
      boundFields.set(logger, bound);
    }
    const fields = first as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    for (const k of Object.keys(fields)) {
      if (!(k in bound)) continue;
      copy ??= { ...fields };
      const v = copy[k];
      delete copy[k];
      if (JSON.stringify(v) !== JSON.stringify(bound[k])) copy[`${k}_call`] = v;
    }
    if (copy) args[0] = copy;
  }
  method.apply(this, args);
}

/** A root logger in the given format, writing to stdout (or to `sink`, for tests). */
export function createRootLogger(format: LogFormat, level: string, sink?: (text: string) => void): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    onChild: joinRepeatedBindings,
    hooks: { logMethod: renameBoundFields },
  };
  if (format === 'pretty') return pino(options, prettyDestination(sink));
  // Synchronous writes: lines keep their order and none is lost when the process exits right
  // after logging (an async destination can reorder its last lines on process.exit). The broker
  // logs per connection/stage, not per request, so the cost is small.
  return pino(options, sink ? { write: sink } : pino.destination({ fd: 1, sync: true }));
}

let root: Logger | undefined;

/** The shared root logger (created lazily so tests can set FJORD_LOG_LEVEL/FORMAT first). */
export function rootLogger(): Logger {
  root ??= createRootLogger(chooseLogFormat(process.env, process.stdout.isTTY === true), levelFromEnv());
  return root;
}

/** A child logger tagged with `name` (e.g. 'socket-server', 'config'). */
export function createLogger(name: string): Logger {
  return rootLogger().child({ name });
}

/** A logger that drops everything; handy for tests and tools. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
