// Writes a connection's responses to its socket, each behind its 4-byte size prefix, in as few
// socket writes as possible and without copying big response bodies.
import type { ConnectionSocket, PartsWrittenHook, ResponseFrame } from './types.js';

/** Batches up to this size are copied into a single write. */
const COALESCE_MAX_BYTES = 64 * 1024;

/** A response's size without its prefix (the sum of its parts for a multi-part response). */
export function frameLength(r: ResponseFrame): number {
  if (Buffer.isBuffer(r)) return r.length;
  let n = 0;
  for (const part of r) n += part.length;
  return n;
}

/**
 * Writes size-prefixed responses; `bytes` is their total size, prefixes included. Small batches are
 * copied into one buffer (one write call); big responses (and the parts of multi-part ones) are
 * written as they are, behind a 4-byte prefix, corked so the kernel gets one vectored write without
 * copying them. `onPartsWritten` gets each multi-part response once the socket is done with it.
 * Returns false when the socket's buffer is over its high-water mark.
 */
export function writeResponseFrames(
  socket: Pick<ConnectionSocket, 'write' | 'cork' | 'uncork'>,
  responses: ResponseFrame[],
  bytes: number,
  onPartsWritten?: PartsWrittenHook,
): boolean {
  if (bytes <= COALESCE_MAX_BYTES) {
    const out = Buffer.allocUnsafe(bytes);
    let offset = 0;
    for (const r of responses) {
      offset = out.writeInt32BE(frameLength(r), offset);
      if (Buffer.isBuffer(r)) offset += r.copy(out, offset);
      else {
        for (const part of r) offset += part.copy(out, offset);
        onPartsWritten?.(r);
      }
    }
    return socket.write(out);
  }
  let ok = true;
  socket.cork();
  for (const r of responses) {
    const prefix = Buffer.allocUnsafe(4);
    prefix.writeInt32BE(frameLength(r), 0);
    ok = socket.write(prefix) && ok;
    if (Buffer.isBuffer(r)) ok = socket.write(r) && ok;
    else {
      const hook = onPartsWritten;
      // The last part's callback runs once libuv is done with all of them (or they were dropped).
      r.forEach((part, i) => {
        ok = socket.write(part, hook && i === r.length - 1 ? () => hook(r) : undefined) && ok;
      });
    }
  }
  socket.uncork();
  return ok;
}
