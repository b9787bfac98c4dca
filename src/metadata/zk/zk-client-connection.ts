/**
 * Opening and closing one raw node-zookeeper-client client, bounding its session handshake, and
 * ending a session another client held. Kept apart from ClientBackend (which maps ZkSession's
 * primitives onto a connected client) because this is the part that reads the library's private
 * ConnectionManager: its internals are depended on here and nowhere else.
 *
 * Trap in node-zookeeper-client 1.1.3: its connect timeout covers only the TCP connect, so a
 * server that accepts a connection but never answers the session handshake leaves the client
 * waiting forever (ZooKeeper 3.8's server does that to a client that connects while it starts:
 * the close after "ZooKeeperServer not running" fails on an NPE and the connection is leaked).
 * Meanwhile the session expires on the server and the broker's registration vanishes. ZooKeeper's
 * own client gives each attempt, handshake included, the connect timeout (session timeout /
 * number of hosts) and then tries again; `guardHandshakes` does the same here.
 */
import type { Socket } from 'node:net';
import zookeeper from 'node-zookeeper-client';
import type { Client } from 'node-zookeeper-client';
import { ZkError, type ZkLog, type ZkSessionCredentials } from './zk-session.js';

/** What the client backend needs of ZkSessionOptions (the worker gets these as plain data). */
export interface ClientBackendOptions {
  connect: string;
  sessionTimeoutMs: number;
  connectionTimeoutMs: number;
}

/** What `guardHandshakes` reads of node-zookeeper-client's (private) ConnectionManager. */
interface ConnectionInternals {
  /** 1 while connecting (handshake included); negative once closing, closed or expired (final). */
  state: number;
  /** The socket of the current attempt. */
  socket: Socket | undefined;
  /** Session timeout / number of hosts, as ZooKeeper's client computes it. */
  connectTimeout: number;
  /** The session a connect asks to resume (zeros for a new one), and its password. */
  sessionId: Buffer;
  sessionPassword: Buffer;
}
const CONNECTING = 1;

function internalsOf(client: Client): Partial<ConnectionInternals> | undefined {
  return (client as unknown as { connectionManager?: Partial<ConnectionInternals> }).connectionManager;
}

/**
 * Abandons a connection attempt that has not completed its handshake within the client's
 * connect timeout, so the client tries again (see the trap above). Stops once the client is
 * closed or its session expired.
 */
function guardHandshakes(client: Client, logger?: ZkLog): void {
  const cm = internalsOf(client);
  if (!cm || typeof cm.state !== 'number' || typeof cm.connectTimeout !== 'number') {
    logger?.warn({}, 'unexpected node-zookeeper-client internals: connection attempts are not bounded');
    return;
  }
  const internals = cm as ConnectionInternals;
  let attempt: Socket | undefined;
  let since = 0;
  const timer = setInterval(
    () => {
      if (internals.state < 0) return clearInterval(timer);
      const sock = internals.socket;
      if (internals.state !== CONNECTING || !sock) {
        attempt = undefined;
        return;
      }
      if (sock !== attempt) {
        attempt = sock;
        since = Date.now();
        return;
      }
      if (Date.now() - since <= internals.connectTimeout) return;
      logger?.warn({ waitedMs: Date.now() - since }, 'ZooKeeper did not answer the session handshake within the connect timeout; trying again');
      attempt = undefined;
      sock.destroy(); // the client sees the connection close and reconnects (same session)
    },
    Math.min(1000, Math.max(50, Math.floor(internals.connectTimeout / 4))),
  );
  timer.unref();
}

/** Connects one raw client, or fails after `timeoutMs` (the client keeps retrying otherwise). */
export function connectClient(connect: string, sessionTimeoutMs: number, timeoutMs: number, logger?: ZkLog): Promise<Client> {
  const client = zookeeper.createClient(connect, { sessionTimeout: sessionTimeoutMs, spinDelay: 250, retries: 0 });
  guardHandshakes(client, logger);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.removeListener('connected', onConnected);
      client.close();
      reject(
        new ZkError(
          'CONNECTION_TIMEOUT',
          `Timed out waiting for a connection to ZooKeeper at ${connect} within ${timeoutMs} ms (zookeeper.connection.timeout.ms)`,
        ),
      );
    }, timeoutMs);
    const onConnected = (): void => {
      clearTimeout(timer);
      resolve(client);
    };
    client.once('connected', onConnected);
    client.connect();
  });
}

/** Closes a client, waiting (at most `waitMs`) until the server has dropped its connection. */
export function closeClient(c: Client, waitMs = 2000): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, waitMs);
    c.once('disconnected', () => {
      clearTimeout(timer);
      resolve();
    });
    c.close();
  });
}

/**
 * Ends a session another client held (one whose thread died): joins it as ZooKeeper's own
 * client can (its id and password) and closes it, so the server drops its ephemeral nodes now
 * rather than at its timeout. A session that expired meanwhile is as good.
 */
export async function endSession(opts: ClientBackendOptions, session: ZkSessionCredentials): Promise<void> {
  const client = zookeeper.createClient(opts.connect, { sessionTimeout: opts.sessionTimeoutMs, spinDelay: 250, retries: 0 });
  const cm = internalsOf(client);
  if (!Buffer.isBuffer(cm?.sessionId) || !Buffer.isBuffer(cm.sessionPassword))
    throw new ZkError('OTHER', 'unexpected node-zookeeper-client internals: cannot join a session');
  session.sessionId.copy(cm.sessionId);
  session.password.copy(cm.sessionPassword);
  guardHandshakes(client);
  let timer: NodeJS.Timeout | undefined;
  let joined = false;
  try {
    joined = await new Promise<boolean>((resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ZkError('CONNECTION_TIMEOUT', `could not reach ZooKeeper at ${opts.connect} within ${opts.connectionTimeoutMs} ms to end the old session`),
          ),
        opts.connectionTimeoutMs,
      );
      client.once('connected', () => resolve(true));
      client.once('expired', () => resolve(false));
      client.connect();
    });
    // closeSession: the server ends the session (and its ephemeral nodes), then drops the connection.
    if (joined) await closeClient(client);
  } finally {
    clearTimeout(timer);
    if (!joined) client.close(); // stops the attempt (or the expired client)
  }
}
