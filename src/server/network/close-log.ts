// Says why the broker closed (or refused) a connection, without letting a peer that opens thousands of bad
// connections flood the log: per reason, at most `perWindow` lines per window; at the end of a
// window that left some out, one line says how many (so a flood that stops is still counted).
import type { NetworkLogger } from './types.js';

export type CloseReason =
  | 'idle' // connections.max.idle.ms
  | 'receive-timeout' // socket.request.receive.timeout.ms
  | 'bad-frame' // size prefix negative, too small, or over socket.request.max.bytes
  | 'request-failed' // the dispatcher threw or rejected
  | 'socket-error'
  | 'max-connections' // refused at accept (max.connections and its wait queue full), or closed to make room for inter-broker connections
  | 'max-connections-per-ip' // refused at accept: max.connections.per.ip
  | 'open-files' // refused at accept: the open-file limit leaves no room (fd-headroom.ts)
  | 'tls-handshake-failed' // not a TLS client, refused certificate, unmapped principal
  | 'tls-handshake-timeout' // the TLS handshake did not complete in time
  | 'tls-on-plaintext'; // a TLS ClientHello on a PLAINTEXT / SASL_PLAINTEXT listener

type Level = 'debug' | 'info' | 'warn';

const LEVELS: Readonly<Record<CloseReason, Level>> = {
  idle: 'debug',
  'receive-timeout': 'info',
  'bad-frame': 'info',
  'request-failed': 'warn',
  'socket-error': 'debug',
  'max-connections': 'warn',
  'max-connections-per-ip': 'warn',
  'open-files': 'warn',
  'tls-handshake-failed': 'info',
  'tls-handshake-timeout': 'info',
  'tls-on-plaintext': 'info',
};

interface Window {
  startedAt: number;
  logged: number;
  suppressed: number;
  /** Logs the count left out when the window ends. */
  summary?: NodeJS.Timeout;
}

export class CloseLog {
  private readonly windows = new Map<CloseReason, Window>();
  private readonly counts = new Map<CloseReason, number>();

  constructor(
    private readonly logger: NetworkLogger,
    private readonly windowMs = 10_000,
    private readonly perWindow = 5,
    private readonly now: () => number = Date.now,
  ) {}

  /** Connections closed for `reason` since start (every one, logged or not). */
  count(reason: CloseReason): number {
    return this.counts.get(reason) ?? 0;
  }

  closed(reason: CloseReason, fields: Record<string, unknown>, message: string): void {
    this.counts.set(reason, this.count(reason) + 1);
    const now = this.now();
    let w = this.windows.get(reason);
    if (w === undefined || now - w.startedAt >= this.windowMs) {
      const suppressed = w?.suppressed ?? 0;
      w = { startedAt: now, logged: 0, suppressed: 0 };
      this.windows.set(reason, w);
      if (suppressed > 0) fields = { ...fields, suppressedSinceLastLine: suppressed };
    }
    if (w.logged >= this.perWindow) {
      w.suppressed++;
      if (w.summary === undefined) {
        const window = w;
        w.summary = setTimeout(() => this.summarise(reason, window), Math.max(1, window.startedAt + this.windowMs - now));
        w.summary.unref();
      }
      return;
    }
    w.logged++;
    this.logger[LEVELS[reason]]({ ...fields, reason }, message);
  }

  private summarise(reason: CloseReason, w: Window): void {
    const n = w.suppressed;
    if (n === 0) return;
    w.suppressed = 0; // counted here, not again on the next line
    this.logger[LEVELS[reason]](
      { reason, suppressed: n },
      `${n} more connections closed or refused (${reason}) in ${this.windowMs / 1000} s were not logged one by one`,
    );
  }
}
