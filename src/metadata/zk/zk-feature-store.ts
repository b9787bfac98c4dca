/**
 * Cluster mode's finalized features: Kafka's `/feature` znode (KIP-584), as a ZooKeeper-mode
 * broker's FinalizedFeatureCache follows it: read at start, re-read on every change (a data watch,
 * re-armed on each read and after a new session), the epoch being the znode's version. Only the
 * active controller writes it (conditionally on the version read), as Kafka's controller does.
 * A missing node (no controller has enabled feature versioning yet) reads as epoch -1.
 */
import type { Logger } from 'pino';
import type { FeatureStore, FinalizedFeatures } from '../feature-store.js';
import { FeatureEpochMovedError } from '../feature-store.js';
import { FeatureZNode } from './zk-data.js';
import { FEATURE_PATH } from './zk-paths.js';
import { isZkError, type ZkSession } from './zk-session.js';
import { messageOf } from '../../common/errors.js';

export class ZkFeatureStore implements FeatureStore {
  private state: FinalizedFeatures = { epoch: -1, levels: new Map() };
  /** The znode's own format version (1 or 2), kept when it is rewritten. */
  private nodeVersion: 1 | 2 = 2;
  private closed = false;
  private readonly onNewSession = (): void => void this.refresh();

  private constructor(
    private readonly session: ZkSession,
    private readonly logger: Logger,
  ) {}

  static async open(session: ZkSession, logger: Logger): Promise<ZkFeatureStore> {
    const store = new ZkFeatureStore(session, logger);
    session.on('newSession', store.onNewSession);
    await store.refresh();
    return store;
  }

  current(): FinalizedFeatures {
    return this.state;
  }

  private async refresh(): Promise<void> {
    if (this.closed) return;
    try {
      // exists() arms the watch whether or not the node is there yet (the controller creates it).
      const stat = await this.session.exists(FEATURE_PATH, () => void this.refresh());
      if (!stat) {
        this.state = { epoch: -1, levels: new Map() };
        return;
      }
      const node = await this.session.getIfExists(FEATURE_PATH);
      if (!node) return;
      const f = FeatureZNode.decode(node.data);
      this.nodeVersion = f.version;
      // A disabled node finalizes nothing (Kafka's FinalizedFeatureCache clears itself).
      this.state = { epoch: node.stat.version, levels: new Map(f.status === 1 ? Object.entries(f.features) : []) };
    } catch (err) {
      if (!this.closed) this.logger.warn({ err: messageOf(err) }, `cannot read ${FEATURE_PATH}`);
    }
  }

  async replace(levels: ReadonlyMap<string, number>, expectedEpoch: number): Promise<FinalizedFeatures> {
    // No node yet (the controller enables feature versioning when it starts): nothing to update,
    // and ZooKeeper's version -1 would mean "any version".
    if (expectedEpoch < 0) throw new FeatureEpochMovedError(`${FEATURE_PATH} does not exist yet`);
    const data = FeatureZNode.encode({ version: this.nodeVersion, status: 1, features: Object.fromEntries(levels) });
    try {
      const stat = await this.session.set(FEATURE_PATH, data, expectedEpoch);
      this.state = { epoch: stat.version, levels: new Map(levels) };
      return this.state;
    } catch (err) {
      if (isZkError(err, 'BAD_VERSION') || isZkError(err, 'NO_NODE')) {
        await this.refresh();
        throw new FeatureEpochMovedError(`${FEATURE_PATH} changed meanwhile`);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.session.off('newSession', this.onNewSession);
  }
}
