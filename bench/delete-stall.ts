/**
 * The main thread's worst event-loop delay while a topic of many partitions is deleted, at
 * num.io.threads=1 and N (docs/threads.md "Swept at 3": each deleted log on a worker used to
 * post the main thread its whole directory's checkpoint entries).
 *
 *   node --import tsx bench/delete-stall.ts [partitions=2000] [repeats=3] [--threads=3]
 *
 * One broker in this process per setting (from source, temp dir, free port); per repeat a fresh
 * topic is created, then deleted while a 5 ms timer measures how late it fires (the worst
 * lateness is the worst event-loop delay: the broker's main thread is this one) until the delete
 * has answered, the logs' directories are gone and the recovery point file no longer names the
 * topic. Prints the load average before and after and, per repeat, the worst delay, when the
 * delete answered and when its logs and entries were gone.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Broker } from '../src/server/broker.js';
import { buildBrokerConfig } from '../src/server/config/index.js';
import { silentLogger } from '../src/server/logger.js';
import { Admin } from '../src/client/index.js';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const PARTITIONS = Number(positional[0] ?? 2000);
const REPEATS = Number(positional[1] ?? 3);
const THREADS = Number(process.argv.find((a) => a.startsWith('--threads='))?.slice(10) ?? 3);
const TICK_MS = 5;

/** Runs `work` while a timer measures the worst lateness of its ticks. */
async function worstDelay(work: () => Promise<void>): Promise<{ worstMs: number; tookMs: number }> {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - TICK_MS);
    last = now;
  }, TICK_MS);
  const started = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  const now = performance.now();
  return { worstMs: Math.max(worst, now - last - TICK_MS), tookMs: now - started };
}

/** Waits until no partition directory of `topic` is left in `dir` and the recovery point file no longer names it. */
async function logsGone(dir: string, topic: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const left = (await readdir(dir)).some((f) => f.startsWith(`${topic}-`) && !f.endsWith('-delete'));
    const named = (await readFile(path.join(dir, 'recovery-point-offset-checkpoint'), 'utf8')).includes(`\n${topic} `);
    if (!left && !named) return;
    if (Date.now() > deadline) throw new Error(`the logs of ${topic} are still there after 300 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function run(threads: number): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fjord-delete-stall-'));
  const raw = new Map(
    Object.entries({ listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': dir, 'num.io.threads': String(threads), 'auto.create.topics.enable': 'false' }),
  );
  const broker = new Broker(buildBrokerConfig(raw), silentLogger());
  await broker.start();
  const port = [...broker.boundPorts().values()][0]!;
  const admin = new Admin({ bootstrapServers: `127.0.0.1:${port}`, requestTimeoutMs: 120_000 });
  try {
    for (let i = 0; i < REPEATS; i++) {
      const name = `stall-${i}`;
      const created = await admin.createTopics([{ name, numPartitions: PARTITIONS, replicationFactor: 1 }], { timeoutMs: 120_000 });
      if (created.get(name)) throw new Error(`create ${name}: ${String(created.get(name))}`);
      let answered = 0;
      const started = performance.now();
      const r = await worstDelay(async () => {
        const deleted = await admin.deleteTopics([name], { timeoutMs: 120_000 });
        if (deleted.get(name)) throw new Error(`delete ${name}: ${String(deleted.get(name))}`);
        answered = performance.now();
        await logsGone(dir, name);
      });
      console.log(
        `threads=${threads} repeat ${i + 1}: worst event-loop delay ${r.worstMs.toFixed(0)} ms, delete answered in ${(answered - started).toFixed(0)} ms, logs and entries gone in ${r.tookMs.toFixed(0)} ms`,
      );
    }
  } finally {
    await admin.close();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(`${PARTITIONS} partitions, ${REPEATS} repeats, load ${load()}`);
for (const threads of [1, THREADS]) await run(threads);
console.log(`load after ${load()}`);
