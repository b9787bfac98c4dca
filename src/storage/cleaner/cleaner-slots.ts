/**
 * How many logs the broker cleans at once when its logs are split over threads (shard workers,
 * docs/threads.md): each thread's LogManager has its own cleaner, and log.cleaner.threads caps how
 * many of them rewrite a log at the same moment, broker-wide. The counts live in shared memory,
 * so every thread takes and gives its slot without a message; a cleaner that finds none free
 * leaves its dirtiest log for its next round (log.cleaner.backoff.ms later). Each holder has a
 * cell of its own besides the total, so the slot of a thread that died while cleaning can be
 * given back by the thread that saw it die.
 */

/** The shared counts: cell 0 the cleanings under way, cell 1 + h whether holder h has one. */
export interface SharedCleanerSlots {
  cells: SharedArrayBuffer;
  /** At most this many at once (>= 1). */
  limit: number;
}

export interface CleanerSlots {
  /** Takes a slot if one is free (a holder asks for one at a time). */
  tryTake(): boolean;
  give(): void;
}

const TOTAL = 0;

export function newSharedCleanerSlots(limit: number, holders: number): SharedCleanerSlots {
  return { cells: new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * (1 + holders)), limit: Math.max(1, Math.floor(limit)) };
}

/** Holder `holder`'s side of the slots. */
export function cleanerSlotsOf(shared: SharedCleanerSlots, holder: number): CleanerSlots {
  const cells = new Int32Array(shared.cells);
  return {
    tryTake: () => {
      for (;;) {
        const now = Atomics.load(cells, TOTAL);
        if (now >= shared.limit) return false;
        if (Atomics.compareExchange(cells, TOTAL, now, now + 1) === now) {
          Atomics.store(cells, 1 + holder, 1);
          return true;
        }
      }
    },
    give: () => releaseSlotOf(shared, holder),
  };
}

/** Gives back the slot `holder` has, if it has one (its own release, or for a holder that ended). */
export function releaseSlotOf(shared: SharedCleanerSlots, holder: number): void {
  const cells = new Int32Array(shared.cells);
  if (Atomics.exchange(cells, 1 + holder, 0) === 1) Atomics.sub(cells, TOTAL, 1);
}
