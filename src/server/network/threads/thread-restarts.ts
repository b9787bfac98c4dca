// When a network thread that ended is started again. It holds no state (its connections are
// gone with it; clients reconnect), so it is always started again: at once after a thread that
// ran a while, after a backoff (100 ms, doubling to 30 s) when it died soon after its own start,
// so a fault that comes back at once does not spin. (The shard workers' RestartPolicy also gives
// up on a shard; a broker without network threads would serve no one, so this never does.)
const QUICK_EXIT_MS = 10_000;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 30_000;

export class ThreadRestarts {
  private readonly quickInARow: number[];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(threads: number) {
    this.quickInARow = new Array<number>(threads).fill(0);
  }

  /** How long to wait before starting thread `index` again, given how long it ran. */
  delayAfterExit(index: number, ranMs: number): number {
    if (ranMs >= QUICK_EXIT_MS) {
      this.quickInARow[index] = 0;
      return 0;
    }
    const n = this.quickInARow[index] ?? 0;
    this.quickInARow[index] = n + 1;
    return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** n);
  }

  schedule(delayMs: number, start: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      start();
    }, delayMs);
    this.timers.add(timer);
  }

  cancelAll(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
