/**
 * One ZooKeeper consumer's membership of its group (Kafka 0.8's ZookeeperConsumerConnector
 * rebalance): its registration in /consumers/<g>/ids, the range assignment every member computes
 * alike, and the owner nodes by which it claims its partitions. A rebalance commits and releases
 * every partition it owns, then claims the new ones; when another member still holds one of them
 * it gives back what it took, waits rebalance.backoff.ms and tries again, up to
 * rebalance.max.retries times, so a partition never has two owners.
 *
 * Apart from the consumer (zk-consumer.ts), which fetches and commits what this member owns and
 * is told of each new assignment through GroupMemberHost.
 */
import type { Logger } from 'pino';
import { tpKey } from '../../common/partition-keys.js';
import { isZkError, type ZkSession, type ZkWatcher } from '../../metadata/zk/zk-session.js';
import { TopicZNode } from '../../metadata/zk/zk-data.js';
import { BROKER_IDS_PATH, consumerIdPath, consumerIdsPath, consumerOwnerPath, consumerOwnersPath, topicPath } from '../../metadata/zk/zk-paths.js';
import { ConsumerRegistrationZNode } from '../../metadata/zk/zk-consumer-znodes.js';
import { consumerThreadIds, rangeAssign, type ThreadAssignment } from './range-assignment.js';
import type { ZookeeperConsumerSettings } from './zk-consumer-options.js';

/** Kafka's ConsumerRebalanceFailedException. */
export class ConsumerRebalanceFailedError extends Error {
  override readonly name = 'ConsumerRebalanceFailedError';
}

/** What a rebalance asks of the consumer that fetches the member's partitions. */
export interface GroupMemberHost {
  /** Commits the positions of the owned partitions (before they are released). */
  commitOffsets(): Promise<void>;
  /** The stored offsets of partitions about to be claimed, null when none. */
  fetchOffsets(partitions: readonly ThreadAssignment[]): Promise<Map<string, bigint | null>>;
  /** Fetches exactly these partitions from now on (none: stop), from `offsets` where known. */
  assign(partitions: readonly ThreadAssignment[], offsets?: ReadonlyMap<string, bigint | null>): void;
  /** A rebalance finished with these partitions. */
  rebalanced(partitions: ThreadAssignment[]): void;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

export class ZkGroupMember {
  private subscriptionValue: Record<string, number> | null = null;
  /** Partitions this member owns (its owner nodes exist), keyed `<topic>-<partition>`. */
  private ownedValue = new Map<string, ThreadAssignment>();
  private rebalancingValue: Promise<void> | null = null;
  private rebalancePending = false;
  private rebalanceFailure: Error | null = null;
  private closed = false;
  /** Set once the first rebalance succeeded: later failures are retried, not thrown. */
  private started = false;
  private readonly stopping = new AbortController();

  constructor(
    private readonly zk: ZkSession,
    private readonly groupId: string,
    private readonly consumerId: string,
    private readonly opts: Pick<ZookeeperConsumerSettings, 'autoCommitEnable' | 'rebalanceMaxRetries' | 'rebalanceBackoffMs'>,
    private readonly host: GroupMemberHost,
    private readonly logger: Logger | undefined,
  ) {
    // ZKSessionExpireListener: the ephemeral ids and owner nodes died with the session, so this
    // member owns nothing; on the new session it registers again and rebalances.
    zk.on('expired', () => {
      this.logger?.warn({ group: this.groupId, consumerId: this.consumerId }, 'ZooKeeper session expired; partitions released');
      this.dropOwnership();
    });
    zk.on('newSession', () => {
      if (this.closed || !this.subscriptionValue) return;
      this.register().then(
        () => this.requestRebalance('new ZooKeeper session'),
        (err: unknown) => {
          this.logger?.warn({ err: String(err) }, 'could not register the consumer again after a session expiry');
          this.requestRebalance('new ZooKeeper session');
        },
      );
    });
  }

  get subscription(): Readonly<Record<string, number>> | null {
    return this.subscriptionValue;
  }

  /** The partitions this member owns, keyed `<topic>-<partition>`. */
  get owned(): ReadonlyMap<string, ThreadAssignment> {
    return this.ownedValue;
  }

