/**
 * Preloaded into a broker by bench/latency-breakdown.ts (node --import bench/latency-probe.mjs):
 * once a second it appends one JSON line to $LATENCY_PROBE_OUT with what the broker's own thread
 * saw in that second: GC pauses (count, count over 1 ms, longest, total, by kind), event-loop
 * delay (p99, max, and the number of samples over 2 ms, read off a 1 ms-resolution histogram),
 * and the process's CPU time. The bench keeps the lines inside its measuring window. Costs one
 * timer a second and one PerformanceObserver callback per GC.
 */
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver, constants } from 'node:perf_hooks';

const out = process.env.LATENCY_PROBE_OUT;
if (out) {
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
  };
  let gc = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gc.push([kinds[e.detail?.kind] ?? String(e.detail?.kind), e.duration]);
  }).observe({ entryTypes: ['gc'] });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let cpu = process.cpuUsage();
  setInterval(() => {
    const c = process.cpuUsage();
    // Samples over 2 ms: the first recorded percentile whose delay exceeds 2 ms tells what share lies above.
    let over2 = 0;
    for (const [pct, ns] of loop.percentiles) {
      if (ns > 2e6) {
        over2 = Math.round((loop.count * (100 - pct)) / 100);
        break;
      }
    }
    const byKind = {};
    for (const [k, ms] of gc) byKind[k] = (byKind[k] ?? 0) + ms;
    appendFileSync(
      out,
      `${JSON.stringify({
        t: Date.now(),
        cpuMs: (c.user - cpu.user + c.system - cpu.system) / 1000,
        gcCount: gc.length,
        gcOver1ms: gc.filter(([, ms]) => ms > 1).length,
        gcMaxMs: gc.reduce((m, [, ms]) => Math.max(m, ms), 0),
        gcTotalMs: gc.reduce((s, [, ms]) => s + ms, 0),
        gcMsByKind: byKind,
        loopP99Ms: loop.count > 0 ? loop.percentile(99) / 1e6 : 0,
        loopMaxMs: loop.count > 0 ? loop.max / 1e6 : 0,
        loopSamples: loop.count,
        loopOver2ms: over2,
      })}\n`,
    );
    cpu = c;
    gc = [];
    loop.reset();
  }, 1000).unref();
}

// With $LATENCY_HEAP_PROFILE set: V8's sampling heap profiler runs from start, counting objects the
// garbage collector has already taken too (what makes scavenges), and SIGUSR2 writes what it
// sampled so far to that file (a .heapprofile: load it in Chrome's DevTools, or sum it by function
// as bench/latency-breakdown.ts --heap-profile does) and starts counting afresh.
const heapOut = process.env.LATENCY_HEAP_PROFILE;
if (heapOut) {
  const { Session } = await import('node:inspector');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  const start = () =>
    session.post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
  session.post('HeapProfiler.enable', () => start());
  process.on('SIGUSR2', () => {
    session.post('HeapProfiler.stopSampling', (err, res) => {
      if (!err) writeFileSync(heapOut, JSON.stringify(res.profile));
      start();
    });
  });
}
