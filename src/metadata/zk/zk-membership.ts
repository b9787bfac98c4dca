/**
 * A broker's place in a ZooKeeper cluster, the first step of cluster mode: it makes sure Kafka's
 * persistent paths exist, agrees on the cluster id (`/cluster/id`), registers the broker at the
 * ephemeral `/brokers/ids/<id>`, and takes part in the controller election through the ephemeral
 * `/controller`, fencing each new controller with a conditional increment of `/controller_epoch`.
 * After a session expiry (which removes ephemeral nodes and watches) it registers again and
 * re-runs the election. Topics still live in the embedded store; this layer does not touch them.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { isZkError, ZkError, type ZkSession, type ZkWatchEvent } from './zk-session.js';
import type { ControllerFence } from './zk-client-types.js';
import { BrokerIdZNode, ClusterIdZNode, ControllerEpochZNode, ControllerZNode, type BrokerEndpoint } from './zk-data.js';
import { BROKER_IDS_PATH, CLUSTER_ID_PATH, CONTROLLER_EPOCH_PATH, CONTROLLER_PATH, PERSISTENT_PATHS, brokerIdPath } from './zk-paths.js';
import { messageOf } from '../../common/errors.js';

export interface ZkMembershipOptions {
  session: ZkSession;
  brokerId: number;
  rack: string | null;
  /** The id to write to `/cluster/id` when ZooKeeper has none yet. */
  proposedClusterId: () => string;
  logger: Logger;
}

export interface ZkMembershipEvents {
  /** The elected controller changed (-1 while none is known). */
  controllerChange: [controllerId: number];
  /** The set of registered broker ids changed. */
  brokersChange: [ids: number[]];
}

export class BrokerIdInUseError extends Error {
  override readonly name = 'BrokerIdInUseError';
}

export class ZkMembership extends EventEmitter<ZkMembershipEvents> {
  private controllerIdValue = -1;
  private controllerEpochValue = 0;
  /** Version of `/controller_epoch` after this broker's increment: the controller's fence. */
  private epochZkVersionValue = -1;
  private liveBrokerIds: number[] = [];
  private clusterIdValue = '';
  private stopped = false;
  private electing: Promise<void> = Promise.resolve();
  private endpoints: BrokerEndpoint[] = [];

  private constructor(private readonly opts: ZkMembershipOptions) {
    super();
  }

  /** Ensures paths, reads or creates the cluster id; does not register yet (see `register`). */
  static async prepare(opts: ZkMembershipOptions): Promise<ZkMembership> {
    const m = new ZkMembership(opts);
    for (const p of PERSISTENT_PATHS) await opts.session.ensurePath(p);
    m.clusterIdValue = await m.getOrCreateClusterId();
    return m;
  }

  get clusterId(): string {
    return this.clusterIdValue;
  }
  get controllerId(): number {
    return this.controllerIdValue;
  }
  get isController(): boolean {
    return this.controllerIdValue === this.opts.brokerId && this.controllerEpochValue > 0;
  }
  /** The epoch this broker was elected with, when it is the controller; else the last one seen. */
  get controllerEpoch(): number {
    return this.controllerEpochValue;
  }
  /**
   * What the controller's ZooKeeper writes check (Kafka's controller epoch + epoch zkVersion):
   * undefined unless this broker is the controller.
   */
  controllerFence(): ControllerFence | undefined {
    return this.isController ? { controllerEpoch: this.controllerEpochValue, epochZkVersion: this.epochZkVersionValue } : undefined;
  }

  /**
   * Gives up the controller role after a fenced write failed (Kafka's triggerControllerMove):
   * deletes `/controller` if this session still holds it, announces no controller, and runs the
   * election again (which finds the new controller, or elects this broker with a new epoch).
   */
  async resign(): Promise<void> {
    if (this.stopped) return;
    const { session } = this.opts;
    const ctl = await session.exists(CONTROLLER_PATH).catch(() => null);
    if (ctl && ctl.ephemeralOwner === session.sessionId()) await session.delete(CONTROLLER_PATH, ctl.version).catch(() => undefined);
    this.epochZkVersionValue = -1;
    this.setController(-1);
    await this.elect();
  }

