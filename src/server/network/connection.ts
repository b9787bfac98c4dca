// One client connection: reads frames, hands them to the dispatcher (many in flight at once),
// and writes the responses strictly in request order, pausing the socket when it falls behind or
// when the broker-wide request memory (RequestMemoryPool) has no room for the next frame.
//
// Answers waiting for the peer are bounded, so a peer that pipelines requests and reads nothing
// cannot make the broker build answers without end: reading stops once the answers ready for the
// peer and not yet taken by the kernel reach queued.max.response.bytes.per.connection, and a
// request whose answer can be far larger than itself (limits.largeAnswerRequest: Fetch, Metadata,
// Describe*...) waits until the one before it has been handed to the socket, as Kafka handles
// every request (it mutes the channel until the answer is sent). Other requests stay pipelined.
//
// Two clocks (connection-clocks.ts) guard against peers that hold resources without sending
// requests: connections.max.idle.ms and socket.request.receive.timeout.ms.
import type { CloseLog, CloseReason } from './close-log.js';
import { IdleClock, MuteClock, ReceiveClock, receiveTimeoutClose } from './connection-clocks.js';
import { FrameReader, FrameSizeError } from './frame-reader.js';
import { frameRefusal } from './frame-refusal.js';
import { PRODUCE_API_KEY, requestFrameBuffers } from './frame-buffers.js';
import { sharedFrameBuffers } from './shared-frame-buffers.js';
import { FrameAdmission, type RequestMemoryPool } from './request-memory.js';
import { ResponseQueue, type ResponseSlot } from './response-queue.js';
import { writeResponseFrames } from './response-writer.js';
import { noteRequest, reportTimes } from './request-timing.js';
import type {
  ConnectionContext,
  ConnectionLimits,
  ConnectionSocket,
  ConnectionStats,
  FrameLimits,
  PartsWrittenHook,
  RequestDispatcher,
  ResponseFrame,
} from './types.js';
import { messageOf } from '../../common/errors.js';

/** A frame read but not dispatched yet: a large-answer request waiting for the one before it. */
interface ParkedFrame {
  frame: Buffer;
  held: number;
  frameAt: number; // request metrics: when the frame was complete
}

export class Connection {
  private readonly reader: FrameReader;
  private readonly queue: ResponseQueue;
  private lastDataAt = 0; // when request bytes that may end a frame last arrived: a frame is complete at the latest then
  private peakQueued = 0;
  private parked: ParkedFrame | null = null;
  private writeBlocked = false;
  /** The frame limits a socket read on a network thread was last given (it starts with the listener's). */
  private postedFrameLimits: FrameLimits | undefined;
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
  /** The frame being read: its reservation in the broker-wide request memory. */
  private readonly admission: FrameAdmission;
  private readonly idleClock: IdleClock;
  private readonly receiveClock: ReceiveClock;
  /** Quota throttling (KIP-219). */
  private readonly muteClock = new MuteClock(() => this.processFrames());

