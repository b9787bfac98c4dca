/**
 * The soak's prober, in its own process so the harness's own work does not delay it:
 *   node --import tsx tools/fuzz/liveness/prober.ts <host:port,...> <topic> <partitions> <interval ms>
 * Every interval it starts, at each broker, the fuzzer's probe (ApiVersions, then Metadata of
 * the load's topic, on a fresh connection: tools/fuzz/probe.ts), whether or not the previous
 * ones were answered (at most 100 waiting per broker), so a broker that holds its loop for 10 s
 * shows 10 s worth of slow probes, not one. Once a second one JSON line per broker:
 *   {"broker":i,"h":{"<ms>":count,...},"failed":n,"lastError":"..."}
 */
import { probeFresh } from '../probe.js';

const [bootstrap, topic, partitionsArg, intervalArg] = process.argv.slice(2);
if (!bootstrap || !topic) {
  process.stderr.write('usage: prober <host:port,...> <topic> <partitions> <interval ms>\n');
  process.exit(2);
}
const partitions = Number(partitionsArg ?? 3);
const intervalMs = Number(intervalArg ?? 200);
const MAX_WAITING = 100;
const TIMEOUT_MS = 30_000;

interface PerBroker {
  host: string;
  port: number;
  waiting: number;
  h: Record<string, number>;
  failed: number;
  lastError: string;
}

const brokers: PerBroker[] = bootstrap.split(',').map((hp) => {
  const [host, port] = hp.split(':');
  return { host: host!, port: Number(port), waiting: 0, h: {}, failed: 0, lastError: '' };
});

const probeTimer = setInterval(() => {
  for (const b of brokers) {
    if (b.waiting >= MAX_WAITING) continue;
    b.waiting++;
    void probeFresh(b.host, b.port, topic, partitions, TIMEOUT_MS).then((r) => {
      b.waiting--;
      // a failed probe counts with the time it took: the client waited that long for nothing
      const k = String(Math.round(r.latencyMs));
      b.h[k] = (b.h[k] ?? 0) + 1;
      if (!r.ok) {
        b.failed++;
        b.lastError = r.error ?? '';
      }
    });
  }
}, intervalMs);

function report(): void {
  brokers.forEach((b, i) => {
    process.stdout.write(JSON.stringify({ broker: i, h: b.h, failed: b.failed, lastError: b.lastError }) + '\n');
    b.h = {};
    b.failed = 0;
  });
}
const reportTimer = setInterval(report, 1000);

const stop = (): void => {
  clearInterval(probeTimer);
  clearInterval(reportTimer);
  report(); // the last second's probes too (probes still waiting are not counted)
  process.stdout.write('', () => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop); // the harness went away
process.stdin.resume();
