// How many client connections the process's open-file limit leaves room for.
//
// When accept() fails with EMFILE, Node's libuv accepts the pending connections on a descriptor it
// keeps in reserve and closes them at once, without telling the application (checked on Node 20:
// no 'error', no event): clients see a reset and the broker logs nothing. So the broker refuses
// client connections itself, before descriptors run out, and says so: it keeps the share that
// segment files may use (log.segment.max.open.files, by default half of ulimit -n) and a headroom
// for everything else (the inter-broker listener's and the broker's own connections, ZooKeeper,
// checkpoints and other short-lived files), and lets client connections have the rest.
import { readFileSync } from 'node:fs';
import type { NetworkLogger } from './types.js';

/** The soft RLIMIT_NOFILE (ulimit -n) from Linux's /proc; Infinity when unlimited or unknown. */
export function readOpenFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m === null || m[1] === 'unlimited') return Infinity;
    return Number(m[1]);
  } catch {
    return Infinity; // not Linux: no ceiling
  }
}

/** Descriptors kept for what is not a client connection nor a segment file: 1/16 of the limit, 16 to 1024. */
export function fileHeadroom(openFileLimit: number): number {
  if (!Number.isFinite(openFileLimit)) return 0;
  return Math.min(1024, Math.max(16, Math.floor(openFileLimit / 16)));
}

export const MIN_CLIENT_CEILING = 16;

export interface FdBudget {
  /** ulimit -n (Infinity: none). */
  openFileLimit: number;
  /** Descriptors segment files may hold (log.segment.max.open.files or its derived value). */
  segmentFiles: number;
  headroom: number;
  /** Sockets client listeners may hold (served, waiting or in their TLS handshake); Infinity: no ceiling. */
  clientCeiling: number;
}

export function fdBudget(openFileLimit: number, segmentFiles: number): FdBudget {
  const headroom = fileHeadroom(openFileLimit);
  // Never none at all: a broker that takes no client is no use (start-up warns when this floor is hit).
  const clientCeiling = Number.isFinite(openFileLimit) ? Math.max(MIN_CLIENT_CEILING, openFileLimit - segmentFiles - headroom) : Infinity;
  return { openFileLimit, segmentFiles, headroom, clientCeiling };
}

/** Says at start-up how many client connections the open-file limit leaves (nothing when it has none). */
export function logFdBudget(logger: NetworkLogger, b: FdBudget, protectedListener: string | undefined): void {
  if (!Number.isFinite(b.clientCeiling)) return;
  const exempt = protectedListener === undefined ? '' : ` (the inter-broker listener ${protectedListener} is not counted)`;
  const fields = { openFileLimit: b.openFileLimit, segmentFiles: b.segmentFiles, headroom: b.headroom, clientCeiling: b.clientCeiling };
  const line = `open-file limit ${b.openFileLimit} (ulimit -n): up to ${b.clientCeiling} client connections${exempt}, ${b.segmentFiles} files kept for segments (log.segment.max.open.files) and ${b.headroom} for inter-broker connections and other files`;
  if (b.clientCeiling <= MIN_CLIENT_CEILING) logger.warn(fields, `${line}; raise ulimit -n or lower log.segment.max.open.files`);
  else logger.info(fields, line);
}
