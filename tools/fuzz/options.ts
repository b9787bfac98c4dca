/** The fuzzer's options, their defaults, and the constants its phases share. */
import type { BombScale } from './bombs.js';

export const MB = 1024 * 1024;
/** The topic every probe asks about and the side clients write and read. */
export const STEADY_TOPIC = 'fuzz-steady';
export const STEADY_PARTITIONS = 3;
/** Frames larger than this are ones the broker refuses (its socket.request.max.bytes and more). */
export const MAX_FRAME = 100 * MB;

export interface FuzzOptions {
  inputs: number;
  seed: number;
  concurrency: number;
  /** Bomb names to run, or ['all'] / [] (none); the trickle is one of them. */
  bombs: readonly string[];
  bombScale: BombScale;
  /** host:port of a broker already running (no RSS, no restarts); default: start one. */
  bootstrapServer?: string;
  rssBoundBytes: number;
  /** The fuzzer kills its broker past this RSS (protects the machine from an unfixed bomb). */
  rssKillBytes: number;
  loopDelayBoundMs: number;
  probeTimeoutMs: number;
  /** A probe on a fresh connection after every Nth fuzzed connection (1: after each). */
  freshProbeEvery: number;
  bombDeadlineMs: number;
  trickleMs: number;
  sideRate: number;
  /** Extra broker properties. */
  brokerProps?: Record<string, string>;
  /** Appends the broker's once-a-second memory report (process.memoryUsage()) here as JSON lines. */
  memoryLog?: string;
  log: (line: string) => void;
}

export const DEFAULTS: Omit<FuzzOptions, 'log'> = {
  inputs: 20_000,
  seed: 1,
  concurrency: 8,
  bombs: ['all'],
  bombScale: 'short',
  rssBoundBytes: 512 * MB,
  rssKillBytes: 1024 * MB,
  loopDelayBoundMs: 1000,
  probeTimeoutMs: 10_000,
  freshProbeEvery: 1,
  bombDeadlineMs: 30_000,
  trickleMs: 15_000,
  sideRate: 1000,
};

/** Whether a bomb (or the trickle) is among those the options ask for. */
export function wantsBomb(opts: Pick<FuzzOptions, 'bombs'>, name: string): boolean {
  return opts.bombs.includes('all') || opts.bombs.includes(name);
}
