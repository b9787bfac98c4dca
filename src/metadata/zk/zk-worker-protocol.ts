/**
 * The messages between a ZkSession on the caller's thread (zk-worker-backend.ts) and the
 * ZooKeeper client on its worker (zk-session-worker.ts). One port carries them in order, so
 * replies, watch events and session events arrive as the worker saw them.
 *
 * Byte payloads travel as Uint8Arrays that own their whole ArrayBuffer and are transferred:
 * a structured clone of a view copies its entire backing store (for a pooled or socket-chunk
 * Buffer, many times the view).
 */
import { ZkError, type ZkCreateMode, type ZkErrorCode, type ZkSessionEvent, type ZkStat, type ZkWatchEvent } from './zk-session.js';
import { messageOf } from '../../common/errors.js';

/** What the worker is started with (its workerData). */
export interface WorkerInit {
  connect: string;
  sessionTimeoutMs: number;
  connectionTimeoutMs: number;
  /** The session of a worker that died: ended first, so its ephemeral nodes go at once. */
  endSession?: { sessionId: Uint8Array; password: Uint8Array };
}

export type WireOp =
  | { kind: 'create'; path: string; data: Uint8Array; mode: ZkCreateMode }
  | { kind: 'ensurePath'; path: string }
  | { kind: 'get'; path: string }
  | { kind: 'set'; path: string; data: Uint8Array; version: number }
  | { kind: 'delete'; path: string; version: number }
  | { kind: 'exists'; path: string }
  | { kind: 'children'; path: string }
  | { kind: 'multi'; ops: WireMultiOp[] };

export type WireMultiOp =
  | { op: 'create'; path: string; data: Uint8Array; mode: ZkCreateMode }
  | { op: 'set'; path: string; data: Uint8Array; version: number }
  | { op: 'delete'; path: string; version: number }
  | { op: 'check'; path: string; version: number };

export type ToWorker = { t: 'op'; seq: number; op: WireOp; watch?: number } | { t: 'close' };

export interface WireError {
  code: ZkErrorCode;
  message: string;
  path?: string;
}

export interface WireSessionState {
  sessionId: string;
  timeoutMs: number;
  id: Uint8Array;
  password: Uint8Array;
}

export type LogLevel = 'info' | 'warn' | 'error';

export type FromWorker =
  | { t: 'open'; ok: true; state: WireSessionState }
  | { t: 'open'; ok: false; error: WireError }
  /** `watchLive`: whether the op's watcher is still registered with the client (absent without a watch). */
  | { t: 'reply'; seq: number; ok: true; value: WireValue; watchLive?: boolean }
  | { t: 'reply'; seq: number; ok: false; error: WireError; watchLive?: boolean }
  /** `live`: whether this watcher is still registered elsewhere (another path or kind). */
  | { t: 'watch'; id: number; event: ZkWatchEvent; live: boolean }
  | { t: 'session'; event: ZkSessionEvent; state: WireSessionState }
  | { t: 'log'; level: LogLevel; obj: object; msg: string }
  | { t: 'closed' };

export type WireValue = undefined | string | string[] | ZkStat | null | { data: Uint8Array; stat: ZkStat };

/** A copy of `buf` that owns its ArrayBuffer (to transfer), and that buffer. */
export function ownCopy(buf: Uint8Array): Uint8Array {
  const copy = new Uint8Array(buf.byteLength);
  copy.set(buf);
  return copy;
}

/** A Buffer over a received Uint8Array, without copying. */
export function asBuffer(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

export function toWireError(err: unknown): WireError {
  if (err instanceof ZkError) return { code: err.code, message: err.message, ...(err.path !== undefined ? { path: err.path } : {}) };
  return { code: 'OTHER', message: messageOf(err) };
}

export function fromWireError(e: WireError): ZkError {
  return new ZkError(e.code, e.message, e.path);
}
