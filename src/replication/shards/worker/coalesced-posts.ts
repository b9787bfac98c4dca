/**
 * Posts between the main thread and a shard worker, coalesced: everything posted in one turn of
 * the sender's event loop crosses as one message (an array), sent when the turn's I/O callbacks
 * are done (setImmediate). A receiver that sleeps pays a wake-up per message it gets (15-30 µs
 * of CPU here, docs/threads.md section 2, against ~1 µs to post one): a worker that appended
 * several requests in one turn answers them with one wake-up of the main thread, and the main
 * thread's requests to one shard from one turn (a client's pipelined Produce requests, several
 * connections read together) wake the worker once.
 */
interface Pending<M> {
  message: M;
  transfer: readonly ArrayBuffer[];
}

export class CoalescedPosts<M> {
  private queued: Pending<M>[] = [];
  private scheduled = false;

  /**
   * `postAll` sends one batch (throws as postMessage does: a message that cannot be cloned);
   * `unsent` is told of a message that could not be sent even alone (its caller must hear why).
   */
  constructor(
    private readonly postAll: (batch: M[], transfer: ArrayBuffer[]) => void,
    private readonly unsent: (message: M, err: unknown) => void,
  ) {}

  post(message: M, transfer: readonly ArrayBuffer[] = []): void {
    this.queued.push({ message, transfer });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is queued now (also called by the timer). */
  flush(): void {
    this.scheduled = false;
    const batch = this.queued;
    if (batch.length === 0) return;
    this.queued = [];
    try {
      this.postAll(
        batch.map((p) => p.message),
        transferOf(batch),
      );
    } catch {
      // One message that cannot be cloned must not sink the others: each goes alone, and the one
      // that fails is answered by its caller's `unsent` (before, postMessage threw at the call).
      for (const p of batch) {
        try {
          this.postAll([p.message], [...p.transfer]);
        } catch (err) {
          this.unsent(p.message, err);
        }
      }
    }
  }
}

/** Every message's transfer list, each buffer once (listing one twice is an error). */
function transferOf<M>(batch: readonly Pending<M>[]): ArrayBuffer[] {
  if (batch.length === 1) return [...batch[0]!.transfer];
  const all = new Set<ArrayBuffer>();
  for (const p of batch) for (const ab of p.transfer) all.add(ab);
  return [...all];
}
