// One client connection: reads frames, hands them to the dispatcher (many in flight at once),
// and writes the responses strictly in request order, pausing the socket when it falls behind.
import type { Socket } from 'node:net';
import { FrameReader, FrameSizeError } from './frame-reader.js';
import type { ConnectionContext, ConnectionLimits, NetworkLogger, PartsWrittenHook, RequestDispatcher, ResponseFrame } from './types.js';

/** A request awaiting its turn in the output; `response` is set once the dispatcher answered. */
interface ResponseSlot {
  done: boolean;
  response: ResponseFrame | null;
  requestBytes: number;
}

export interface ConnectionStats {
  connectionId: string;
  /** Requests dispatched whose response has not been written yet. */
  queuedRequests: number;
  paused: boolean;
  writeBlocked: boolean;
  dispatched: number;
}

export class Connection {
  private readonly reader: FrameReader;
  /** Slots in request order; slots before `head` have been written. */
  private slots: ResponseSlot[] = [];
  private head = 0;
  private inFlightBytes = 0;
  private writeBlocked = false;
  private paused = false;
  /** The server is stopping: no new requests are dispatched, answered ones are still written. */
  private stopping = false;
  /** The peer half-closed: buffered requests are still answered, then our side ends. */
  private inputEnded = false;
  private ended = false;
  /** Guards processFrames against re-entry from synchronous dispatcher answers. */
  private processing = false;
  private closed = false;
  /** The socket's 'close' event has fired. */
  private socketClosed = false;
  private dispatchedCount = 0;
  private readonly closeWaiters: Array<() => void> = [];

