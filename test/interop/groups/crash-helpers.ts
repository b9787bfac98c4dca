/**
 * Helpers for the crash-and-resume tests: child processes whose "<partition> <offset>" lines
 * are collected as they arrive, a broker child that can be SIGKILLed and restarted on the same
 * port, and the checks (resume at the committed offset, nothing skipped).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { once } from 'node:events';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { brokerChildEntry } from '../../helpers/built.js';

const here = dirname(fileURLToPath(import.meta.url));
export const KAFKAJS_CONSUMER = join(here, 'kafkajs-consumer.ts');
export const CONFLUENT_CONSUMER = join(here, 'confluent-consumer.py');

export interface Consumed {
  partition: number;
  offset: number;
}

export class LineProcess {
  readonly child: ChildProcess;
  readonly lines: Consumed[] = [];
  stderr = '';
  private waiters: (() => void)[] = [];
  private buf = '';
  exited = false;

  constructor(cmd: string, args: string[]) {
    this.child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buf += d.toString();
      const parts = this.buf.split('\n');
      this.buf = parts.pop()!;
      for (const l of parts) {
        const [p, o] = l.trim().split(' ');
        if (p !== undefined && o !== undefined && /^\d+$/.test(p) && /^\d+$/.test(o)) this.lines.push({ partition: Number(p), offset: Number(o) });
      }
      for (const w of this.waiters) w();
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.child.on('exit', () => {
      this.exited = true;
      for (const w of this.waiters) w();
    });
  }

  /** Resolves once `pred` holds on the lines so far; rejects after the deadline. */
  async until(pred: (lines: Consumed[]) => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.lines)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${this.lines.length} lines; stderr: ${this.stderr.slice(-2000)}`);
      if (this.exited) throw new Error(`process exited while waiting for ${what}; stderr: ${this.stderr.slice(-2000)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 200);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
      this.waiters = [];
    }
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.exited) return;
    const exited = once(this.child, 'exit');
    this.child.kill(signal);
    await exited;
  }
}

export async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  await once(s, 'close');
  return port;
}

/** A broker child on a fixed port and log dir: SIGKILL it and start it again on the same ones. */
export class BrokerProcess {
  private child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly dir: string,
    readonly props: Record<string, string> = {},
  ) {}

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const props = { listeners: `PLAINTEXT://127.0.0.1:${this.port}`, 'log.dirs': this.dir, ...this.props };
    const child = spawn(process.execPath, [...brokerChildEntry(), JSON.stringify({ props, stats: false })], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`broker did not start: ${err}`)), 30_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('READY')) {
          clearTimeout(t);
          resolve();
        }
      });
      child.on('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`broker exited with ${code}: ${err}`));
      });
    });
  }

  /** Sends a signal without waiting (SIGSTOP/SIGCONT to freeze a broker past its session). */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = once(c, 'exit');
    c.kill(signal);
    await exited;
  }
}

/**
 * The crash-and-resume property: the second run starts each partition exactly at the offset
 * committed when the first run died, and together the runs saw every offset (nothing skipped).
 */
export function checkResume(first: Consumed[], second: Consumed[], committed: Map<number, number>, endOffsets: Map<number, number>): void {
  for (const [p, end] of endOffsets) {
    const c = committed.get(p) ?? 0;
    const firstSeen = first.filter((x) => x.partition === p).map((x) => x.offset);
    const secondSeen = second.filter((x) => x.partition === p).map((x) => x.offset);
    // A commit never runs ahead of what the dead consumer had printed.
    assert.ok(c <= (firstSeen.length ? Math.max(...firstSeen) + 1 : 0), `partition ${p}: committed ${c} beyond what was consumed`);
    if (c < end) assert.equal(Math.min(...secondSeen), c, `partition ${p}: resumed at ${Math.min(...secondSeen)}, committed was ${c}`);
    const all = new Set([...firstSeen, ...secondSeen]);
    for (let o = 0; o < end; o++) assert.ok(all.has(o), `partition ${p}: offset ${o} was skipped`);
    // Duplicates only after the last commit.
    for (const o of secondSeen) assert.ok(o >= c, `partition ${p}: re-read ${o} below the committed ${c}`);
  }
}
