// Process-wide logger. One pino root writes JSON lines to stdout; every module asks for a named child.
// The level comes from FJORD_LOG_LEVEL (trace|debug|info|warn|error|fatal|silent), default info.
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

const VALID_LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

function levelFromEnv(): string {
  const requested = (process.env.FJORD_LOG_LEVEL ?? 'info').trim().toLowerCase();
  return VALID_LEVELS.has(requested) ? requested : 'info';
}

let root: Logger | undefined;

/** The shared root logger (created lazily so tests can set FJORD_LOG_LEVEL first). */
export function rootLogger(): Logger {
  if (root === undefined) {
    // Synchronous writes: lines keep their order and none is lost when the process exits right after
    // logging (an async destination can reorder its last lines on process.exit). The broker logs
    // per connection/stage, not per request, so the cost is small.
    root = pino(
      { level: levelFromEnv(), base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
      pino.destination({ fd: 1, sync: true }),
    );
  }
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
