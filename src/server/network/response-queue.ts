// A connection's requests in flight, in request order, with their answers once the dispatcher
// gives them: answers are taken for writing strictly from the front, so a later answer waits for
// every earlier one. It keeps the counts the connection's limits read: requests and request bytes
// in flight, bytes of answers ready but not taken, and large-answer requests not yet written.
import { frameLength } from './response-writer.js';
import type { ResponseFrame } from './types.js';

/** A request awaiting its turn in the output; `response` is set once the dispatcher answered. */
export interface ResponseSlot {
  done: boolean;
  response: ResponseFrame | null;
  requestBytes: number;
  /** Bytes still reserved in the request memory pool for this request (released once answered). */
  held: number;
  /** A large-answer request (counted in pendingLarge until taken). */
  large: boolean;
  /** The answer's size with its prefix, once answered (counted in readyBytes until taken). */
  responseBytes: number;
  /** Request metrics (connection.ts): the request's API key and version, -1 when not measured. */
  apiKey: number;
  apiVersion: number;
  /** performance.now() when the frame was complete, when its handling started, when the answer was ready. */
  frameAt: number;
  dispatchedAt: number;
  answeredAt: number;
}

const EMPTY_SLOT: ResponseSlot = {
  done: true,
  response: null,
  requestBytes: 0,
  held: 0,
  large: false,
  responseBytes: 0,
  apiKey: -1,
  apiVersion: -1,
  frameAt: 0,
  dispatchedAt: 0,
  answeredAt: 0,
};

export class ResponseQueue {
  /** Slots in request order; slots before `head` have been taken. */
  private slots: ResponseSlot[] = [];
  private head = 0;
  /** Request bytes of the slots not taken yet. */
  inFlightBytes = 0;
  /** Answer bytes (with prefixes) of the answered slots not taken yet. */
  readyBytes = 0;
  /** Large-answer requests not taken yet. */
  pendingLarge = 0;
  /** With request metrics on: the slots the last takeReady took (reused array; the connection empties it). */
  readonly taken: ResponseSlot[] = [];
  /** With request metrics on: when the last takeReady ran (performance.now()). */
  takenAt = 0;

  constructor(private readonly keepTaken = false) {}

  get length(): number {
    return this.slots.length - this.head;
  }

  add(requestBytes: number, held: number, large: boolean): ResponseSlot {
    const slot: ResponseSlot = {
      done: false,
      response: null,
      requestBytes,
      held,
      large,
      responseBytes: 0,
      apiKey: -1,
      apiVersion: -1,
      frameAt: 0,
      dispatchedAt: 0,
      answeredAt: 0,
    };
    this.slots.push(slot);
    this.inFlightBytes += requestBytes;
    if (large) this.pendingLarge++;
    return slot;
  }

  answered(slot: ResponseSlot, response: ResponseFrame | null): void {
    slot.done = true;
    slot.response = response;
    if (this.keepTaken) slot.answeredAt = performance.now();
    if (response === null) return;
    slot.responseBytes = 4 + frameLength(response);
    this.readyBytes += slot.responseBytes;
  }

  /**
   * Takes every answered slot at the front: the answers to write (null answers, acks=0, take a
   * slot but write nothing), their total size with prefixes, and how many slots were taken.
   */
  takeReady(): { responses: ResponseFrame[]; bytes: number; taken: number } {
    const responses: ResponseFrame[] = [];
    let bytes = 0;
    let taken = 0;
    while (this.head < this.slots.length && this.slots[this.head]!.done) {
      const slot = this.slots[this.head]!;
      // The clock is read only when something is taken (most calls, after a dispatch, take nothing).
      if (this.keepTaken && taken === 0) this.takenAt = performance.now();
      this.slots[this.head] = EMPTY_SLOT;
      this.head++;
      taken++;
      this.inFlightBytes -= slot.requestBytes;
      this.readyBytes -= slot.responseBytes;
      if (slot.large) this.pendingLarge--;
      if (this.keepTaken) this.taken.push(slot);
      if (slot.response !== null) {
        responses.push(slot.response);
        bytes += slot.responseBytes;
      }
    }
    if (taken > 0) this.compact();
    return { responses, bytes, taken };
  }

  /** The connection closed: answers still to come are dropped. */
  clear(): void {
    this.slots = [];
    this.head = 0;
    this.inFlightBytes = 0;
    this.readyBytes = 0;
    this.pendingLarge = 0;
    this.taken.length = 0;
  }

  /** Drops taken slots from the front once enough accumulate, so the array does not grow forever. */
  private compact(): void {
    if (this.head === this.slots.length) {
      this.slots = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.slots.length) {
      this.slots = this.slots.slice(this.head);
      this.head = 0;
    }
  }
}
