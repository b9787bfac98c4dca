// The principal of a TLS connection a network thread accepted: the thread sends the peer's
// certificate as the handshake left it, the main thread maps it with the listener's current
// ssl.principal.mapping.rules (as tls-principal.ts does from a TLSSocket on the main thread).
import { ANONYMOUS, userPrincipal, type KafkaPrincipal } from '../../../security/principal.js';
import type { SecurityProtocol } from '../../../security/security-protocol.js';
import { subjectRfc2253, type ListenerTls } from '../../../security/tls/index.js';
import type { TlsPeer } from './protocol.js';

/** Throws (the connection is refused) for an invalid certificate or a subject no rule maps. */
export function tlsPeerPrincipal(peer: TlsPeer, settings: ListenerTls, protocol: SecurityProtocol): KafkaPrincipal {
  if (peer.certificate === undefined) return ANONYMOUS;
  if (!peer.authorized) throw new Error(`client certificate refused: ${peer.authorizationError ?? 'not trusted'}`);
  if (protocol !== 'SSL') return ANONYMOUS;
  return userPrincipal(settings.mapper.getName(subjectRfc2253(Buffer.from(peer.certificate))));
}
