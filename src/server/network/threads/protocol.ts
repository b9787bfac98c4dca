// The messages between the main thread and a network thread (network-thread.ts). A connection is
// named by the number its thread gave it; frames travel in shared memory, answers as transferred
// bytes, so neither side copies what the other sent.
import type { SecurityProtocol } from '../../../security/security-protocol.js';
import type { CloseReason } from '../close-log.js';
import type { FrameLimits } from '../types.js';

/** What a network thread needs to build a listener's TLS context itself (a SecureContext cannot be posted). */
export interface ThreadListenerTls {
  material: { cert?: string; key?: string; pfx?: Buffer; passphrase?: string; ca?: string };
  minVersion: string;
  maxVersion: string;
  ciphers?: string;
  clientAuth: 'none' | 'requested' | 'required';
}

export interface ThreadListener {
  name: string;
  host: string;
  port: number;
  securityProtocol: SecurityProtocol;
  /** The main thread's socket for this listener: the thread listens on a copy of it. */
  fd: number;
  tls?: ThreadListenerTls;
  /** The limits a new connection's frames start with (SASL: sasl.server.max.receive.size until authenticated). */
  initialFrameLimits?: FrameLimits;
}

/** workerData of a network thread. */
export interface NetworkThreadInit {
  index: number;
  listeners: ThreadListener[];
  backlog: number;
  socketRequestMaxBytes: number;
  /** This thread's share of queued.max.request.bytes for frames being read (<= 0: unbounded). */
  readingMemoryBytes: number;
  tlsHandshakeTimeoutMs: number;
  /** socket.request.receive.timeout.ms: the thread runs the clock, it alone sees partial frames (<= 0: none). */
  requestReceiveTimeoutMs: number;
}

/** The TLS peer as the handshake left it: the main thread maps it to a principal. */
export interface TlsPeer {
  /** The client certificate's DER bytes; absent: none given. */
  certificate?: Uint8Array;
  authorized: boolean;
  authorizationError?: string;
}

export type ToMain =
  | { t: 'ready' }
  | { t: 'listen-failed'; listener: string; message: string }
  | { t: 'open'; id: number; listener: string; clientHost: string; clientPort: number; localHost: string; localPort: number; tlsPeer?: TlsPeer }
  /** Whole request frames, each behind its 4-byte size prefix, back to back in shared memory. */
  | { t: 'frames'; id: number; bytes: Uint8Array }
  | { t: 'end'; id: number }
  /** Written up to this many bytes of the connection's answers (asked for by a write with `ack`). */
  | { t: 'written'; id: number; upTo: number }
  /** The socket is gone; `reason` when the thread closed it for something the peer did. */
  | { t: 'closed'; id: number; reason?: CloseReason; message?: string; fields?: Record<string, unknown> }
  /** A closed TLS handshake or a refused TLS peer, for the close log (no connection was opened). */
  | { t: 'refused'; reason: CloseReason; message: string; clientHost: string; clientPort: number; listener: string }
  | { t: 'stopped-accepting' };

export type ToThread =
  /** Start reading (admitted by the connection limits and served). */
  | { t: 'serve'; id: number }
  | { t: 'pause'; id: number }
  | { t: 'resume'; id: number }
  /** Answer bytes (prefixes included); `ack`: say 'written' once the socket took them. */
  | { t: 'write'; id: number; bytes: Uint8Array; upTo: number; ack: boolean }
  | { t: 'ack'; id: number; upTo: number }
  /** The connection's frame limits changed (authenticated: absent, socket.request.max.bytes alone). */
  | { t: 'limits'; id: number; limits?: FrameLimits }
  | { t: 'end'; id: number }
  | { t: 'destroy'; id: number }
  | { t: 'tls'; listener: string; tls: ThreadListenerTls }
  | { t: 'stop-accepting' };
