// When a network thread that ended is started again. It holds no state (its connections are
// gone with it; clients reconnect), so it is always started again: at once after a thread that
// ran a while, after a backoff (100 ms, doubling to 30 s) when it died soon after its own start,
// so a fault that comes back at once does not spin. The arithmetic is the shard workers'
// RestartPolicy with these timings and no crash limit (a broker without network threads would
// serve no one, so it never gives up on one).
import { RestartPolicy } from '../../../replication/shards/worker/restart-policy.js';

const TIMINGS = { quickCrashMs: 10_000, backoffMs: 100, maxBackoffMs: 30_000, crashLimit: Number.POSITIVE_INFINITY };

export class ThreadRestarts {
  private readonly policies: RestartPolicy[];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(threads: number) {
    this.policies = Array.from({ length: threads }, () => new RestartPolicy(TIMINGS));
  }

  /** How long to wait before starting thread `index` again, given how long it ran. */
  delayAfterExit(index: number, ranMs: number): number {
    const now = Date.now();
    // Every start counts as a restart here: a thread that dies right after the broker's own start backs off too.
    const decision = this.policies[index]!.crashed(now, now - ranMs, true);
    return 'restartInMs' in decision ? decision.restartInMs : 0;
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
