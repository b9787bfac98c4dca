/**
 * Just enough of the wire protocol for the fuzzer: encoding a request with the generated codec,
 * splitting a byte stream into size-prefixed frames, and a connection that sends raw bytes and
 * still recognises the answer to a request it made itself (the probe).
 */
import net from 'node:net';
import { Reader, Writer, type Input, type MessageCodec } from '../../src/protocol/primitives/index.js';
import { API_SPECS, RequestHeaderCodec, ResponseHeaderCodec } from '../../src/protocol/messages/index.js';
import { requestHeaderVersion, responseHeaderVersion } from '../../src/server/request-header.js';

export function encodeRequest<T>(
  apiKey: number,
  codec: MessageCodec<T>,
  version: number,
  body: Input<T>,
  correlationId: number,
  clientId = 'fjord-fuzz',
): Buffer {
  const w = new Writer(128);
  w.int32(0);
  RequestHeaderCodec.write(
    w,
    { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId },
    requestHeaderVersion(apiKey, version >= codec.flexibleFrom),
  );
  codec.write(w, body, version);
  const frame = Buffer.from(w.result());
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

/** Decodes a response body (after the size prefix) to a request of `apiKey`/`version`; throws when malformed. */
export function decodeResponse(apiKey: number, version: number, frame: Buffer): { correlationId: number; body: unknown } {
  const spec = API_SPECS[apiKey];
  if (!spec) throw new Error(`unknown api key ${apiKey}`);
  const r = new Reader(frame);
  const header = ResponseHeaderCodec.read(r, responseHeaderVersion(apiKey, version >= spec.response.flexibleFrom));
  const body = spec.response.read(r, version);
  if (r.remaining !== 0) throw new Error(`${r.remaining} trailing bytes in ${spec.name} v${version} response`);
  return { correlationId: header.correlationId, body };
}

/** Splits a stream of size-prefixed frames; `feed` returns the complete frames (without prefix). */
export class FrameSplitter {
  private buf: Buffer = Buffer.alloc(0);
  feed(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: Buffer[] = [];
    let pos = 0;
    while (this.buf.length - pos >= 4) {
      const size = this.buf.readInt32BE(pos);
      if (size < 0 || this.buf.length - pos - 4 < size) break;
      out.push(this.buf.subarray(pos + 4, pos + 4 + size));
      pos += 4 + size;
    }
    this.buf = pos === this.buf.length ? Buffer.alloc(0) : this.buf.subarray(pos);
    return out;
  }
}

/**
 * Walks what was sent on a connection as the broker will frame it. `inSync` is false once a frame
 * declared more bytes than were sent (the broker is still waiting for its body, so a probe sent
 * next would be read as part of it) or a size the broker must refuse.
 */
export function framingOf(sent: Buffer, maxFrameBytes: number): { frames: number; inSync: boolean } {
  let pos = 0;
  let frames = 0;
  while (pos < sent.length) {
    if (sent.length - pos < 4) return { frames, inSync: false };
    const size = sent.readInt32BE(pos);
    if (size < 0 || size > maxFrameBytes || sent.length - pos - 4 < size) return { frames, inSync: false };
    pos += 4 + size;
    frames++;
  }
  return { frames, inSync: true };
}

/**
 * The API key of every frame the broker will parse out of `sent` (framed from its start, as the
 * broker reads a connection): pipelined and spliced inputs carry several, and a frame cut short
 * still names its key once its first 6 bytes are there.
 */
export function apiKeysOf(sent: Buffer, maxFrameBytes: number): number[] {
  const keys: number[] = [];
  for (let pos = 0; sent.length - pos >= 4; ) {
    const size = sent.readInt32BE(pos);
    if (size < 0 || size > maxFrameBytes) break; // the broker closes the connection here
    if (size >= 2 && sent.length - pos >= 6) keys.push(sent.readInt16BE(pos + 4));
    pos += 4 + size;
  }
  return keys;
}

/** A raw socket to the broker: writes anything, and resolves the answers to its own requests. */
export class FuzzConnection {
  private splitter = new FrameSplitter();
  private waiters = new Map<number, { apiKey: number; version: number; lastError?: string; resolve: (body: unknown) => void; reject: (e: Error) => void }>();
  closedByPeer = false;
  closed = false;
  private ended = false;
  framesReceived = 0;
  private closeWaiters: (() => void)[] = [];
  /** Every connection not yet closed: a bomb cut short by its deadline leaves some behind. */
  static readonly open = new Set<FuzzConnection>();

  static closeAll(): void {
    for (const c of FuzzConnection.open) c.close();
  }

  private constructor(readonly socket: net.Socket) {
    FuzzConnection.open.add(this);
    socket.on('data', (chunk: Buffer) => {
      for (const frame of this.splitter.feed(chunk)) {
        this.framesReceived++;
        if (frame.length < 4) continue;
        const id = frame.readInt32BE(0);
        const w = this.waiters.get(id);
        if (!w) continue;
        let body: unknown;
        try {
          body = decodeResponse(w.apiKey, w.version, frame).body;
        } catch (e) {
          // Perhaps the answer to a fuzzed request that carried the same correlation id: the
          // probe's own answer comes later, and a probe that never gets one times out.
          w.lastError = e instanceof Error ? e.message : String(e);
          continue;
        }
        this.waiters.delete(id);
        w.resolve(body);
      }
    });
    const onClose = (): void => {
      if (this.closed) return;
      this.closed = true;
      FuzzConnection.open.delete(this);
      if (!this.ended) this.closedByPeer = true;
      for (const w of this.waiters.values()) w.reject(new Error('connection closed'));
      this.waiters.clear();
      for (const f of this.closeWaiters) f();
    };
    socket.on('close', onClose);
    socket.on('end', () => {
      // the broker half-closed: it will not answer any more
      if (!this.ended) this.closedByPeer = true;
      socket.destroy();
    });
    socket.on('error', () => undefined);
  }

  static connect(port: number, host = '127.0.0.1', timeoutMs = 10_000): Promise<FuzzConnection> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, host);
      s.setNoDelay(true);
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`connect to ${host}:${port} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        resolve(new FuzzConnection(s));
      });
      s.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  /** Writes bytes; resolves when they were handed to the kernel (or the socket died). */
  write(bytes: Buffer): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.socket.write(bytes)) resolve();
      else {
        const done = (): void => {
          this.socket.off('drain', done);
          this.socket.off('close', done);
          resolve();
        };
        this.socket.on('drain', done);
        this.socket.on('close', done);
      }
    });
  }

  /** Sends a request with the codec and waits for its answer (rejects on close or timeout). */
  request<T = never>(apiKey: number, version: number, body: Input<T>, timeoutMs: number, correlationId: number): Promise<unknown> {
    const spec = API_SPECS[apiKey]!;
    const frame = encodeRequest(apiKey, spec.request as MessageCodec<T>, version, body, correlationId);
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error('connection closed'));
        return;
      }
      const timer = setTimeout(() => {
        const w = this.waiters.get(correlationId);
        this.waiters.delete(correlationId);
        reject(new Error(`no answer to ${spec.name} v${version} in ${timeoutMs} ms${w?.lastError ? ` (undecodable answer: ${w.lastError})` : ''}`));
      }, timeoutMs);
      this.waiters.set(correlationId, {
        apiKey,
        version,
        resolve: (b) => {
          clearTimeout(timer);
          resolve(b);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.socket.write(frame);
    });
  }

  /** Resolves when the socket is closed, or after `ms` (then returns false). */
  waitClosed(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.closeWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  close(): void {
    this.ended = true;
    this.socket.destroy();
  }
}
