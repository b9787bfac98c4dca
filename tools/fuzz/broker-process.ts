/**
 * The broker under test as a child process (dist/server/main.js) on a free port with a temporary
 * log dir, so that its RSS can be read from /proc and a crash does not take the fuzzer with it.
 * It runs with the debug level so that it reports its own event-loop delay once a second.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const REPO = resolve(import.meta.dirname, '../..');
export const BROKER_MAIN = join(REPO, 'dist/server/main.js');

/** Resident set size of a process in bytes (VmRSS), or null when it is gone. */
export function rssOf(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** The broker's own process.memoryUsage(), from its once-a-second debug line. */
export interface BrokerMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** A logged error as text: pino serialises an Error as an object ({ type, message, stack }). */
export function errText(err: unknown): string {
  if (err === undefined || err === null) return '';
  if (typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
    const e = err as { type?: string; message: string; code?: string };
    return `${e.type ?? 'Error'}${e.code ? ` ${e.code}` : ''}: ${e.message}`;
  }
  return typeof err === 'object' ? JSON.stringify(err) : String(err);
}

/** The directory a broker log line takes offline (LogManager.takeOffline's line), or null. */
export function offlineDirOf(msg: string | undefined): string | null {
  const m = /^log directory (.+?) is offline: /.exec(msg ?? '');
  return m ? m[1]! : null;
}

/** Error lines kept per broker (the report shows the last ones). */
const ERRORS_KEPT = 1000;

export interface BrokerTarget {
  host: string;
  port: number;
  /** null when the broker is not ours (--bootstrap-server): no RSS, no restart. */
  process: BrokerProcess | null;
}

export class BrokerProcess {
  port = 0;
  exited = false;
  exitCode: number | null = null;
  exitSignal: string | null = null;
  /** The worst event-loop delay the broker reported, overall and since the last `takeLoopDelay`. */
  worstLoopDelayMs = 0;
  private windowLoopDelayMs = 0;
  peakRss = 0;
  private windowPeakRss = 0;
  startRss = 0;
  /** Lowest RSS sampled since start (after start-up). */
  minRss = Number.POSITIVE_INFINITY;
  /** The broker's last memory report, and the peak of each figure over its reports. */
  memory: BrokerMemory | null = null;
  readonly memoryPeak: BrokerMemory = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0 };
  /** Appends each memory report as a JSON line (t, pid, figures) when set. */
  memoryLog: string | undefined;
  readonly errors: string[] = [];
  /** Log directories the broker took offline, with its line about each. */
  readonly offlineDirs: string[] = [];
  private sampler: NodeJS.Timeout | undefined;
  private exitWaiters: (() => void)[] = [];
  private lastReportAt = 0;
  killedForRss = false;

  private constructor(
    readonly child: ChildProcess,
    readonly dir: string,
    private readonly ownsDir: boolean,
    private readonly rssKillBytes: number,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  /**
   * `onWarning` sees every line at warn level or above (its message and error, as text): the
   * cluster soak counts ZooKeeper session expiries and controller failures from them.
   */
  static async start(
    opts: {
      props?: Record<string, string>;
      rssKillBytes?: number;
      startTimeoutMs?: number;
      nodeArgs?: string[];
      memoryLog?: string;
      onWarning?: (text: string) => void;
    } = {},
  ): Promise<BrokerProcess> {
    if (!existsSync(BROKER_MAIN)) throw new Error(`${BROKER_MAIN} is missing: build first (npm run build)`);
    const dir = mkdtempSync(join(tmpdir(), 'fjord-fuzz-'));
    const props: Record<string, string> = {
      'broker.id': '0',
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'log.dirs': join(dir, 'logs'),
      'group.initial.rebalance.delay.ms': '0',
      ...opts.props,
    };
    const propsFile = join(dir, 'server.properties');
    writeFileSync(
      propsFile,
      Object.entries(props)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
    );
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), BROKER_MAIN, propsFile], {
      env: { ...process.env, FJORD_LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const b = new BrokerProcess(child, dir, true, opts.rssKillBytes ?? 1536 * 1024 * 1024);
    b.memoryLog = opts.memoryLog;
    const listening = new Promise<number>((resolvePort, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`broker did not start listening in ${opts.startTimeoutMs ?? 60_000} ms: ${b.errors.slice(-3).join(' | ')}`)),
        opts.startTimeoutMs ?? 60_000,
      );
      createInterface({ input: child.stdout! }).on('line', (line) => {
        let o: {
          msg?: string;
          port?: number;
          level?: number;
          worstEventLoopDelayMs?: number;
          eventLoopDelayMaxMs?: number;
          rssBytes?: number;
          heapUsedBytes?: number;
          heapTotalBytes?: number;
          externalBytes?: number;
          arrayBuffersBytes?: number;
          err?: unknown;
        };
        try {
          o = JSON.parse(line) as typeof o;
        } catch {
          return;
        }
        if (o.msg === 'listening' && typeof o.port === 'number') {
          clearTimeout(timer);
          resolvePort(o.port);
        } else if (o.msg === 'event loop delay' && typeof o.eventLoopDelayMaxMs === 'number') {
          b.noteLoopDelay(o.eventLoopDelayMaxMs);
          b.lastReportAt = Date.now();
          if (typeof o.heapUsedBytes === 'number') {
            b.noteMemory(
              {
                rss: o.rssBytes ?? 0,
                heapUsed: o.heapUsedBytes,
                heapTotal: o.heapTotalBytes ?? 0,
                external: o.externalBytes ?? 0,
                arrayBuffers: o.arrayBuffersBytes ?? 0,
              },
              o.eventLoopDelayMaxMs,
            );
          }
        } else if ((o.level ?? 0) >= 40) {
          const text = `${o.msg ?? ''} ${errText(o.err)}`.trim();
          opts.onWarning?.(text);
          if ((o.level ?? 0) < 50) return;
          if (offlineDirOf(o.msg) !== null) b.offlineDirs.push(text.slice(0, 500));
          b.errors.push(text.slice(0, 300));
          if (b.errors.length > ERRORS_KEPT) b.errors.splice(0, b.errors.length - ERRORS_KEPT);
        }
      });
      createInterface({ input: child.stderr! }).on('line', (line) => {
        if (b.errors.length < 1000) b.errors.push(line.slice(0, 300));
      });
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`broker exited during start-up: ${b.errors.slice(-3).join(' | ')}`));
      });
    });
    child.on('exit', (code, signal) => {
      // A loop blocked until the process died never reported it: the silence is the evidence.
      if (b.lastReportAt > 0 && Date.now() - b.lastReportAt > 2000) b.noteLoopDelay(Date.now() - b.lastReportAt - 1000);
      b.exited = true;
      b.exitCode = code;
      b.exitSignal = signal;
      clearInterval(b.sampler);
      for (const f of b.exitWaiters) f();
    });
    try {
      b.port = await listening;
    } catch (e) {
      await b.stop();
      throw e;
    }
    b.startRss = rssOf(b.pid) ?? 0;
    b.peakRss = b.startRss;
    b.minRss = b.startRss;
    b.sampler = setInterval(() => b.sample(), 50);
    b.sampler.unref();
    return b;
  }

  private noteMemory(m: BrokerMemory, loopDelayMs: number): void {
    this.memory = m;
    for (const k of Object.keys(m) as (keyof BrokerMemory)[]) this.memoryPeak[k] = Math.max(this.memoryPeak[k], m[k]);
    if (this.memoryLog) {
      try {
        appendFileSync(this.memoryLog, JSON.stringify({ t: Date.now(), pid: this.pid, loopDelayMs, ...m }) + '\n');
      } catch {
        /* a log we cannot write is not the broker's problem */
      }
    }
  }

  private noteLoopDelay(ms: number): void {
    this.worstLoopDelayMs = Math.max(this.worstLoopDelayMs, ms);
    this.windowLoopDelayMs = Math.max(this.windowLoopDelayMs, ms);
  }

  /** Samples RSS now; kills the broker when it passes the kill limit (protects the machine). */
  sample(): number | null {
    if (this.exited) return null;
    const rss = rssOf(this.pid);
    if (rss === null) return null;
    this.peakRss = Math.max(this.peakRss, rss);
    this.minRss = Math.min(this.minRss, rss);
    this.windowPeakRss = Math.max(this.windowPeakRss, rss);
    if (rss > this.rssKillBytes && !this.killedForRss) {
      this.killedForRss = true;
      this.child.kill('SIGKILL');
    }
    return rss;
  }

  /** Peak RSS and worst reported loop delay since the previous call. */
  takeWindow(): { peakRss: number; loopDelayMs: number } {
    // still blocked: the report that would say so has not come yet
    if (!this.exited && this.lastReportAt > 0 && Date.now() - this.lastReportAt > 2000) this.noteLoopDelay(Date.now() - this.lastReportAt - 1000);
    const w = { peakRss: Math.max(this.windowPeakRss, this.sample() ?? 0), loopDelayMs: this.windowLoopDelayMs };
    this.windowPeakRss = 0;
    this.windowLoopDelayMs = 0;
    return w;
  }

  describeExit(): string {
    if (!this.exited) return 'running';
    if (this.killedForRss) return `killed by the fuzzer at RSS over ${Math.round(this.rssKillBytes / 2 ** 20)} MB`;
    const last = this.errors
      .filter((e) => e.trim() !== '')
      .slice(-2)
      .join(' | ');
    return `exited (code ${this.exitCode}, signal ${this.exitSignal})${last ? `: ${last}` : ''}`;
  }

  waitExit(ms: number): Promise<boolean> {
    if (this.exited) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.exitWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; removes the log dir. Returns whether SIGTERM sufficed. */
  async stop(graceMs = 15_000): Promise<boolean> {
    let clean = true;
    if (!this.exited) {
      this.child.kill('SIGTERM');
      if (!(await this.waitExit(graceMs))) {
        clean = false;
        this.child.kill('SIGKILL');
        await this.waitExit(10_000);
      }
    }
    clearInterval(this.sampler);
    if (this.ownsDir) rmSync(this.dir, { recursive: true, force: true });
    return clean;
  }
}
