/**
 * Who a telemetry request comes from, as KIP-714's `match` selectors see it: the request's client
 * id, the software name and version the connection's ApiVersions request gave, and its address.
 */
import type { RequestContext } from '../handlers/types.js';
import type { ClientIdentity } from './client-instances.js';

export function clientIdentity(ctx: RequestContext): ClientIdentity {
  const c = ctx.connection;
  return {
    clientId: ctx.header.clientId ?? '',
    softwareName: c.clientSoftwareName,
    softwareVersion: c.clientSoftwareVersion,
    sourceAddress: c.clientHost,
    sourcePort: c.clientPort,
  };
}
