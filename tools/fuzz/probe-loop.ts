/**
 * The fuzzing phase: `concurrency` workers, each taking the next batch of 1-4 mutated inputs,
 * sending them on a new connection (10% in fragments of 1-64 bytes), then probing on the same
 * connection when the bytes sent leave it in sync, and on a fresh one.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_HANDLERS } from '../../src/server/handlers/index.js';
import { loadCorpus, mutate, Rng, type CorpusEntry } from './mutate.js';
import { MAX_FRAME, STEADY_PARTITIONS, STEADY_TOPIC } from './options.js';
import { probe } from './probe.js';
import { envelope } from './repro-file.js';
import { mb } from './report.js';
import type { FuzzRun } from './run-context.js';
import { apiKeysOf, FuzzConnection, framingOf } from './wire.js';

/**
 * APIs whose answer may legitimately wait, so a late probe answer behind them on the same
 * connection is not a failure: long-poll Fetch (1), group joins (11, 14), and topic creation,
 * growth and deletion (19, 37, 20), which Fjord answers once every log exists or is gone: a
 * mutated request for thousands of partitions takes seconds (adding 2,048 partitions took 24 s
 * here), and topic config changes (33, 44) wait for the same per-broker log sync. The
 * fresh-connection probe still checks the broker serves everyone else meanwhile.
 */
const MAY_PARK = new Set([1, 11, 14, 19, 20, 33, 37, 44]);
/** How long a same-connection probe behind a request that may park waits before it counts as parked. */
const PARKED_PROBE_MS = 2000;
/** Same-connection probe failures and fresh-probe failures described in the report, at most. */
const FAILURES_KEPT = 50;
const PROGRESS_EVERY_MS = 5000;

/**
 * Whether a probe sent after `sent` on the same connection may legitimately wait: any frame the
 * broker parses out of it, not only the first (pipelined and spliced inputs hide a CreateTopics
 * or a long-poll Fetch behind an ApiVersions), is one whose answer may take long.
 */
export function mayParkBehind(sent: Buffer): boolean {
  return apiKeysOf(sent, MAX_FRAME).some((k) => MAY_PARK.has(k));
}

/** A stable per-batch seed (splitmix-style mixing of the run's seed and the batch number). */
export function batchSeed(seed: number, batch: number): number {
  let h = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(batch + 1, 0xc2b2ae35)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  return (h ^ (h >>> 15)) >>> 0;
}

interface Batch {
  rng: Rng;
  inputs: Buffer[];
}

class ProbeLoop {
  private readonly corpus: CorpusEntry[] = loadCorpus();
  private readonly servedKeys = ALL_HANDLERS.map((h) => h.apiKey);
  private nextBatch = 0;
  private nextLog = Date.now() + PROGRESS_EVERY_MS;

  constructor(private readonly run: FuzzRun) {}

  async worker(): Promise<void> {
    const report = this.run.report;
    while (report.inputsSent < this.run.opts.inputs) {
      if (this.run.restarting) await this.run.restarting;
      const batch = this.takeBatch();
      const conn = await this.connect();
      if (!conn) continue;
      report.connectionsOpened++;
      try {
        await this.send(conn, batch);
        await this.probeSameConnection(conn, batch.inputs);
        if (conn.closedByPeer) report.connectionsClosedByBroker++;
      } finally {
        conn.close();
      }
      if (report.connectionsOpened % this.run.opts.freshProbeEvery !== 0) continue;
      await this.probeFreshConnection();
      this.logProgress();
    }
  }

  /**
   * The next batch's inputs. One PRNG per batch, from the seed and the batch's number: batch k is
   * the same bytes in every run with this seed, whatever the interleaving of the workers.
   */
  private takeBatch(): Batch {
    const report = this.run.report;
    const rng = new Rng(batchSeed(this.run.opts.seed, this.nextBatch++));
    const n = Math.min(1 + rng.int(4), this.run.opts.inputs - report.inputsSent);
    report.inputsSent += n;
    const inputs: Buffer[] = [];
    for (let i = 0; i < n; i++) {
      const m = mutate(rng, this.corpus, this.servedKeys);
      report.mutations[m.kind] = (report.mutations[m.kind] ?? 0) + 1;
      inputs.push(m.bytes);
      this.run.remember(envelope(m.bytes));
    }
    return { rng, inputs };
  }

