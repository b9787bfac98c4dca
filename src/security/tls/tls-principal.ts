/**
 * The principal of a connection on a TLS listener, as Kafka's DefaultKafkaPrincipalBuilder gives
 * it: User:<mapped subject> when the client presented a certificate, User:ANONYMOUS when it did
 * not. On SASL_SSL the SASL exchange decides the principal, so it starts as ANONYMOUS there.
 */
import type { TLSSocket } from 'node:tls';
import { ANONYMOUS, userPrincipal, type KafkaPrincipal } from '../principal.js';
import type { SecurityProtocol } from '../security-protocol.js';
import type { ListenerTls } from './server-tls.js';
import { subjectRfc2253 } from './x500.js';

/** Throws (the connection is refused) for an invalid certificate or a subject no rule maps. */
export function tlsPrincipal(socket: TLSSocket, settings: ListenerTls, protocol: SecurityProtocol): KafkaPrincipal {
  const cert = socket.getPeerX509Certificate();
  if (cert === undefined) return ANONYMOUS;
  // ssl.client.auth=requested: a certificate that was given must be one the trust store vouches for.
  if (!socket.authorized) throw new Error(`client certificate refused: ${String(socket.authorizationError ?? 'not trusted')}`);
  if (protocol !== 'SSL') return ANONYMOUS;
  return userPrincipal(settings.mapper.getName(subjectRfc2253(cert.raw)));
}