  get brokerIds(): readonly number[] {
    return this.liveBrokerIds;
  }

  private async getOrCreateClusterId(): Promise<string> {
    const { session } = this.opts;
    const existing = await session.getIfExists(CLUSTER_ID_PATH);
    if (existing) return ClusterIdZNode.decode(existing.data);
    const proposed = this.opts.proposedClusterId();
    try {
      await session.create(CLUSTER_ID_PATH, ClusterIdZNode.encode(proposed));
      this.opts.logger.info({ clusterId: proposed }, `created ${CLUSTER_ID_PATH}`);
      return proposed;
    } catch (err) {
      if (!isZkError(err, 'NODE_EXISTS')) throw err;
      return ClusterIdZNode.decode((await session.get(CLUSTER_ID_PATH)).data);
    }
  }

  /** The listeners written into the registration (set once they are bound). */
  setEndpoints(endpoints: BrokerEndpoint[]): void {
    this.endpoints = endpoints;
  }

  /** Registers the broker, joins the election and keeps doing so across session expiries. */
  async register(): Promise<void> {
    await this.registerBroker();
    // An expired session took /controller with it: stop claiming to be (or know) the controller
    // until the new session has run the election again.
    this.opts.session.on('expired', () => this.setController(-1));
    this.opts.session.on('newSession', () => {
      if (this.stopped) return;
      void this.rejoin();
    });
    await this.watchBrokers();
    await this.elect();
  }

  private async rejoin(): Promise<void> {
    try {
      await this.registerBroker();
      await this.watchBrokers();
      await this.elect();
    } catch (err) {
      this.opts.logger.error({ err: messageOf(err) }, 'could not re-register with ZooKeeper after session expiry');
    }
  }

  private async registerBroker(): Promise<void> {
    const { session, brokerId } = this.opts;
    const path = brokerIdPath(brokerId);
    const data = BrokerIdZNode.encode({ id: brokerId, endpoints: this.endpoints, rack: this.opts.rack, timestampMs: Date.now() });
    try {
      await session.create(path, data, 'ephemeral');
    } catch (err) {
      if (!isZkError(err, 'NODE_EXISTS')) throw err;
      // Ours already (a retried create after a lost connection) is fine; anyone else's is not.
      const stat = await session.exists(path);
      if (stat && stat.ephemeralOwner === session.sessionId()) return;
      throw new BrokerIdInUseError(
        `broker.id ${brokerId} is already registered in ZooKeeper at ${path} by a live broker (session 0x${stat?.ephemeralOwner ?? '?'}); give each broker its own broker.id`,
      );
    }
    this.opts.logger.info({ path }, 'registered broker in ZooKeeper');
  }

  private async watchBrokers(): Promise<void> {
    if (this.stopped) return;
    try {
      const names = await this.opts.session.children(BROKER_IDS_PATH, () => void this.watchBrokers());
      this.liveBrokerIds = names
        .map(Number)
        .filter((n) => Number.isInteger(n))
        .sort((a, b) => a - b);
      this.emit('brokersChange', this.liveBrokerIds);
    } catch (err) {
      if (!this.stopped) this.opts.logger.warn({ err: messageOf(err) }, `could not watch ${BROKER_IDS_PATH}`);
    }
  }

  /** Runs one election at a time (watch events may arrive while one is in flight). */
  private elect(): Promise<void> {
    this.electing = this.electing
      .then(() => this.electOnce())
      .catch((err: unknown) => {
        if (!this.stopped) this.opts.logger.error({ err: messageOf(err) }, 'controller election failed');
      });
    return this.electing;
  }

  private onControllerEvent = (e: ZkWatchEvent): void => {
    if (this.stopped) return;
    if (e.type === 'deleted') this.opts.logger.info('controller znode deleted; running an election');
    void this.elect();
  };

