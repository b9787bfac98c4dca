/**
 * Polling with a deadline, the one way tests wait for a condition (no fixed sleeps): `waitFor`
 * calls `probe` until it returns something other than undefined/false and returns that, or
 * fails after `timeoutMs` naming `what`, the probe's last error (probes may throw while, say,
 * ZooKeeper restarts) and `explain()` (state worth seeing when it times out).
 */
export interface WaitOptions {
  /** Time between probes; the default suits in-process state, slower probes (ZooKeeper, a cluster) pass more. */
  pollMs?: number;
  explain?: () => string;
}

export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { pollMs = 20, explain }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      const state = explain ? `: ${explain()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}${state}`);
    }
    await new Promise((r) => setTimeout(r, pollMs)); // poll interval, bounded by the deadline
  }
}

/** waitFor for a probe whose value may itself be falsy: polls `read` until `ok` holds for its value. */
export async function waitForValue<T>(
  what: string,
  timeoutMs: number,
  read: () => Promise<T> | T,
  ok: (v: T) => boolean,
  options: WaitOptions = {},
): Promise<T> {
  const box = await waitFor(
    what,
    timeoutMs,
    async () => {
      const v = await read();
      return ok(v) ? { v } : undefined;
    },
    options,
  );
  return box.v;
}
