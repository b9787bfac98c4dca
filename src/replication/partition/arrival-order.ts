/**
 * Produce requests to one partition are validated concurrently (inflating compressed batches
 * runs off the event loop and takes as long as it takes) but must reach the log in the order
 * they arrived, as a client's pipelined requests are ordered. A request takes its turn on
 * arrival, waits for `ready` before it calls the partition's appendAsLeader (which queues in call
 * order), and calls `done` once it has called it or given up; `done` never lets a later request
 * overtake an earlier one still validating.
 */
export interface ArrivalTurn {
  /** True when every earlier turn was done when this one was taken: no need to wait for `ready`. */
  readonly readyNow: boolean;
  /** Settles once every earlier turn is done. */
  readonly ready: Promise<void>;
  /** This request has appended or given up; idempotent. */
  done(): void;
}

const SETTLED: Promise<void> = Promise.resolve();

/**
 * One request's turn. Its promises are made only when someone waits: a partition with one
 * request at a time (the latency case: one record per request) takes and passes turns without
 * allocating any.
 */
class Turn implements ArrivalTurn {
  /** Done, and every earlier turn finished: the next turn may go. */
  finished = false;
  private doneCalled = false;
  private whenFinished?: { promise: Promise<void>; resolve: () => void };

  readonly readyNow: boolean;

  constructor(
    private readonly order: ArrivalOrder,
    /**
     * The turn before this one, unless it had finished when this one was taken; dropped when
     * this one finishes, so finished turns are not kept alive in a chain.
     */
    private previous: Turn | undefined,
  ) {
    this.readyNow = previous === undefined;
  }

  get ready(): Promise<void> {
    return this.previous === undefined ? SETTLED : this.previous.finishedPromise();
  }

  done(): void {
    if (this.doneCalled) return;
    this.doneCalled = true;
    if (this.previous === undefined || this.previous.finished) this.finish();
    else void this.previous.finishedPromise().then(() => this.finish());
  }

  finishedPromise(): Promise<void> {
    if (this.finished) return SETTLED;
    if (!this.whenFinished) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.whenFinished = { promise, resolve };
    }
    return this.whenFinished.promise;
  }

  private finish(): void {
    this.finished = true;
    this.previous = undefined;
    this.whenFinished?.resolve();
    this.order.finished(this);
  }
}

export class ArrivalOrder {
  /** The last turn taken, until it finishes. */
  private last: Turn | undefined;

  takeTurn(): ArrivalTurn {
    const turn = new Turn(this, this.last);
    this.last = turn;
    return turn;
  }

  /** A turn finished: if it was the last one taken, the next starts with nobody ahead. */
  finished(turn: Turn): void {
    if (this.last === turn) this.last = undefined;
  }
}
