/**
 * A minimal Kafka client over a raw socket, built on the project's own codec: sends requests
 * and reads responses by correlation id. For tests of the broker's wire behaviour.
 */
import net from 'node:net';
import tls from 'node:tls';
import { once } from 'node:events';
import { Reader, Writer, type Input, type MessageCodec } from '../../src/protocol/primitives/index.js';
import { RequestHeaderCodec, ResponseHeaderCodec } from '../../src/protocol/messages/index.js';
import { requestHeaderVersion, responseHeaderVersion } from '../../src/server/request-header.js';

export function encodeRequest<T>(
  apiKey: number,
  codec: MessageCodec<T>,
  version: number,
  body: Input<T>,
  correlationId: number,
  clientId = 'raw-client',
): Buffer {
  const flexible = version >= codec.flexibleFrom;
  const w = new Writer(128);
  w.int32(0); // size, patched below
  RequestHeaderCodec.write(w, { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId }, requestHeaderVersion(apiKey, flexible));
  codec.write(w, body, version);
  const frame = w.result();
  frame.writeInt32BE(frame.length - 4, 0);
  return Buffer.from(frame);
}

export class RawClient {
  private buf = Buffer.alloc(0);
  private waiters = new Map<number, (frame: Buffer) => void>();
  private nextId = 1;
  closed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readInt32BE(0)) {
        const size = this.buf.readInt32BE(0);
        const frame = this.buf.subarray(4, 4 + size);
        this.buf = this.buf.subarray(4 + size);
        const id = frame.readInt32BE(0);
        this.waiters.get(id)?.(frame);
        this.waiters.delete(id);
      }
    });
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {});
  }

  static async connect(port: number): Promise<RawClient> {
    const s = net.connect(port, '127.0.0.1');
    await once(s, 'connect');
    return new RawClient(s);
  }

  /** Over TLS (SSL listeners): resolves once the handshake is done; rejects when it fails. */
  static async connectTls(port: number, options: tls.ConnectionOptions = {}): Promise<RawClient> {
    const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ...options });
    await once(s, 'secureConnect');
    return new RawClient(s);
  }

  async request<Req, Res>(apiKey: number, req: MessageCodec<Req>, res: MessageCodec<Res>, version: number, body: Input<Req>): Promise<Res> {
    const id = this.nextId++;
    const frame = encodeRequest(apiKey, req, version, body, id);
    const answer = new Promise<Buffer>((resolve, reject) => {
      // One 'close' listener per request in flight, removed once answered (no listener pile-up).
      const onClose = (): void => reject(new Error('connection closed'));
      this.socket.once('close', onClose);
      this.waiters.set(id, (frame) => {
        this.socket.off('close', onClose);
        resolve(frame);
      });
    });
    this.socket.write(frame);
    const bytes = await answer;
    const r = new Reader(bytes);
    const flexible = version >= res.flexibleFrom;
    const header = ResponseHeaderCodec.read(r, responseHeaderVersion(apiKey, flexible));
    if (header.correlationId !== id) throw new Error(`correlation id ${header.correlationId} != ${id}`);
    const out = res.read(r, version);
    if (r.remaining !== 0) throw new Error(`${r.remaining} trailing bytes in response`);
    return out;
  }

  close(): void {
    this.socket.destroy();
  }
}