  /** The rebalance in progress, if any. */
  get rebalancing(): Promise<void> | null {
    return this.rebalancingValue;
  }

  /**
   * Registers with this subscription and runs the first rebalance; throws
   * ConsumerRebalanceFailedError when it cannot claim its partitions.
   */
  async join(subscription: Record<string, number>): Promise<void> {
    this.subscriptionValue = subscription;
    await this.register();
    this.requestRebalance('start');
    await this.rebalancingValue;
    if (this.rebalanceFailure) {
      const f = this.rebalanceFailure;
      this.rebalanceFailure = null;
      throw f;
    }
    this.started = true;
  }

  /** No rebalance starts or retries after this; the one in progress stops at its next step. */
  stop(): void {
    this.closed = true;
    this.stopping.abort();
  }

  /** Releases the owned partitions and removes the registration (after stop). */
  async leave(): Promise<void> {
    await this.releaseOwnership();
    await this.zk.delete(consumerIdPath(this.groupId, this.consumerId)).catch(() => undefined);
  }

  private readonly onGroupChange: ZkWatcher = (e) => this.requestRebalance(`${e.type} ${e.path}`);

  private async register(): Promise<void> {
    const path = consumerIdPath(this.groupId, this.consumerId);
    await this.zk.ensurePath(consumerIdsPath(this.groupId));
    const data = ConsumerRegistrationZNode.encode({ subscription: this.subscriptionValue!, pattern: 'static', timestampMs: Date.now() });
    for (let attempt = 0; ; attempt++) {
      try {
        await this.zk.create(path, data, 'ephemeral');
        return;
      } catch (err) {
        if (!isZkError(err, 'NODE_EXISTS') || attempt >= 3) throw err;
        const stat = await this.zk.exists(path);
        if (stat && stat.ephemeralOwner === this.zk.sessionId()) return;
        // Our id is unique: a node under it is this consumer's, left by a session that is gone.
        await this.zk.delete(path).catch(() => undefined);
      }
    }
  }

  private requestRebalance(reason: string): void {
    if (this.closed || !this.subscriptionValue) return;
    this.logger?.info({ group: this.groupId, consumerId: this.consumerId, reason }, 'rebalance triggered');
    this.rebalancePending = true;
    this.rebalancingValue ??= this.runRebalances().finally(() => (this.rebalancingValue = null));
  }

  private async runRebalances(): Promise<void> {
    while (this.rebalancePending && !this.closed) {
      this.rebalancePending = false;
      try {
        await this.syncedRebalance();
        this.rebalanceFailure = null;
      } catch (err) {
        this.rebalanceFailure = err instanceof Error ? err : new Error(String(err));
        this.logger?.error({ err: this.rebalanceFailure.message }, 'rebalance failed');
        // Kafka 0.8 then sat idle until the next watch fired; Fjord tries again after the
        // back-off, so a member that lost a race never stays without partitions for good.
        if (!this.closed && this.started) {
          await sleep(this.opts.rebalanceBackoffMs, this.stopping.signal);
          this.rebalancePending = true;
        }
      }
    }
  }

  private async syncedRebalance(): Promise<void> {
    for (let attempt = 0; attempt < this.opts.rebalanceMaxRetries; attempt++) {
      if (this.closed) return;
      let done = false;
      try {
        done = await this.rebalance();
      } catch (err) {
        this.logger?.warn({ attempt, err: String(err) }, 'rebalance attempt failed');
      }
      if (done) return;
      if (this.closed) return;
      await sleep(this.opts.rebalanceBackoffMs, this.stopping.signal);
    }
    throw new ConsumerRebalanceFailedError(`${this.consumerId} can't rebalance after ${this.opts.rebalanceMaxRetries} retries`);
  }

