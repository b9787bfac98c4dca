// A ConnectionContext for tests that call handlers directly, without a socket.
import type { ConnectionContext } from '../../src/server/network/types.js';
import { ANONYMOUS } from '../../src/security/principal.js';

export function testConnection(overrides: Partial<ConnectionContext> = {}): ConnectionContext {
  return {
    connectionId: 'c',
    clientHost: '127.0.0.1',
    clientPort: 1,
    listenerName: 'PLAINTEXT',
    localPort: 2,
    securityProtocol: 'PLAINTEXT',
    principal: ANONYMOUS,
    ...overrides,
  };
}
