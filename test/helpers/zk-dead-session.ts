/**
 * Ends the ZooKeeper session of a process that is gone (kill -9) or cut off at once, instead of when its
 * timeout runs out: the server drops the session's ephemeral nodes (a broker's registration,
 * /controller) exactly as on expiry, so the watchers (the controller, the other brokers) see what
 * they see after an expiry, without every test waiting out the session timeout after each kill.
 *
 * A second client joins the session and closes it, as expireSession (zookeeper.ts) does for a live
 * one. Joining needs the session's password, which the server does not store: ZooKeeper derives it
 * from the session id (ZooKeeperServer.generatePasswd: 16 bytes of java.util.Random seeded with the
 * id XOR 0xB3415C00), so it is computed here from the id that ZooKeeper shows as the owner of the
 * process's ephemeral node.
 */
import { once } from 'node:events';
import zookeeper from 'node-zookeeper-client';

const JAVA_RANDOM_MULTIPLIER = 0x5deece66dn;
const MASK_48 = (1n << 48n) - 1n;
const PASSWORD_SECRET = 0xb3415c00n;

/** The password ZooKeeper gives the session `sessionId` (java.util.Random(id ^ secret).nextBytes of 16). */
export function zkSessionPassword(sessionId: bigint): Buffer {
  let seed = (BigInt.asIntN(64, sessionId) ^ PASSWORD_SECRET ^ JAVA_RANDOM_MULTIPLIER) & MASK_48;
  const out = Buffer.alloc(16);
  let i = 0;
  while (i < out.length) {
    seed = (seed * JAVA_RANDOM_MULTIPLIER + 0xbn) & MASK_48;
    let rnd = Number(BigInt.asIntN(32, seed >> 16n)); // Random.nextInt(): next(32)
    for (let n = Math.min(out.length - i, 4); n-- > 0; rnd >>= 8) out[i++] = rnd & 0xff;
  }
  return out;
}

/**
 * Closes the session `sessionIdHex` (as ZooKeeper prints it: an ephemeral node's owner) on the
 * server at `connect`. Resolves once the server has closed it, or at once when it had already
 * expired. For a session whose process is dead or cut off from ZooKeeper (a ZkRelay cut): the
 * process finds its session expired when it reconnects, as after a timeout.
 */
export async function closeDeadSession(connect: string, sessionIdHex: string, timeoutMs = 30_000): Promise<void> {
  const id = BigInt(`0x${sessionIdHex}`);
  const twin = zookeeper.createClient(connect, { sessionTimeout: 30_000, retries: 0 });
  const cm = (twin as unknown as { connectionManager: { sessionId: Buffer; sessionPassword: Buffer } }).connectionManager;
  cm.sessionId.writeBigInt64BE(BigInt.asIntN(64, id));
  zkSessionPassword(id).copy(cm.sessionPassword);
  let timer: NodeJS.Timeout | undefined;
  try {
    const joining = Promise.race([
      once(twin, 'connected').then(() => true),
      once(twin, 'expired').then(() => false), // timed out by itself meanwhile: as good
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`could not join ZooKeeper session 0x${sessionIdHex} within ${timeoutMs} ms`)), timeoutMs)),
      ),
    ]);
    twin.connect();
    const joined = await joining;
    if (joined) {
      const closed = once(twin, 'disconnected');
      twin.close(); // closeSession: the server ends the session and drops its ephemeral nodes first
      await closed;
    } else twin.close();
  } catch (err) {
    twin.close();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