  /** One attempt; false when another member still owns a partition this one should claim. */
  private async rebalance(): Promise<boolean> {
    const g = this.groupId;
    const session = this.zk.sessionId();
    if (!(await this.zk.exists(consumerIdPath(g, this.consumerId)))) {
      await this.register();
    }
    const brokers = await this.zk.children(BROKER_IDS_PATH).catch(() => []);
    if (brokers.length === 0) {
      await this.zk.children(BROKER_IDS_PATH, this.onGroupChange).catch(() => []);
      this.logger?.warn('no brokers registered; waiting for /brokers/ids to change');
      return true;
    }
    const members = new Map<string, Record<string, number>>();
    for (const id of await this.zk.children(consumerIdsPath(g), this.onGroupChange)) {
      const got = await this.zk.getIfExists(consumerIdPath(g, id));
      if (!got) continue;
      try {
        members.set(id, ConsumerRegistrationZNode.decode(got.data).subscription);
      } catch (err) {
        this.logger?.warn({ id, err: String(err) }, 'skipping an unreadable consumer registration');
      }
    }
    members.set(this.consumerId, this.subscriptionValue!);
    const partitions = new Map<string, number[]>();
    for (const topic of Object.keys(this.subscriptionValue!)) {
      const got = await this.zk.getIfExists(topicPath(topic), this.onGroupChange);
      if (got) partitions.set(topic, [...TopicZNode.decode(topic, got.data).partitions.keys()]);
      else await this.zk.exists(topicPath(topic), this.onGroupChange); // told when it is created
    }
    const myThreads = new Set(Object.values(consumerThreadIds(this.consumerId, this.subscriptionValue!)).flat());
    const mine = [...rangeAssign(members, partitions).values()].filter((a) => myThreads.has(a.threadId));

    // Commit and give back everything first (Kafka's closeFetchers + releasePartitionOwnership).
    if (this.opts.autoCommitEnable)
      await this.host.commitOffsets().catch((err: unknown) => this.logger?.warn({ err: String(err) }, 'commit before release failed'));
    await this.releaseOwnership();

    const offsets = await this.host.fetchOffsets(mine);
    const claimed: ThreadAssignment[] = [];
    for (const a of mine) {
      if (await this.claim(a)) {
        claimed.push(a);
        continue;
      }
      this.logger?.info({ partition: tpKey(a.topic, a.partition) }, 'partition still owned by another member; backing off');
      for (const c of claimed) await this.deleteOwnerNode(c);
      return false;
    }
    if (this.closed) {
      for (const c of claimed) await this.deleteOwnerNode(c);
      return true;
    }
    if (this.zk.sessionId() !== session) {
      // The session expired meanwhile: some claims may have died with it. The new session's
      // rebalance (already requested) decides; adopt nothing from this one.
      for (const c of claimed) await this.deleteOwnerNode(c);
      return true;
    }
    this.ownedValue = new Map(mine.map((a) => [tpKey(a.topic, a.partition), a]));
    this.host.assign(mine, offsets);
    this.logger?.info({ group: g, consumerId: this.consumerId, owned: mine.map((a) => tpKey(a.topic, a.partition)) }, 'rebalance done');
    this.host.rebalanced(mine);
    return true;
  }

  /** Creates the owner node; an existing one is fine only when it already names this thread. */
  private async claim(a: ThreadAssignment): Promise<boolean> {
    const path = consumerOwnerPath(this.groupId, a.topic, a.partition);
    await this.zk.ensurePath(consumerOwnersPath(this.groupId, a.topic));
    try {
      await this.zk.create(path, a.threadId, 'ephemeral');
      return true;
    } catch (err) {
      if (!isZkError(err, 'NODE_EXISTS')) throw err;
      const got = await this.zk.getIfExists(path);
      return got !== undefined && got.data.toString('utf8') === a.threadId && got.stat.ephemeralOwner === this.zk.sessionId();
    }
  }

  private async deleteOwnerNode(a: ThreadAssignment): Promise<void> {
    const path = consumerOwnerPath(this.groupId, a.topic, a.partition);
    const got = await this.zk.getIfExists(path).catch(() => undefined);
    if (got && got.data.toString('utf8') === a.threadId) await this.zk.delete(path, got.stat.version).catch(() => undefined);
  }

  private async releaseOwnership(): Promise<void> {
    const owned = [...this.ownedValue.values()];
    this.dropOwnership();
    for (const a of owned) await this.deleteOwnerNode(a);
  }

  /** Forgets the partitions (and their positions) without touching ZooKeeper. */
  private dropOwnership(): void {
    this.ownedValue = new Map();
    this.host.assign([]);
  }
}
