/** Bounded waits at shutdown: a part that cannot stop in time must not hold the whole broker. */
import type { Logger } from 'pino';

export /** Waits for `stopping` at most `ms`, logging (never throwing) when it fails or takes longer. */
async function stopWithin(stopping: Promise<void>, ms: number, what: string, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  const outcome = await Promise.race([
    stopping.then(
      () => 'done' as const,
      (err: unknown) => err,
    ),
    timedOut,
  ]);
  clearTimeout(timer);
  if (outcome === 'timeout') logger.warn({ ms }, `${what} did not finish in time; going on`);
  else if (outcome !== 'done') logger.warn({ err: outcome }, `${what} failed`);
}