  /** A connection for the batch; a refused one counts as a failed fresh probe. */
  private async connect(): Promise<FuzzConnection | null> {
    const report = this.run.report;
    try {
      return await FuzzConnection.connect(this.run.port, this.run.host, this.run.opts.probeTimeoutMs);
    } catch (e) {
      report.freshProbes.failed++;
      report.probeFailures.push(`connect after ${report.inputsSent} inputs: ${e instanceof Error ? e.message : String(e)}`);
      await this.run.checkBroker('fuzzing');
      return null;
    }
  }

  private async send(conn: FuzzConnection, { rng, inputs }: Batch): Promise<void> {
    if (rng.next() < 0.1) {
      // fragmented: the frames arrive in small pieces
      const all = Buffer.concat(inputs);
      for (let p = 0; p < all.length; ) {
        const len = 1 + rng.int(64);
        await conn.write(all.subarray(p, p + len));
        p += len;
      }
    } else for (const b of inputs) await conn.write(b);
  }

  /** The probe on the batch's own connection, when the bytes sent leave it in sync. */
  private async probeSameConnection(conn: FuzzConnection, inputs: Buffer[]): Promise<void> {
    const report = this.run.report;
    const all = Buffer.concat(inputs);
    const mayPark = mayParkBehind(all);
    const { inSync } = framingOf(all, MAX_FRAME);
    if (!inSync) {
      report.connectionsLeftOutOfSync++;
      // the broker waits for a frame's rest, or closes the connection on a size it refuses
      await conn.waitClosed(20);
      return;
    }
    if (conn.closed) return;
    const r = await probe(conn, STEADY_TOPIC, STEADY_PARTITIONS, mayPark ? PARKED_PROBE_MS : this.run.opts.probeTimeoutMs);
    if (r.ok) report.sameConnectionProbes.answered++;
    else if (conn.closedByPeer) report.sameConnectionProbes.closedByBroker++;
    else if (mayPark) report.sameConnectionProbes.parked++;
    else {
      report.sameConnectionProbes.failed++;
      if (report.probeFailures.length < FAILURES_KEPT) {
        const file = join(this.run.reproDir, `probe-failure-${report.sameConnectionProbes.failed}.bin`);
        writeFileSync(file, Buffer.concat(inputs.map(envelope)));
        report.probeFailures.push(`same connection after ${report.inputsSent} inputs: ${r.error} (inputs in ${file})`);
      }
    }
  }

  private async probeFreshConnection(): Promise<void> {
    const report = this.run.report;
    const fresh = await this.run.probeFresh();
    if (fresh.ok) {
      report.freshProbes.answered++;
      this.run.noteLatency(fresh.latencyMs);
      return;
    }
    report.freshProbes.failed++;
    if (report.probeFailures.length < FAILURES_KEPT) report.probeFailures.push(`fresh connection after ${report.inputsSent} inputs: ${fresh.error}`);
    await this.run.checkBroker('fuzzing');
  }

  private logProgress(): void {
    if (Date.now() <= this.nextLog) return;
    this.nextLog = Date.now() + PROGRESS_EVERY_MS;
    const b = this.run.broker;
    const report = this.run.report;
    this.run.log(`${report.inputsSent} inputs, ${report.connectionsClosedByBroker} connections closed by the broker${b ? `, RSS ${mb(b.sample() ?? 0)}` : ''}`);
  }
}

/** Runs the fuzzing phase to the end of its inputs; fills in the report's fuzzing figures. */
export async function runProbeLoop(run: FuzzRun): Promise<void> {
  const loop = new ProbeLoop(run);
  await Promise.all(Array.from({ length: run.opts.concurrency }, () => loop.worker()));
}
