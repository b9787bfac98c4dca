/**
 * Long loops in slices. Everything of a broker shares one event loop, so a request that names
 * 100,000 resources must not walk them in one go: after a few ms of work it lets the loop serve
 * the other connections (and timers: heartbeats, session pings) before it goes on.
 */

/** How long one slice may hold the loop, in ms. */
export const SLICE_MS = 4;

/** Lists this short are walked in one go. */
const FEW = 16;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Measures one piece of work's slices: `due()` says when it is time to let the loop in. */
export class LoopSlicer {
  private started = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** True once this slice has lasted sliceMs; the caller then awaits `pause()`. */
  due(): boolean {
    return performance.now() - this.started >= this.sliceMs;
  }

  /** Lets the event loop run (I/O, timers, other requests), then starts a new slice. */
  async pause(): Promise<void> {
    await nextTurn();
    this.started = performance.now();
  }

  /** `pause()` when due, else nothing (no await, so no cost per item). */
  maybePause(): Promise<void> | undefined {
    return this.due() ? this.pause() : undefined;
  }
}

/** `items.map(fn)` for a synchronous `fn`, in slices. */
export async function mapInSlices<T, R>(items: readonly T[], fn: (item: T, index: number) => R, slicer = new LoopSlicer()): Promise<R[]> {
  const out = new Array<R>(items.length);
  for (let i = 0; i < items.length; i++) {
    out[i] = fn(items[i]!, i);
    const p = slicer.maybePause();
    if (p) await p;
  }
  return out;
}

/**
 * `Promise.all(items.map(fn))` with `fn` started in slices: each call's synchronous part runs in
 * the slice and its promise is kept, so I/O still overlaps. Each promise gets its handler at once
 * (a rejection must not sit unhandled while the loop runs); the first error is thrown once all
 * have settled.
 */
export async function allInSlices<T, R>(items: readonly T[], fn: (item: T, index: number) => Promise<R>, slicer = new LoopSlicer()): Promise<R[]> {
  // A handful of items cannot hold the loop: no clock reads, no extra promise each.
  if (items.length <= FEW) return Promise.all(items.map(fn));
  let failure: { err: unknown } | undefined;
  const started = await mapInSlices(
    items,
    (item, i) =>
      fn(item, i).catch((err: unknown) => {
        failure ??= { err };
        return undefined as R;
      }),
    slicer,
  );
  const out = await Promise.all(started);
  if (failure) throw failure.err;
  return out;
}
