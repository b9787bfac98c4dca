/**
 * Read-side compression bombs against a broker child process (so its RSS can be measured):
 * down-conversion for Fetch v0/v1/v3 of a 900 MB gzip batch, and ListOffsets by timestamp over
 * a zstd batch declaring 2 GiB. Each must answer within the request's byte limits, with the
 * broker's RSS staying low and a client beside it still served promptly.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec, ListOffsetsRequestCodec, ListOffsetsResponseCodec } from '../../../src/protocol/messages/index.js';
import { readLegacyMessageSet } from '../../../src/protocol/records/index.js';
import { RawClient } from '../../helpers/raw-client.js';
import { fetchOne } from './data-plane-helpers.js';

const CHILD = fileURLToPath(new URL('./bomb-broker-child.ts', import.meta.url));
const T = 1_700_000_000_000;
const MESSAGE_TOO_LARGE = 10;
/** Generous: the cap is 32 MiB of inflated bytes; without it RSS grew by 2.8 GB (gzip) and 3 GB (zstd). */
const RSS_GROWTH_BOUND = 300 << 20;
/** Generous for a loaded 2-core machine (measured 24-64 ms at load 13-18); the byte-by-byte lz4 decoder held the loop 900 ms. */
const SIDE_DELAY_BOUND_MS = 500;

let child: ChildProcess;
let port: number;
let baseRss = 0;
let peakRss = 0;
let sampler: NodeJS.Timeout | undefined;
let side: RawClient;
let sideWorst = 0;
let sideRunning = true;
let sideLoop: Promise<void> | undefined;
let lines: ReturnType<typeof createInterface>;

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

before(async () => {
  child = spawn(process.execPath, ['--import', 'tsx', CHILD], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([l]) => String(l)),
    once(child, 'exit').then(() => {
      throw new Error(`broker child exited: ${stderr}`);
    }),
  ]);
  port = (JSON.parse(first) as { port: number }).port;
  baseRss = rssOf(child.pid!);
  peakRss = baseRss;
  sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, rssOf(child.pid!));
    } catch {
      // exited
    }
  }, 5);
  // A client beside the bombs: ApiVersions round trips, back to back; the worst one is the
  // longest the broker's event loop kept it waiting.
  side = await RawClient.connect(port);
  side.socket.setMaxListeners(0); // RawClient adds a close listener per request
  sideLoop = (async () => {
    while (sideRunning) {
      const t0 = performance.now();
      await side.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'side', clientSoftwareVersion: '1' });
      sideWorst = Math.max(sideWorst, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
});

after(async () => {
  sideRunning = false;
  if (sampler) clearInterval(sampler);
  // before() failed (the child exited or never got its side client): its error is the failure.
  if (sideLoop === undefined) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return;
  }
  await sideLoop.catch(() => undefined);
  side.close();
  const exited = once(child, 'exit');
  const report = once(lines, 'line').then(([l]) => JSON.parse(String(l)) as { eventLoopMaxMs: number; eventLoopP99Ms: number });
  child.kill('SIGTERM');
  const loop = await report;
  await exited;
  console.log(
    `broker RSS: base ${(baseRss / 2 ** 20).toFixed(0)} MiB, peak ${(peakRss / 2 ** 20).toFixed(0)} MiB; worst side-client round trip ${sideWorst.toFixed(1)} ms; ` +
      `broker event-loop delay max ${loop.eventLoopMaxMs.toFixed(1)} ms, p99 ${loop.eventLoopP99Ms.toFixed(1)} ms`,
  );
  assert.ok(peakRss - baseRss < RSS_GROWTH_BOUND, `RSS grew by ${((peakRss - baseRss) / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(sideWorst < SIDE_DELAY_BOUND_MS, `a client beside the bombs waited ${sideWorst.toFixed(0)} ms`);
});

for (const [topic, what] of [
  ['gz', '900 MB gzip'],
  ['lz', '64 MiB lz4'],
] as const)
  for (const version of [0, 1, 3]) {
    const magic = version <= 1 ? 0 : 1;
    test(`Fetch v${version}: down-conversion stops before a ${what} batch; the batch itself answers MESSAGE_TOO_LARGE`, async () => {
      const c = await RawClient.connect(port);
      try {
        const maxBytes = 1 << 20;
        const t0 = performance.now();
        // From 0: the two small messages, then the bomb, which is not sent.
        let res = await fetchOne(c, version, topic, 0, 0, { maxBytes });
        let p = res.responses[0]!.partitions[0]!;
        assert.equal(p.errorCode, 0);
        assert.ok(p.records!.length <= maxBytes, `records of ${p.records!.length} bytes`);
        let msgs = readLegacyMessageSet(p.records!).messages;
        assert.deepEqual(
          msgs.map((m) => [m.offset, m.magic, m.value?.toString()]),
          [
            [0n, magic, 'before-1'],
            [1n, magic, 'before-2'],
          ],
        );
        // At the bomb: an error for the partition, no records, instead of a 900 MB message.
        res = await fetchOne(c, version, topic, 0, 2, { maxBytes });
        p = res.responses[0]!.partitions[0]!;
        assert.equal(p.errorCode, MESSAGE_TOO_LARGE);
        assert.equal(p.records?.length ?? 0, 0);
        assert.equal(p.highWatermark, 4n);
        // Past it, reading goes on.
        res = await fetchOne(c, version, topic, 0, 3, { maxBytes });
        p = res.responses[0]!.partitions[0]!;
        msgs = readLegacyMessageSet(p.records!).messages;
        assert.deepEqual(
          msgs.map((m) => [m.offset, m.value?.toString()]),
          [[3n, 'after']],
        );
        const ms = performance.now() - t0;
        assert.ok(ms < 10_000, `three fetches took ${ms.toFixed(0)} ms`);
      } finally {
        c.close();
      }
    });
  }

test('ListOffsets by timestamp over a zstd batch declaring 2 GiB: fast, bounded, batch start as the answer', async () => {
  const c = await RawClient.connect(port);
  c.socket.setMaxListeners(0); // RawClient adds a close listener per request
  try {
    const lookup = async (timestamp: number) => {
      const t0 = performance.now();
      const res = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 4, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: 'zs', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp) }] }],
      });
      const p = res.topics[0]!.partitions[0]!;
      return { errorCode: p.errorCode, offset: Number(p.offset), timestamp: Number(p.timestamp), ms: performance.now() - t0 };
    };
    for (let i = 0; i < 5; i++) {
      // The candidate is the bomb: it cannot be inflated within the cap, so the answer is the
      // batch's first offset and its maxTimestamp (no record before the target is skipped).
      const hit = await lookup(T - 500);
      assert.deepEqual([hit.errorCode, hit.offset, hit.timestamp], [0, 1, T]);
      assert.ok(hit.ms < 2000, `lookup took ${hit.ms.toFixed(0)} ms`);
      // Past the bomb's maxTimestamp: skipped on its header alone.
      const later = await lookup(T + 500);
      assert.deepEqual([later.errorCode, later.offset, later.timestamp], [0, 2049, T + 1000]); // the bomb holds offsets 1-2048
      const before = await lookup(T - 2000);
      assert.deepEqual([before.errorCode, before.offset, before.timestamp], [0, 0, T - 1000]);
    }
  } finally {
    c.close();
  }
});
