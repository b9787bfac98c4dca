/**
 * The broker's own view of its event-loop delay: with the debug level on, one line a second
 * reports the worst delay of the last interval and since start, the process RSS and its
 * breakdown (process.memoryUsage(): JS heap used and total, external, array buffers). Tools that
 * attack the broker (tools/fuzz) read these lines to see how long a hostile input held the loop,
 * which a client can only estimate from its request latency. Costs nothing below debug.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from 'pino';

export const EVENT_LOOP_REPORT_MESSAGE = 'event loop delay';

/** Starts reporting when `logger` has debug on; returns the function that stops it. */
export function startEventLoopReport(logger: Logger, intervalMs = 1000): () => void {
  if (!logger.isLevelEnabled('debug')) return () => undefined;
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let worstMs = 0;
  let due = performance.now() + intervalMs;
  const timer = setInterval(() => {
    // The report's own lateness counts too: when the loop was held, this timer and the
    // histogram's fire together, and the histogram may record the delay only after this reset.
    const now = performance.now();
    const lateMs = Math.max(0, now - due);
    due = now + intervalMs;
    const maxMs = Math.max(histogram.max / 1e6, lateMs);
    worstMs = Math.max(worstMs, maxMs);
    // Where the memory is: the JS heap, or outside it (Buffers: sockets' reads, frames held).
    const m = process.memoryUsage();
    logger.debug(
      {
        eventLoopDelayMaxMs: round(maxMs),
        eventLoopDelayP99Ms: round(histogram.percentile(99) / 1e6),
        worstEventLoopDelayMs: round(worstMs),
        rssBytes: m.rss,
        heapUsedBytes: m.heapUsed,
        heapTotalBytes: m.heapTotal,
        externalBytes: m.external,
        arrayBuffersBytes: m.arrayBuffers,
      },
      EVENT_LOOP_REPORT_MESSAGE,
    );
    histogram.reset();
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    histogram.disable();
  };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