  private setController(id: number): void {
    if (id === this.controllerIdValue) return;
    this.controllerIdValue = id;
    this.emit('controllerChange', id);
  }

  private async electOnce(): Promise<void> {
    const { session, brokerId, logger } = this.opts;
    for (;;) {
      if (this.stopped) return;
      // exists() sets its watch even on an absent node (getData would not): every change to
      // /controller, including its creation by another broker, re-runs the election.
      const stat = await session.exists(CONTROLLER_PATH, this.onControllerEvent);
      if (stat) {
        const current = await session.getIfExists(CONTROLLER_PATH, this.onControllerEvent);
        if (!current) continue; // deleted in between
        this.setController(ControllerZNode.decode(current.data));
        if (this.controllerIdValue !== brokerId) await this.readEpoch();
        return;
      }
      try {
        await session.create(CONTROLLER_PATH, ControllerZNode.encode(brokerId, Date.now()), 'ephemeral');
      } catch (err) {
        if (isZkError(err, 'NODE_EXISTS')) continue; // another broker won: read it
        throw err;
      }
      // Won the node; now fence: bump the epoch only while /controller is still ours.
      const incremented = await this.incrementEpoch();
      if (incremented === undefined) {
        logger.warn('lost /controller before the epoch was incremented; resigning');
        await session.delete(CONTROLLER_PATH).catch(() => undefined);
        return;
      }
      const epoch = incremented.epoch;
      this.controllerEpochValue = epoch;
      this.epochZkVersionValue = incremented.zkVersion;
      this.controllerIdValue = -1;
      this.setController(brokerId);
      logger.info({ controllerEpoch: epoch }, `broker ${brokerId} elected controller`);
      return;
    }
  }

  private async readEpoch(): Promise<void> {
    const e = await this.opts.session.getIfExists(CONTROLLER_EPOCH_PATH);
    if (e) this.controllerEpochValue = ControllerEpochZNode.decode(e.data);
  }

  /** The new epoch and its znode version, or undefined when /controller is no longer this session's. */
  private async incrementEpoch(): Promise<{ epoch: number; zkVersion: number } | undefined> {
    const { session } = this.opts;
    for (;;) {
      const ctl = await session.exists(CONTROLLER_PATH);
      if (!ctl || ctl.ephemeralOwner !== session.sessionId()) return undefined;
      const cur = await session.getIfExists(CONTROLLER_EPOCH_PATH);
      try {
        if (!cur) {
          await session.multi([
            { op: 'check', path: CONTROLLER_PATH, version: ctl.version },
            { op: 'create', path: CONTROLLER_EPOCH_PATH, data: ControllerEpochZNode.encode(1) },
          ]);
          return { epoch: 1, zkVersion: 0 };
        }
        const next = ControllerEpochZNode.decode(cur.data) + 1;
        await session.multi([
          { op: 'check', path: CONTROLLER_PATH, version: ctl.version },
          { op: 'set', path: CONTROLLER_EPOCH_PATH, data: ControllerEpochZNode.encode(next), version: cur.stat.version },
        ]);
        return { epoch: next, zkVersion: cur.stat.version + 1 };
      } catch (err) {
        // A concurrent writer of the epoch (or a lost /controller, seen on the next loop).
        if (err instanceof ZkError && (err.code === 'BAD_VERSION' || err.code === 'NODE_EXISTS' || err.code === 'NO_NODE')) continue;
        throw err;
      }
    }
  }

  /** Clean shutdown: removes this broker's registration (and resigns as controller). */
  async deregister(): Promise<void> {
    this.stopped = true;
    const { session, brokerId } = this.opts;
    await this.electing;
    await session.delete(brokerIdPath(brokerId)).catch(() => undefined);
    if (this.controllerIdValue === brokerId) {
      const ctl = await session.exists(CONTROLLER_PATH).catch(() => null);
      if (ctl && ctl.ephemeralOwner === session.sessionId()) await session.delete(CONTROLLER_PATH, ctl.version).catch(() => undefined);
    }
  }
}