  constructor(
    private readonly socket: Socket,
    readonly ctx: ConnectionContext,
    private readonly dispatcher: RequestDispatcher,
    private readonly limits: ConnectionLimits,
    private readonly logger: NetworkLogger,
    private readonly onPartsWritten?: PartsWrittenHook,
  ) {
    this.reader = new FrameReader(limits.socketRequestMaxBytes);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.onDrain());
    socket.on('end', () => {
      this.inputEnded = true;
      this.processFrames();
    });
    socket.on('error', (err: Error) => {
      this.logger.debug({ connectionId: ctx.connectionId, err: err.message }, 'socket error');
      this.close();
    });
    socket.on('close', () => this.onClosed());
    if (limits.connectionsMaxIdleMs > 0) {
      // Node re-arms this on any socket activity, so there is no per-request timer.
      socket.setTimeout(limits.connectionsMaxIdleMs, () => this.onIdle());
    }
  }

  get queuedRequests(): number {
    return this.slots.length - this.head;
  }

  stats(): ConnectionStats {
    return {
      connectionId: this.ctx.connectionId,
      queuedRequests: this.queuedRequests,
      paused: this.paused,
      writeBlocked: this.writeBlocked,
      dispatched: this.dispatchedCount,
    };
  }

  /** Stops reading requests, lets the ones in flight be answered, then closes (or at the deadline). */
  async drainAndClose(deadline: Promise<void>): Promise<void> {
    if (!this.closed) {
      this.stopping = true;
      this.updatePause();
      this.maybeFinish(false);
    }
    await Promise.race([this.whenClosed(), deadline]);
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
  }

  whenClosed(): Promise<void> {
    if (this.socketClosed) return Promise.resolve();
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  private onData(chunk: Buffer): void {
    if (this.closed || this.stopping) return;
    this.reader.push(chunk);
    this.processFrames();
  }

  /**
   * The connection's pump: dispatches complete frames while the limits allow, writes the responses
   * that are ready at the head of the queue, and repeats while writing freed room. Synchronous
   * dispatcher answers are therefore written in batches (one socket write per chunk of requests).
   */
  private processFrames(): void {
    if (this.processing) return; // the running pump picks up whatever changed on its next turn
    this.processing = true;
    try {
      for (;;) {
        const inputExhausted = this.dispatchAvailable();
        const written = this.writeReady();
        if (written === 0 || this.closed || this.stopping) {
          this.updatePause();
          this.maybeFinish(inputExhausted);
          return;
        }
      }
    } finally {
      this.processing = false;
    }
  }

  /** Dispatches buffered frames until none is complete or a limit is hit; true when input ran out. */
  private dispatchAvailable(): boolean {
    while (!this.closed && !this.stopping && !this.overLimits()) {
      let frame: Buffer | null;
      try {
        frame = this.reader.next();
      } catch (err) {
        if (!(err instanceof FrameSizeError)) throw err;
        this.logger.warn({ connectionId: this.ctx.connectionId, size: err.size }, `closing connection: ${err.message}`);
        this.close();
        return false;
      }
      if (frame === null) return true;
      this.dispatch(frame);
    }
    return false;
  }

  /** Ends our side once nothing more will be answered (server stopping, or peer done sending). */
  private maybeFinish(inputExhausted: boolean): void {
    if (this.closed || this.ended || this.queuedRequests > 0) return;
    if (this.stopping || (this.inputEnded && inputExhausted)) {
      this.ended = true;
      this.socket.end();
    }
  }

  private dispatch(frame: Buffer): void {
    const slot: ResponseSlot = { done: false, response: null, requestBytes: frame.length };
    this.slots.push(slot);
    this.inFlightBytes += frame.length;
    this.dispatchedCount++;
    let result: Promise<ResponseFrame | null> | ResponseFrame | null;
    try {
      result = this.dispatcher(frame, this.ctx);
    } catch (err) {
      this.failed(err);
      return;
    }
    if (result instanceof Promise) {
      result.then((response) => this.complete(slot, response), (err: unknown) => this.failed(err));
    } else {
      slot.done = true;
      slot.response = result;
    }
  }

  private complete(slot: ResponseSlot, response: ResponseFrame | null): void {
    if (this.closed) return;
    slot.done = true;
    slot.response = response;
    this.processFrames();
  }

  private failed(err: unknown): void {
    if (this.closed) return;
    const message = err instanceof Error ? err.message : String(err);
    this.logger.warn({ connectionId: this.ctx.connectionId, err: message }, 'closing connection after request failure');
    this.close();
  }

  /** Writes every answered response at the head of the queue; returns how many slots it retired. */
  private writeReady(): number {
    if (this.closed) return 0;
    let retired = 0;
    let bytes = 0;
    const responses: ResponseFrame[] = [];
    while (this.head < this.slots.length && this.slots[this.head]!.done) {
      const slot = this.slots[this.head]!;
      this.slots[this.head] = EMPTY_SLOT;
      this.head++;
      retired++;
      this.inFlightBytes -= slot.requestBytes;
      if (slot.response !== null) {
        responses.push(slot.response);
        bytes += 4 + frameLength(slot.response);
      }
    }
    if (responses.length > 0 && !this.writeResponses(responses, bytes)) this.writeBlocked = true;
    if (retired > 0) this.compactSlots();
    return retired;
  }

  /**
   * Writes size-prefixed responses. Small batches are copied into one buffer (one write call);
   * big responses (and the parts of multi-part ones) are written as they are, behind a 4-byte
   * prefix, corked so the kernel gets one vectored write without copying them.
   * Returns false when the socket's buffer is over its high-water mark.
   */
  private writeResponses(responses: ResponseFrame[], bytes: number): boolean {
    if (bytes <= COALESCE_MAX_BYTES) {
      const out = Buffer.allocUnsafe(bytes);
      let offset = 0;
      for (const r of responses) {
        offset = out.writeInt32BE(frameLength(r), offset);
        if (Buffer.isBuffer(r)) offset += r.copy(out, offset);
        else {
          for (const part of r) offset += part.copy(out, offset);
          this.onPartsWritten?.(r);
        }
      }
      return this.socket.write(out);
    }
    let ok = true;
    this.socket.cork();
    for (const r of responses) {
      const prefix = Buffer.allocUnsafe(4);
      prefix.writeInt32BE(frameLength(r), 0);
      ok = this.socket.write(prefix) && ok;
      if (Buffer.isBuffer(r)) ok = this.socket.write(r) && ok;
      else {
        const hook = this.onPartsWritten;
        // The last part's callback runs once libuv is done with all of them (or they were dropped).
        r.forEach((part, i) => {
          ok = this.socket.write(part, hook && i === r.length - 1 ? () => hook(r) : undefined) && ok;
        });
      }
    }
    this.socket.uncork();
    return ok;
  }

  /** Drops written slots from the front once enough accumulate, so the array does not grow forever. */
  private compactSlots(): void {
    if (this.head === this.slots.length) {
      this.slots = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.slots.length) {
      this.slots = this.slots.slice(this.head);
      this.head = 0;
    }
  }

  private overLimits(): boolean {
    return (
      this.writeBlocked ||
      this.queuedRequests >= this.limits.maxQueuedRequestsPerConnection ||
      this.inFlightBytes >= this.limits.maxInFlightBytesPerConnection
    );
  }

  private updatePause(): void {
    if (this.closed) return;
    const shouldPause = this.stopping || this.overLimits();
    if (shouldPause && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!shouldPause && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private onDrain(): void {
    this.writeBlocked = false;
    this.processFrames();
  }

  private onIdle(): void {
    if (this.queuedRequests > 0) {
      // A slow request (e.g. a long fetch wait) is not idleness; check again later.
      this.socket.setTimeout(this.limits.connectionsMaxIdleMs);
      return;
    }
    this.logger.info({ connectionId: this.ctx.connectionId }, `closing connection idle for more than ${this.limits.connectionsMaxIdleMs} ms`);
    this.close();
  }

  private onClosed(): void {
    this.closed = true;
    this.socketClosed = true;
    this.slots = [];
    this.head = 0;
    for (const resolve of this.closeWaiters.splice(0)) resolve();
  }
}

function frameLength(r: ResponseFrame): number {
  if (Buffer.isBuffer(r)) return r.length;
  let n = 0;
  for (const part of r) n += part.length;
  return n;
}

/** Batches up to this size are copied into a single write. */
const COALESCE_MAX_BYTES = 64 * 1024;

const EMPTY_SLOT: ResponseSlot = { done: true, response: null, requestBytes: 0 };
