// The main thread's stand-in for a socket a network thread owns (num.network.threads > 1): the
// Connection (connection.ts) runs on it exactly as on a net.Socket, so the request pipeline, the
// order of answers, muting, limits and closing are the same code at one network thread or many.
// Reads arrive as whole frames from the thread; writes are copied once into memory that is
// transferred to the thread; pause/resume/end/destroy become messages. writableLength counts the
// bytes posted and not yet confirmed written, so backpressure (write() returning false, then
// 'drain') follows the real socket on the other thread.
import { EventEmitter } from 'node:events';
import type { ConnectionSocket, FrameLimits } from '../types.js';
import type { ToThread } from './protocol.js';

/** Bytes in flight to the thread above which write() says "wait for 'drain'" (a socket's is 16 KiB; posting costs more per call). */
const HIGH_WATER_MARK = 64 * 1024;

export class RemoteSocket extends EventEmitter implements ConnectionSocket {
  private posted = 0;
  private acked = 0;
  /** An ack is asked for and has not come back. */
  private ackAsked = false;
  private corked = 0;
  private readonly corkedParts: Uint8Array[] = [];
  private readonly corkedCallbacks: Array<() => void> = [];
  private paused = false;
  /** Frames that came while paused (the thread stops reading once it hears of the pause). */
  private readonly held: Buffer[] = [];
  private endHeld = false;
  private destroyed = false;
  private closeEmitted = false;

  constructor(
    readonly id: number,
    private readonly send: (m: ToThread, transfer?: ArrayBuffer[]) => void,
  ) {
    super();
  }

  get writableLength(): number {
    return this.posted - this.acked;
  }

  /** Served: the thread starts reading the peer. */
  start(): void {
    if (!this.destroyed) this.send({ t: 'serve', id: this.id });
  }

  setNoDelay(): this {
    return this; // the network thread sets it on the real socket
  }

  pause(): this {
    if (!this.paused && !this.destroyed) {
      this.paused = true;
      this.send({ t: 'pause', id: this.id });
    }
    return this;
  }

  resume(): this {
    if (this.paused && !this.destroyed) {
      this.paused = false;
      this.send({ t: 'resume', id: this.id });
      // On a later tick, as a net.Socket does: resume() is called from inside the connection's
      // pump, which ignores data that comes while it runs.
      if (this.held.length > 0 || this.endHeld) process.nextTick(() => this.releaseHeld());
    }
    return this;
  }

  private releaseHeld(): void {
    while (!this.paused && !this.destroyed && this.held.length > 0) this.emit('data', this.held.shift()!);
    if (!this.paused && !this.destroyed && this.held.length === 0 && this.endHeld) {
      this.endHeld = false;
      this.emit('end');
    }
  }

  cork(): void {
    this.corked++;
  }

  uncork(): void {
    if (this.corked === 0 || --this.corked > 0) return;
    const parts = this.corkedParts.splice(0);
    const callbacks = this.corkedCallbacks.splice(0);
    if (parts.length > 0) this.post(parts);
    for (const cb of callbacks) process.nextTick(cb);
  }

  write(chunk: Uint8Array, callback?: () => void): boolean {
    if (this.destroyed) return false;
    if (this.corked > 0) {
      this.corkedParts.push(chunk);
      if (callback) this.corkedCallbacks.push(callback);
      this.posted += chunk.length; // counted now, posted at uncork
      return this.writableLength < HIGH_WATER_MARK;
    }
    this.posted += chunk.length;
    this.post([chunk]);
    // The bytes were copied: whoever owns the chunk may reuse it.
    if (callback) process.nextTick(callback);
    return this.writableLength < HIGH_WATER_MARK;
  }

  /** Posted before any answer written after it, so the thread has the new limits before the peer can act on that answer. */
  setFrameLimits(limits: FrameLimits | undefined): void {
    if (!this.destroyed) this.send({ t: 'limits', id: this.id, ...(limits ? { limits } : {}) });
  }

  end(): this {
    if (!this.destroyed) this.send({ t: 'end', id: this.id });
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.send({ t: 'destroy', id: this.id });
    process.nextTick(() => this.emitClose());
    return this;
  }

  // --- from the network thread ---

  onFrames(bytes: Buffer): void {
    if (this.destroyed) return;
    if (this.paused || this.held.length > 0) this.held.push(bytes);
    else this.emit('data', bytes);
  }

  onEnd(): void {
    if (this.destroyed) return;
    if (this.paused || this.held.length > 0) this.endHeld = true;
    else this.emit('end');
  }

  onWritten(upTo: number): void {
    if (upTo > this.acked) this.acked = upTo;
    this.ackAsked = false;
    if (this.destroyed) return;
    if (this.writableLength < HIGH_WATER_MARK) this.emit('drain');
    else this.askAck(this.posted);
  }

  /** The thread closed the socket (peer gone, refused frame) or the thread itself ended. */
  onClosed(): void {
    this.destroyed = true;
    this.emitClose();
  }

  private emitClose(): void {
    if (this.closeEmitted) return;
    this.closeEmitted = true;
    this.emit('close');
  }

  /** One transferable copy of the parts (their memory may be pooled or shared with other data). */
  private post(parts: Uint8Array[]): void {
    let n = 0;
    for (const p of parts) n += p.length;
    const bytes = new Uint8Array(n);
    let offset = 0;
    for (const p of parts) {
      bytes.set(p, offset);
      offset += p.length;
    }
    const ack = !this.ackAsked && this.writableLength >= HIGH_WATER_MARK;
    if (ack) this.ackAsked = true;
    this.send({ t: 'write', id: this.id, bytes, upTo: this.posted, ack }, [bytes.buffer]);
  }

  private askAck(upTo: number): void {
    if (this.ackAsked) return;
    this.ackAsked = true;
    this.send({ t: 'ack', id: this.id, upTo });
  }
}
