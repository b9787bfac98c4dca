/**
 * Produce requests to one partition are validated concurrently (inflating compressed batches
 * runs off the event loop and takes as long as it takes) but must reach the log in the order
 * they arrived, as a client's pipelined requests are ordered. A request takes its turn on
 * arrival, waits for `ready` before it calls the partition's appendAsLeader (which queues in call
 * order), and calls `done` once it has called it or given up; `done` never lets a later request
 * overtake an earlier one still validating.
 */
export interface ArrivalTurn {
  /** Settles once every earlier turn is done. */
  ready: Promise<void>;
  /** This request has appended or given up; idempotent. */
  done: () => void;
}

export class ArrivalOrder {
  /** The last request to take its turn. */
  private last: Promise<void> = Promise.resolve();

  takeTurn(): ArrivalTurn {
    const previous = this.last;
    let pass!: () => void;
    this.last = new Promise<void>((resolve) => (pass = resolve));
    let passed = false;
    return {
      ready: previous,
      done: () => {
        if (passed) return;
        passed = true;
        void previous.then(pass);
      },
    };
  }
}
