/**
 * What the ZooKeeper session's worker thread costs per operation (issue 21, F2(a)).
 * Run: node --import tsx bench/zk-session-latency.ts [count] [rounds]
 *
 * Against a local ZooKeeper (Debian's, as the tests start it): `count` sequential getData of
 * one 100-byte znode, then `count` issued at once (throughput), through a session whose client
 * runs on a worker thread (the default, what the broker uses) and through one on the caller's
 * thread, alternating `rounds` times. Prints p50/p99/max per call and calls per second.
 */
import { ZkSession } from '../src/metadata/zk/zk-session.js';
import { startZooKeeper } from '../test/helpers/zookeeper.js';

const count = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 3);

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

async function measure(s: ZkSession): Promise<{ p50: number; p99: number; max: number; perSec: number }> {
  for (let i = 0; i < 200; i++) await s.get('/bench'); // warm-up
  const lat: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await s.get('/bench');
    lat.push(performance.now() - t0);
  }
  lat.sort((a, b) => a - b);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: count }, () => s.get('/bench')));
  const perSec = count / ((performance.now() - t0) / 1000);
  return { p50: pct(lat, 50), p99: pct(lat, 99), max: lat.at(-1)!, perSec };
}

const zk = await startZooKeeper();
try {
  const setup = await ZkSession.open({ connect: zk.connect, sessionTimeoutMs: 10_000, connectionTimeoutMs: 10_000, thread: 'caller' });
  await setup.create('/bench', Buffer.alloc(100, 7));
  await setup.close();
  const fmt = (n: number): string => n.toFixed(3);
  console.log(`${count} sequential getData, then ${count} at once; ms per call`);
  console.log('thread   round  p50     p99     max     calls/s (at once)');
  for (let r = 1; r <= rounds; r++) {
    for (const thread of ['worker', 'caller'] as const) {
      const s = await ZkSession.open({ connect: zk.connect, sessionTimeoutMs: 10_000, connectionTimeoutMs: 10_000, thread });
      const m = await measure(s);
      await s.close();
      console.log(`${thread.padEnd(8)} ${String(r).padEnd(6)} ${fmt(m.p50)}   ${fmt(m.p99)}   ${fmt(m.max)}   ${Math.round(m.perSec)}`);
    }
  }
} finally {
  await zk.stop();
}