  constructor(
    private readonly socket: ConnectionSocket,
    readonly ctx: ConnectionContext,
    private readonly dispatcher: RequestDispatcher,
    private readonly limits: ConnectionLimits,
    private readonly pool: RequestMemoryPool,
    private readonly closeLog: CloseLog,
    private readonly onPartsWritten?: PartsWrittenHook,
  ) {
    this.queue = new ResponseQueue(limits.requestTimes !== undefined);
    this.postedFrameLimits = ctx.frameLimits;
    this.reader = limits.sharedProduceFrames
      ? new FrameReader(
          limits.socketRequestMaxBytes,
          () => ctx.frameLimits,
          (n, apiKey) => (apiKey === PRODUCE_API_KEY ? sharedFrameBuffers.acquire(n) : requestFrameBuffers.acquire(n)),
          (apiKey) => apiKey === PRODUCE_API_KEY,
        )
      : new FrameReader(
          limits.socketRequestMaxBytes,
          () => ctx.frameLimits,
          (n) => requestFrameBuffers.acquire(n),
        );
    // Granted from inside whichever connection released memory: continue on our own turn.
    this.admission = new FrameAdmission(pool, () => queueMicrotask(() => this.processFrames()));
    this.idleClock = new IdleClock(limits.connectionsMaxIdleMs, {
      isClosed: () => this.closed,
      isBusy: () => this.queuedRequests > 0 || this.admission.waiting,
      onIdle: (idleMs) => this.closeFor('idle', `idle for more than ${idleMs} ms (connections.max.idle.ms)`, { bufferedBytes: this.reader.bufferedBytes }),
    });
    this.receiveClock = new ReceiveClock(limits.requestReceiveTimeoutMs, {
      isClosed: () => this.closed,
      onReceiveTimeout: (timeoutMs) => {
        const c = receiveTimeoutClose(timeoutMs, this.reader.bufferedBytes, this.admission.reservedBytes);
        this.closeFor(c.reason, c.message, c.fields);
      },
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.onDrain());
    socket.on('end', () => {
      this.inputEnded = true;
      this.processFrames();
    });
    socket.on('error', (err: Error) => this.closeFor('socket-error', `socket error: ${err.message}`));
    socket.on('close', () => this.onClosed());
    ctx.muteFor = (ms) => this.muteFor(ms);
  }

  /**
   * Quota throttling: no request is read from the peer for `ms` (responses are still written);
   * overlapping mutes end at the latest end. Called from the dispatcher, in or outside the pump.
   */
  muteFor(ms: number): void {
    if (this.closed || ms <= 0) return;
    if (this.muteClock.muteFor(ms)) this.updatePause();
  }

  /** When this connection last read a whole request or wrote an answer (closing the least recently used). */
  get lastActivityMs(): number {
    return this.idleClock.lastActivityMs;
  }

  /** Closes to make room for others (max.connections), saying why in the (rate-limited) log. */
  evict(message: string): void {
    this.closeFor('max-connections', message);
  }

  get muted(): boolean {
    return this.muteClock.muted;
  }

  get queuedRequests(): number {
    return this.queue.length;
  }

  /** Answers ready for the peer that the kernel has not taken: waiting their turn, or in the socket's buffer. */
  get queuedResponseBytes(): number {
    return this.queue.readyBytes + this.socket.writableLength;
  }

  stats(): ConnectionStats {
    return {
      connectionId: this.ctx.connectionId,
      queuedRequests: this.queuedRequests,
      paused: this.paused,
      writeBlocked: this.writeBlocked,
      waitingForMemory: this.admission.waiting,
      bufferedBytes: this.reader.bufferedBytes,
      dispatched: this.dispatchedCount,
      queuedResponseBytes: this.queuedResponseBytes,
      peakQueuedResponseBytes: this.peakQueued,
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
    this.releaseReading();
    this.socket.destroy();
  }

  /** Closes for a reason the peer caused, saying so in the (rate-limited) log. */
  private closeFor(reason: CloseReason, message: string, fields: Record<string, unknown> = {}): void {
    if (this.closed) return;
    this.closeLog.closed(reason, { connectionId: this.ctx.connectionId, ...fields }, `closing connection: ${message}`);
    this.close();
  }

  /**
   * Gives back what reading holds: buffered bytes, the current frame's reservation, a place in the
   * memory queue, the timers. Dispatched requests keep their reservation until they are answered.
   */
  private releaseReading(): void {
    this.reader.clear();
    this.admission.drop();
    if (this.parked !== null) {
      this.pool.release(this.parked.held);
      this.parked = null;
    }
    this.receiveClock.stop(true);
    this.idleClock.stop();
    this.muteClock.stop();
  }

  whenClosed(): Promise<void> {
    if (this.socketClosed) return Promise.resolve();
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  private onData(chunk: Buffer): void {
    if (this.closed || this.stopping) return;
    this.reader.push(chunk);
    // A 1 MB request comes in about 16 chunks: the clock is read for those that may end a frame.
    if (this.limits.requestTimes !== undefined && this.reader.mayHaveFrame) this.lastDataAt = performance.now();
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
        const dispatchedBefore = this.dispatchedCount;
        const inputExhausted = this.dispatchAvailable();
        const written = this.writeReady();
        if (written > 0 || this.dispatchedCount !== dispatchedBefore) this.idleClock.touch();
        if (written === 0 || this.closed || this.stopping) {
          if (this.inputEnded && inputExhausted && this.reader.bufferedBytes > 0) {
            // The peer finished sending in the middle of a frame: it can never complete.
            this.reader.clear();
            this.admission.drop();
          }
          this.updatePause();
          this.updateReceiveClock(inputExhausted);
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
    if (this.parked !== null) {
      if (this.closed || this.stopping || this.overLimits() || this.queue.pendingLarge > 0) return false;
      const { frame, held, frameAt } = this.parked;
      this.parked = null;
      this.dispatch(frame, held, true, frameAt);
      if (this.ctx.closeAfterResponses === true) this.stopping = true;
    }
    while (!this.closed && !this.stopping && !this.overLimits()) {
      let frame: Buffer | null;
      try {
        const size = this.reader.frameSize();
        if (size < 0) return true;
        if (!this.admission.admit(size)) return false;
        frame = this.reader.takeFrame();
      } catch (err) {
        if (!(err instanceof FrameSizeError)) throw err;
        const refusal = frameRefusal(err, this.ctx, this.dispatchedCount === 0);
        this.closeFor(refusal.reason, refusal.message, refusal.fields);
        return false;
      }
      if (frame === null) return true;
      const held = this.admission.take();
      this.receiveClock.frameDone();
      const large = this.limits.largeAnswerRequest?.(frame) === true;
      if (large && this.queue.pendingLarge > 0) {
        // Read no further until the large answer before it has been handed to the socket.
        this.parked = { frame, held, frameAt: this.lastDataAt };
        return false;
      }
      this.dispatch(frame, held, large, this.lastDataAt);
      // A security layer gave up on this peer (failed authentication): answer what is queued, read no more.
      if (this.ctx.closeAfterResponses === true) this.stopping = true;
    }
    return false;
  }

  /** Ends our side once nothing more will be answered (server stopping, or peer done sending). */
  private maybeFinish(inputExhausted: boolean): void {
    if (this.closed || this.ended || this.queuedRequests > 0) return;
    if (this.stopping || (this.inputEnded && inputExhausted)) {
      this.ended = true;
      this.socket.end();
      // Refused by the security layer: the peer gets its answer, then the socket goes whatever it does.
      if (this.ctx.closeAfterResponses === true) setTimeout(() => this.close(), 1000).unref();
    }
  }

  private dispatch(frame: Buffer, held: number, large: boolean, frameAt: number): void {
    const slot = this.queue.add(frame.length, held, large);
    this.dispatchedCount++;
    if (this.limits.requestTimes !== undefined) noteRequest(slot, frame, frameAt, this.ctx);
    let result: Promise<ResponseFrame | null> | ResponseFrame | null;
    try {
      result = this.dispatcher(frame, this.ctx);
    } catch (err) {
      this.releaseHeld(slot);
      this.failed(err);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (response) => this.complete(slot, response),
        (err: unknown) => {
          this.releaseHeld(slot);
          this.failed(err);
        },
      );
    } else {
      this.answered(slot, result);
      this.releaseHeld(slot);
    }
  }

  private answered(slot: ResponseSlot, response: ResponseFrame | null): void {
    this.queue.answered(slot, response);
    this.notePeak();
  }

  private notePeak(): void {
    const queued = this.queuedResponseBytes;
    if (queued > this.peakQueued) this.peakQueued = queued;
  }

  /** The request was handled: its bytes no longer count against queued.max.request.bytes. */
  private releaseHeld(slot: ResponseSlot): void {
    const held = slot.held;
    if (held === 0) return;
    slot.held = 0;
    this.pool.release(held);
  }

  private complete(slot: ResponseSlot, response: ResponseFrame | null): void {
    this.releaseHeld(slot);
    if (this.closed) return;
    this.answered(slot, response);
    this.processFrames();
  }

  private failed(err: unknown): void {
    if (this.closed) return;
    const message = messageOf(err);
    this.closeFor('request-failed', `request failed: ${message}`);
  }

  /** Writes every answered response at the head of the queue; returns how many slots it retired. */
  private writeReady(): number {
    if (this.closed) return 0;
    const { responses, bytes, taken } = this.queue.takeReady();
    if (responses.length > 0) {
      this.postFrameLimits();
      if (!writeResponseFrames(this.socket, responses, bytes, this.onPartsWritten)) this.writeBlocked = true;
      this.notePeak();
    }
    if (this.limits.requestTimes !== undefined) reportTimes(this.limits.requestTimes, this.queue, this.ctx);
    return taken;
  }

  /**
   * A socket read on a network thread checks frame sizes there: tell it when authentication
   * changed the limits, before the answer that lets the peer send larger frames is written.
   */
  private postFrameLimits(): void {
    if (this.socket.setFrameLimits === undefined || this.ctx.frameLimits === this.postedFrameLimits) return;
    this.postedFrameLimits = this.ctx.frameLimits;
    this.socket.setFrameLimits(this.ctx.frameLimits);
  }

  private overLimits(): boolean {
    return (
      this.muteClock.muted ||
      this.writeBlocked ||
      this.admission.waiting ||
      this.queuedRequests >= this.limits.maxQueuedRequestsPerConnection ||
      this.queue.inFlightBytes >= this.limits.maxInFlightBytesPerConnection ||
      this.queuedResponseBytes >= this.limits.maxQueuedResponseBytes
    );
  }

  private updatePause(): void {
    if (this.closed) return;
    const shouldPause = this.stopping || this.parked !== null || this.overLimits();
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
    this.idleClock.touch();
    this.processFrames();
  }

  /**
   * Runs the receive clock while the broker waits on the peer for the rest of a frame, and stops
   * it (keeping the time counted) while the broker itself is not reading.
   */
  private updateReceiveClock(inputExhausted: boolean): void {
    if (this.closed) return;
    // Paused because the peer does not read its responses is the peer's doing: the clock runs on
    // (else a frame admitted just before would hold its reservation for as long as the peer likes).
    const waitingOnPeer = this.paused ? this.writeBlocked && !this.stopping : inputExhausted;
    this.receiveClock.update(this.reader.bufferedBytes > 0, waitingOnPeer);
  }

  private onClosed(): void {
    this.closed = true;
    this.socketClosed = true;
    this.releaseReading();
    this.queue.clear();
    for (const resolve of this.closeWaiters.splice(0)) resolve();
  }
}
