/**
 * The ZooKeeper operations both halves of KafkaZkClient (kafka-zk-topics.ts, kafka-zk-client.ts)
 * build on: sequential children in order, and the controller fence (a multi whose first op checks
 * `/controller_epoch`'s znode version, so a deposed controller's write fails as a whole and
 * surfaces as ControllerMovedError).
 */
import { isZkError, ZkError, type ZkOp, type ZkSession, type ZkWatcher } from './zk-session.js';
import { CONTROLLER_EPOCH_PATH, sequenceNumber } from './zk-paths.js';
import { ControllerMovedError, type ControllerFence } from './zk-client-types.js';

/** Names of sequential children with `prefix`, in sequence order. */
export async function sequentialChildren(session: ZkSession, path: string, prefix: string, watch?: ZkWatcher): Promise<string[]> {
  const names = await session.childrenIfExists(path, watch);
  return names.filter((n) => n.startsWith(prefix)).sort((a, b) => sequenceNumber(a) - sequenceNumber(b));
}

/**
 * Runs `ops` atomically behind the controller fence. A failed check on `/controller_epoch`
 * (another controller bumped it, or it is gone) is ControllerMovedError; any other failure is
 * the failing op's ZkError.
 */
export async function fenced(session: ZkSession, ops: ZkOp[], fence: ControllerFence): Promise<void> {
  try {
    await session.multi([{ op: 'check', path: CONTROLLER_EPOCH_PATH, version: fence.epochZkVersion }, ...ops]);
  } catch (err) {
    if (err instanceof ZkError && err.path === CONTROLLER_EPOCH_PATH && (err.code === 'BAD_VERSION' || err.code === 'NO_NODE')) {
      throw new ControllerMovedError(
        `controller epoch ${fence.controllerEpoch} is no longer current (${CONTROLLER_EPOCH_PATH} znode version is not ${fence.epochZkVersion})`,
      );
    }
    throw err;
  }
}

/** A fenced delete that is fine with the node being gone already. */
export async function fencedDeleteIfExists(session: ZkSession, path: string, fence: ControllerFence): Promise<void> {
  try {
    await fenced(session, [{ op: 'delete', path }], fence);
  } catch (err) {
    if (!isZkError(err, 'NO_NODE')) throw err;
  }
}
