/**
 * Starts a broker in a child process (see broker-child-main.mjs) on a free port and a fresh
 * temporary log dir, and follows its RSS and event-loop delay. Always `await b.stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withTestIoThreads } from './io-threads.js';
import { withTestNetworkThreads } from './network-threads.js';
import { brokerChildEntry } from './built.js';

export interface ChildTopic {
  name: string;
  partitions?: number;
  configs?: Record<string, string>;
}

export class BrokerChild {
  port = 0;
  /** RSS of the last STATS line, and the highest seen since `resetPeaks`. */
  rss = 0;
  peakRss = 0;
  /** Worst event-loop delay (ms) seen since `resetPeaks`. */
  worstLoopDelayMs = 0;
  stderr = '';
  exited = false;
  exitCode: number | null = null;
  private constructor(
    private readonly child: ChildProcess,
    readonly dir: string,
  ) {}

  static async start(opts: { props?: Record<string, string>; topics?: ChildTopic[]; heapMb?: number } = {}): Promise<BrokerChild> {
    const dir = await mkdtemp(join(tmpdir(), 'fjord-child-'));
    const spec = {
      props: withTestNetworkThreads(withTestIoThreads({ listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': dir, ...opts.props })),
      topics: (opts.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitions ?? 1, configs: t.configs ?? {} })),
    };
    const nodeArgs = opts.heapMb ? [`--max-old-space-size=${opts.heapMb}`] : [];
    const child = spawn(process.execPath, [...nodeArgs, ...brokerChildEntry(), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const b = new BrokerChild(child, dir);
    child.stderr!.on('data', (d: Buffer) => (b.stderr = (b.stderr + d.toString()).slice(-4000)));
    let buf = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`broker child did not start in 60 s: ${b.stderr}`)), 60_000);
      child.on('exit', (code) => {
        b.exited = true;
        b.exitCode = code;
        clearTimeout(timer);
        reject(new Error(`broker child exited with ${code}: ${b.stderr}`));
      });
      child.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) {
          const [kind, a, c] = l.split(' ');
          if (kind === 'READY') {
            b.port = Number(a);
            clearTimeout(timer);
            resolve();
          } else if (kind === 'STATS') {
            b.rss = Number(a);
            b.peakRss = Math.max(b.peakRss, b.rss);
            b.worstLoopDelayMs = Math.max(b.worstLoopDelayMs, Number(c));
          }
        }
      });
    });
    return b;
  }

  resetPeaks(): void {
    this.peakRss = this.rss;
    this.worstLoopDelayMs = 0;
  }

  /** Waits for the next two STATS lines, so peaks cover everything until now. */
  async settle(): Promise<void> {
    for (let i = 0; i < 2; i++) {
      await new Promise<void>((resolve) => {
        const onData = (): void => {
          this.child.stdout!.off('data', onData);
          resolve();
        };
        this.child.stdout!.on('data', onData);
        this.child.once('exit', resolve);
      });
    }
  }

  async stop(): Promise<void> {
    if (!this.exited) {
      const done = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      const t = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await done;
      clearTimeout(t);
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
