// Shared helpers for the socket server tests: a raw TCP client speaking size-prefixed frames.
import net from 'node:net';
import { once } from 'node:events';
import { SocketServer, type RequestDispatcher, type SocketServerOptions } from '../../../src/server/network/index.js';
import { silentLogger } from '../../../src/server/logger.js';

export function requestFrame(correlationId: number, payloadBytes = 0): Buffer {
  const frame = Buffer.alloc(4 + 8 + payloadBytes);
  frame.writeInt32BE(8 + payloadBytes, 0);
  frame.writeInt16BE(3, 4); // apiKey
  frame.writeInt16BE(0, 6); // apiVersion
  frame.writeInt32BE(correlationId, 8);
  return frame;
}

export function correlationIdOf(frame: Buffer): number {
  return frame.readInt32BE(4);
}

export async function startServer(
  dispatcher: RequestDispatcher,
  overrides: Partial<SocketServerOptions> = {},
): Promise<{ server: SocketServer; port: number }> {
  const server = new SocketServer({
    listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' }],
    dispatcher,
    logger: silentLogger(),
    socketRequestMaxBytes: 104857600,
    connectionsMaxIdleMs: 600000,
    maxConnections: 2147483647,
    maxConnectionsPerIp: 2147483647,
    ...overrides,
  });
  await server.start();
  return { server, port: server.boundPorts().get('PLAINTEXT')! };
}

/** A client that collects response frames (without size prefix) in arrival order. */
export class FrameClient {
  readonly responses: Buffer[] = [];
  private pending = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 4) {
        const size = this.pending.readInt32BE(0);
        if (this.pending.length < 4 + size) break;
        this.responses.push(this.pending.subarray(4, 4 + size));
        this.pending = this.pending.subarray(4 + size);
      }
      this.wake();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  static async connect(port: number): Promise<FrameClient> {
    const socket = net.connect({ host: '127.0.0.1', port });
    await once(socket, 'connect');
    return new FrameClient(socket);
  }

  write(data: Buffer): boolean {
    return this.socket.write(data);
  }

  /** Resolves when `predicate` holds, re-checked on every response or close; rejects at the deadline. */
  async until(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(remaining, 50));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

/** Polls `predicate` until it holds or the deadline passes. */
export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
