// The clocks a Connection runs. Two against peers that hold resources without sending requests:
// - connections.max.idle.ms (IdleClock) counts from the last complete request read, response
//   written or write buffer drained; bytes of an unfinished frame do not re-arm it (Node's socket
//   timeout would, so it is not used), nor does a peer that leaves its responses unread;
// - socket.request.receive.timeout.ms (ReceiveClock) counts from the first byte of a frame until
//   its last, while the broker reads or waits for the peer to read its responses (time the broker
//   itself spends paused, on its memory cap or on unanswered requests, does not count).
// The clocks keep only their own time; the connection tells them what it is doing (touch, update)
// and they ask it, through their host, whether it is closed, busy, and to close when they run out.
// A third, MuteClock, stops reading while a quota throttles the connection.

/** What the idle clock needs from its connection. */
export interface IdleClockHost {
  isClosed(): boolean;
  /** Requests in flight or a wait for request memory: slow work, not idleness. */
  isBusy(): boolean;
  /** The connection was idle for `idleMs`: close it. */
  onIdle(idleMs: number): void;
}

/** connections.max.idle.ms: closes a connection with no complete request or response for that long. */
export class IdleClock {
  /** Date.now() of the last complete request read or response written. */
  private lastActivity = Date.now();
  private timer: NodeJS.Timeout | undefined;

  /** `idleMs` <= 0: the clock never runs. */
  constructor(
    private readonly idleMs: number,
    private readonly host: IdleClockHost,
  ) {
    if (idleMs > 0) this.arm(idleMs);
  }

  /** Date.now() of the last complete request read or response written (Kafka's LRU order). */
  get lastActivityMs(): number {
    return this.lastActivity;
  }

  /** A complete request was read, a response written or the write buffer drained. */
  touch(): void {
    this.lastActivity = Date.now();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  private check(): void {
    this.timer = undefined;
    if (this.host.isClosed()) return;
    const idleMs = this.idleMs;
    const now = Date.now();
    // A slow request (e.g. a long fetch wait) or a wait for request memory is not idleness; a peer
    // that reads none of its responses is ('drain' counts as activity), as in Kafka.
    if (this.host.isBusy()) this.lastActivity = now;
    const idleFor = now - this.lastActivity;
    if (idleFor >= idleMs) {
      this.host.onIdle(idleMs);
      return;
    }
    this.arm(idleMs - idleFor);
  }
}

/** What the receive clock needs from its connection. */
export interface ReceiveClockHost {
  isClosed(): boolean;
  /** The unfinished frame took longer than `timeoutMs`: close the connection. */
  onReceiveTimeout(timeoutMs: number): void;
}

/** What a connection's receive-timeout close says (on the main thread and on a network thread alike). */
export function receiveTimeoutClose(
  timeoutMs: number,
  bufferedBytes: number,
  reservedBytes: number,
): { reason: 'receive-timeout'; message: string; fields: { bufferedBytes: number; declaredBytes: number | undefined } } {
  return {
    reason: 'receive-timeout',
    message: `frame not received in full within ${timeoutMs} ms (socket.request.receive.timeout.ms)`,
    fields: { bufferedBytes, declaredBytes: reservedBytes > 0 ? reservedBytes : undefined },
  };
}

/**
 * socket.request.receive.timeout.ms: the time counted for the unfinished frame, which runs only
 * while the broker waits on the peer and stops (keeping what it counted) while the broker itself
 * does not read.
 */
export class ReceiveClock {
  /** Ms counted so far for the unfinished frame, and since when the clock runs (-1: stopped). */
  private waitedMs = 0;
  private since = -1;
  private timer: NodeJS.Timeout | undefined;

  /** `timeoutMs` <= 0: the clock never runs. */
  constructor(
    private readonly timeoutMs: number,
    private readonly host: ReceiveClockHost,
  ) {}

  /**
   * Called after each turn of the connection's pump (not once it is closed): runs the clock while
   * part of a frame is buffered and the broker waits on the peer for the rest, stops it otherwise.
   */
  update(partialFrame: boolean, waitingOnPeer: boolean): void {
    if (this.timeoutMs <= 0) return;
    if (!partialFrame) {
      this.frameDone();
      return;
    }
    if (!waitingOnPeer) {
      this.stop(false);
      return;
    }
    if (this.since >= 0) return;
    this.since = Date.now();
    if (this.timer === undefined) this.arm(this.timeoutMs - this.waitedMs);
  }

  /** The frame was received in full (or dropped): forgets the time counted for it, if any. */
  frameDone(): void {
    if (this.since >= 0 || this.waitedMs > 0) this.stop(true);
  }

  /** Stops the clock; `reset` also forgets the time counted (the frame is done or gone). */
  stop(reset: boolean): void {
    if (this.since >= 0) {
      this.waitedMs += Date.now() - this.since;
      this.since = -1;
    }
    if (reset) {
      this.waitedMs = 0;
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.onTimer(), Math.max(ms, 1));
    this.timer.unref();
  }

  private onTimer(): void {
    this.timer = undefined;
    if (this.host.isClosed() || this.since < 0) return; // stopped: re-armed when it runs again
    const waited = this.waitedMs + Date.now() - this.since;
    if (waited >= this.timeoutMs) {
      this.host.onReceiveTimeout(this.timeoutMs);
      return;
    }
    this.arm(this.timeoutMs - waited);
  }
}

/**
 * Quota throttling (KIP-219): the connection reads no request until a time; overlapping mutes
 * end at the latest end, and `onEnd` runs when it comes.
 */
export class MuteClock {
  private mutedUntil = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly onEnd: () => void) {}

  get muted(): boolean {
    return this.timer !== undefined;
  }

  /** Mutes for `ms` from now; false when an earlier mute already lasts longer. */
  muteFor(ms: number): boolean {
    const until = Date.now() + ms;
    if (until <= this.mutedUntil) return false;
    this.mutedUntil = until;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onEnd();
    }, ms);
    this.timer.unref();
    return true;
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
