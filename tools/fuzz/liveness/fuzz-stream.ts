/**
 * The fuzzer's mutations (tools/fuzz/mutate.ts, the same corpus and batch seeds as
 * `npm run fuzz`) at a moderate rate beside the soak's rounds: each batch of 1-4 inputs on a new
 * connection to the next broker in turn, given 300 ms for the broker to answer or close it.
 * No probes here (the prober measures every broker the whole time). Inputs with a frame the
 * broker would parse as one of FUZZ_DENIED_KEYS are not sent, with their batch (options.ts says why).
 */
import { ALL_HANDLERS } from '../../../src/server/handlers/index.js';
import { loadCorpus, mutate, Rng } from '../mutate.js';
import { MAX_FRAME } from '../options.js';
import { batchSeed } from '../probe-loop.js';
import { apiKeysOf, FuzzConnection } from '../wire.js';
import { FUZZ_DENIED_KEYS } from './options.js';

const WORKERS = 8;
const LINGER_MS = 300;

export class FuzzStream {
  inputs = 0;
  skipped = 0;
  connections = 0;
  closedByBroker = 0;
  connectFailures = 0;
  private batch = 0;
  private stopped = false;
  private readonly t0 = Date.now();
  private readonly corpus = loadCorpus();
  private readonly servedKeys = ALL_HANDLERS.map((h) => h.apiKey);
  private readonly workers: Promise<void>[];

  constructor(
    private readonly ports: readonly number[],
    private readonly rate: number,
    private readonly seed: number,
  ) {
    this.workers = rate > 0 ? Array.from({ length: WORKERS }, () => this.worker()) : [];
  }

  private async worker(): Promise<void> {
    while (!this.stopped) {
      // paced: input i is due at i / rate seconds after the start
      const wait = this.t0 + (this.inputs * 1000) / this.rate - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, Math.min(wait, 1000)));
      if (this.stopped) break;
      if (this.t0 + (this.inputs * 1000) / this.rate > Date.now()) continue;
      const k = this.batch++;
      const rng = new Rng(batchSeed(this.seed, k));
      const inputs: Buffer[] = [];
      for (let i = 1 + rng.int(4); i > 0; i--) inputs.push(mutate(rng, this.corpus, this.servedKeys).bytes);
      // framed as the broker will frame the connection: a lying size prefix moves the next frame
      if (apiKeysOf(Buffer.concat(inputs), MAX_FRAME).some((key) => FUZZ_DENIED_KEYS.has(key))) {
        this.skipped += inputs.length;
        continue;
      }
      this.inputs += inputs.length;
      await this.send(this.ports[k % this.ports.length]!, inputs);
    }
  }

  private async send(port: number, inputs: Buffer[]): Promise<void> {
    let conn: FuzzConnection;
    try {
      conn = await FuzzConnection.connect(port, '127.0.0.1', 10_000);
    } catch {
      this.connectFailures++;
      return;
    }
    this.connections++;
    try {
      for (const b of inputs) await conn.write(b);
      await conn.waitClosed(LINGER_MS);
      if (conn.closedByPeer) this.closedByBroker++;
    } finally {
      conn.close();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.workers);
  }
}
