// Why a frame the reader refused (a size over the limits) closes its connection, in words for the
// operator: most often a TLS client on a plaintext listener, whose handshake reads as a huge size
// prefix. Separate from connection.ts so that the connection's pump reads without the diagnosis.
import { usesTls } from '../../security/security-protocol.js';
import type { CloseReason } from './close-log.js';
import type { FrameSizeError } from './frame-reader.js';
import type { ConnectionContext } from './types.js';

export interface FrameRefusal {
  reason: CloseReason;
  message: string;
  fields: Record<string, unknown>;
}

/** The close reason for a refused frame; `firstFrame`: nothing was dispatched on the connection yet. */
export function frameRefusal(err: FrameSizeError, ctx: ConnectionContext, firstFrame: boolean): FrameRefusal {
  if (firstFrame && looksLikeTlsHello(err.size) && !usesTls(ctx.securityProtocol)) {
    return {
      reason: 'tls-on-plaintext',
      message: `a TLS handshake from ${ctx.clientHost}:${ctx.clientPort} on ${ctx.securityProtocol} listener ${ctx.listenerName} (is the client set to security.protocol=SSL?)`,
      fields: {},
    };
  }
  return { reason: 'bad-frame', message: err.message, fields: { size: err.size } };
}

/** A size prefix that is really a TLS record header: handshake (0x16), version 3.x. */
function looksLikeTlsHello(size: number): boolean {
  return size >>> 24 === 0x16 && ((size >>> 16) & 0xff) === 0x03;
}
