/**
 * The ZooKeeper consumer: Kafka 0.8's high-level consumer (ZookeeperConsumerConnector) as a class
 * of the client library. The group lives in ZooKeeper, not in a group coordinator:
 *
 *   /consumers/<g>/ids/<consumerId>        ephemeral, the member's subscription (Kafka 0.8's JSON)
 *   /consumers/<g>/owners/<t>/<p>          ephemeral, the owning thread id `<consumerId>-<n>`
 *   /consumers/<g>/offsets/<t>/<p>         persistent, the next offset to read as decimal text
 *
 * Every member computes the same range assignment from the ids and the topics' partition counts
 * and claims its partitions by creating their owner nodes; a rebalance (on a change of the ids'
 * children or of /brokers/topics/<t>, on a new ZooKeeper session) first commits and releases every
 * partition it owns, then claims the new ones, and when another member still holds one of them it
 * gives back what it took, waits rebalance.backoff.ms and tries again, up to rebalance.max.retries
 * times: a partition never has two owners. Records come from the partition leaders through the
 * client library's fetcher; brokers are found in /brokers/ids.
 *
 * Offsets are kept by ZkConsumerOffsetStore (offsets.storage, dual.commit.enabled).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { Cluster } from '../cluster.js';
import { Fetcher, type ConsumerRecord, type PartitionState } from '../fetcher.js';
import { tpKey, type TopicPartition } from '../group/offsets.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, listOffsets } from '../list-offsets.js';
import { ZkSession, isZkError, type ZkWatcher } from '../../metadata/zk/zk-session.js';
import { TopicZNode } from '../../metadata/zk/zk-data.js';
import { BROKER_IDS_PATH, consumerIdPath, consumerIdsPath, consumerOwnerPath, consumerOwnersPath, topicPath } from '../../metadata/zk/zk-paths.js';
import { ConsumerRegistrationZNode } from '../../metadata/zk/zk-consumer-znodes.js';
import { consumerThreadIds, rangeAssign, type ThreadAssignment } from './range-assignment.js';
import { brokersFromZooKeeper, generateConsumerId } from './zk-bootstrap.js';
import { ZkConsumerOffsetStore } from './zk-consumer-offset-store.js';

export interface ZookeeperConsumerOptions {
  /** zookeeper.connect: `host:port[,host:port][/chroot]`. */
  zookeeperConnect: string;
  /** group.id (required). */
  groupId: string;
  /** consumer.id: default `<group>_<hostname>-<timestampMs>-<8 hex>`, as Kafka 0.8. */
  consumerId?: string;
  /** client.id: default the group id, as Kafka 0.8. */
  clientId?: string;
  /** zookeeper.session.timeout.ms, default 6000. */
  zookeeperSessionTimeoutMs?: number;
  /** zookeeper.connection.timeout.ms, default 6000. */
  zookeeperConnectionTimeoutMs?: number;
  /** auto.commit.enable, default true. */
  autoCommitEnable?: boolean;
  /** auto.commit.interval.ms, default 60000. */
  autoCommitIntervalMs?: number;
  /** auto.offset.reset: where to start without a stored offset, or when it is out of range. Default largest. */
  autoOffsetReset?: 'largest' | 'smallest';
  /** rebalance.max.retries, default 4. */
  rebalanceMaxRetries?: number;
  /** rebalance.backoff.ms, default 2000. */
  rebalanceBackoffMs?: number;
  /** offsets.storage, default zookeeper. */
  offsetsStorage?: 'zookeeper' | 'kafka';
  /** dual.commit.enabled, default true (used only with offsets.storage=kafka). */
  dualCommitEnabled?: boolean;
  /** fetch.min.bytes, default 1. */
  fetchMinBytes?: number;
  /** fetch.wait.max.ms, default 100. */
  fetchWaitMaxMs?: number;
  /** fetch.message.max.bytes, default 1048576 (per partition). */
  fetchMessageMaxBytes?: number;
  /** socket.timeout.ms, default 30000. */
  socketTimeoutMs?: number;
  /** Records per poll, default 500. */
  maxPollRecords?: number;
  logger?: Logger;
}

export interface ZookeeperConsumerEvents {
  /** A rebalance finished: the partitions this member now owns (possibly none). */
  rebalanced: [ThreadAssignment[]];
}

/** Kafka's ConsumerRebalanceFailedException. */
export class ConsumerRebalanceFailedError extends Error {
  override readonly name = 'ConsumerRebalanceFailedError';
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
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

export class ZookeeperConsumer extends EventEmitter<ZookeeperConsumerEvents> implements AsyncIterable<ConsumerRecord> {
  readonly groupId: string;
  readonly consumerId: string;
  readonly cluster: Cluster;
  private readonly fetcher: Fetcher;
  private subscription: Record<string, number> | null = null;
  /** Partitions this member owns (its owner nodes exist), keyed `<topic>-<partition>`. */
  private owned = new Map<string, ThreadAssignment>();
  private readonly offsets: ZkConsumerOffsetStore;
  private rebalancing: Promise<void> | null = null;
  private rebalancePending = false;
  private rebalanceFailure: Error | null = null;
  private autoCommitTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Set once the first rebalance succeeded: later failures are retried, not thrown. */
  private started = false;
  private readonly stopping = new AbortController();
  private readonly opts: Required<Omit<ZookeeperConsumerOptions, 'consumerId' | 'clientId' | 'logger'>>;

  private constructor(
    readonly zk: ZkSession,
    /** The brokers found in /brokers/ids at connect, `host:port`. */
    readonly bootstrap: readonly string[],
    options: ZookeeperConsumerOptions,
    private readonly logger: Logger | undefined,
  ) {
    super();
    this.groupId = options.groupId;
    this.consumerId = options.consumerId ?? generateConsumerId(options.groupId);
    this.opts = {
      zookeeperConnect: options.zookeeperConnect,
      groupId: options.groupId,
      zookeeperSessionTimeoutMs: options.zookeeperSessionTimeoutMs ?? 6000,
      zookeeperConnectionTimeoutMs: options.zookeeperConnectionTimeoutMs ?? 6000,
      autoCommitEnable: options.autoCommitEnable ?? true,
      autoCommitIntervalMs: options.autoCommitIntervalMs ?? 60000,
      autoOffsetReset: options.autoOffsetReset ?? 'largest',
      rebalanceMaxRetries: options.rebalanceMaxRetries ?? 4,
      rebalanceBackoffMs: options.rebalanceBackoffMs ?? 2000,
      offsetsStorage: options.offsetsStorage ?? 'zookeeper',
      dualCommitEnabled: options.dualCommitEnabled ?? true,
      fetchMinBytes: options.fetchMinBytes ?? 1,
      fetchWaitMaxMs: options.fetchWaitMaxMs ?? 100,
      fetchMessageMaxBytes: options.fetchMessageMaxBytes ?? 1048576,
      socketTimeoutMs: options.socketTimeoutMs ?? 30000,
      maxPollRecords: options.maxPollRecords ?? 500,
    };
    this.cluster = new Cluster({ bootstrapServers: bootstrap, clientId: options.clientId ?? options.groupId, requestTimeoutMs: this.opts.socketTimeoutMs });
    this.offsets = new ZkConsumerOffsetStore({
      zk,
      cluster: this.cluster,
      groupId: this.groupId,
      offsetsStorage: this.opts.offsetsStorage,
      dualCommitEnabled: this.opts.dualCommitEnabled,
      logger,
    });
    this.fetcher = new Fetcher(this.cluster, {
      maxWaitMs: this.opts.fetchWaitMaxMs,
      minBytes: this.opts.fetchMinBytes,
      maxBytes: Math.max(this.opts.fetchMessageMaxBytes, 52428800),
      maxPartitionBytes: this.opts.fetchMessageMaxBytes,
      isolationLevel: 0,
    });
    // ZKSessionExpireListener: the ephemeral ids and owner nodes died with the session, so this
    // member owns nothing; on the new session it registers again and rebalances.
    zk.on('expired', () => {
      this.logger?.warn({ group: this.groupId, consumerId: this.consumerId }, 'ZooKeeper session expired; partitions released');
      this.dropOwnership();
    });
    zk.on('newSession', () => {
      if (this.closed || !this.subscription) return;
      this.register().then(
        () => this.requestRebalance('new ZooKeeper session'),
        (err: unknown) => {
          this.logger?.warn({ err: String(err) }, 'could not register the consumer again after a session expiry');
          this.requestRebalance('new ZooKeeper session');
        },
      );
    });
  }

  /** Connects to ZooKeeper and finds the brokers in /brokers/ids. */
  static async connect(options: ZookeeperConsumerOptions): Promise<ZookeeperConsumer> {
    if (!options.groupId) throw new Error('the ZooKeeper consumer needs a group.id');
    const zk = await ZkSession.open({
      connect: options.zookeeperConnect,
      sessionTimeoutMs: options.zookeeperSessionTimeoutMs ?? 6000,
      connectionTimeoutMs: options.zookeeperConnectionTimeoutMs ?? 6000,
      logger: options.logger,
    });
    try {
      const brokers = await brokersFromZooKeeper(zk);
      if (brokers.length === 0) throw new Error(`No brokers found in ZooKeeper at ${options.zookeeperConnect} (/brokers/ids is empty)`);
      return new ZookeeperConsumer(zk, brokers, options, options.logger);
    } catch (err) {
      await zk.close();
      throw err;
    }
  }

  /**
   * Kafka's createMessageStreams: topics (or topic → stream count; each stream is one consumer
   * thread id in the assignment). Registers in /consumers/<g>/ids and runs the first rebalance;
   * throws ConsumerRebalanceFailedError when it cannot claim its partitions.
   */
  async subscribe(topics: readonly string[] | Readonly<Record<string, number>>): Promise<void> {
    if (this.subscription) throw new Error('this ZooKeeper consumer is already subscribed');
    const sub: Record<string, number> = Array.isArray(topics) ? Object.fromEntries((topics as readonly string[]).map((t) => [t, 1])) : { ...(topics as Record<string, number>) };
    for (const [t, n] of Object.entries(sub)) if (!Number.isInteger(n) || n < 1) throw new Error(`stream count of ${t} must be a positive integer`);
    this.subscription = sub;
    await this.register();
    this.requestRebalance('start');
    await this.rebalancing;
    if (this.rebalanceFailure) {
      const f = this.rebalanceFailure;
      this.rebalanceFailure = null;
      throw f;
    }
    this.started = true;
    if (this.opts.autoCommitEnable) {
      this.autoCommitTimer = setInterval(() => {
        if (this.closed || this.rebalancing) return;
        this.commitOffsets().catch((err: unknown) => this.logger?.warn({ err: String(err) }, 'auto-commit failed'));
      }, this.opts.autoCommitIntervalMs);
    }
  }

  /** The partitions this member owns, with their owner thread ids. */
  assignment(): ThreadAssignment[] {
    return [...this.owned.values()];
  }

  /** The next offset the application will see, or null before it is known. */
  position(tp: TopicPartition): bigint | null {
    return this.fetcher.state(tp.topic, tp.partition)?.position ?? null;
  }

  seek(tp: TopicPartition, offset: bigint | number): void {
    const s = this.fetcher.state(tp.topic, tp.partition);
    if (!s) throw new Error(`partition ${tp.topic}-${tp.partition} is not owned by this consumer`);
    s.seek(BigInt(offset));
  }

  /** Returns the next records (possibly none after `timeoutMs`); waits out rebalances. */
  async poll(timeoutMs = 1000): Promise<ConsumerRecord[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.closed) throw new Error('consumer is closed');
      let left = deadline - Date.now();
      if (this.rebalancing) {
        if (left <= 0) return [];
        await Promise.race([this.rebalancing, sleep(left, this.stopping.signal)]);
        continue;
      }
      await this.initPositions();
      const records = this.fetcher.take(this.opts.maxPollRecords);
      if (records.length > 0) {
        this.fetcher.sendFetches();
        return records;
      }
      left = deadline - Date.now();
      if (left <= 0) return [];
      if (this.owned.size === 0) await sleep(Math.min(left, 100), this.stopping.signal);
      else await this.fetcher.fetch(left);
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ConsumerRecord> {
    while (!this.closed) {
      const batch = await this.poll(1000);
      for (const r of batch) yield r;
    }
  }

  /** Commits the positions of every owned partition to the configured store(s). */
  async commitOffsets(): Promise<void> {
    const entries: [ThreadAssignment, bigint][] = [];
    for (const [k, a] of this.owned) {
      const s = this.fetcher.states.get(k);
      if (s && s.position !== null) entries.push([a, s.position]);
    }
    await this.offsets.commit(entries);
  }

  /** The stored offsets of these partitions (as this consumer would resume), null when none. */
  async committed(tps: readonly TopicPartition[]): Promise<Map<string, bigint | null>> {
    return this.offsets.fetch(tps);
  }

  /** Commits (with auto.commit.enable), releases its partitions, leaves the group, disconnects. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopping.abort();
    if (this.autoCommitTimer) clearInterval(this.autoCommitTimer);
    await this.rebalancing?.catch(() => undefined);
    try {
      if (this.opts.autoCommitEnable) await this.commitOffsets().catch((err: unknown) => this.logger?.warn({ err: String(err) }, 'commit on close failed'));
      await this.releaseOwnership();
      await this.zk.delete(consumerIdPath(this.groupId, this.consumerId)).catch(() => undefined);
    } finally {
      await this.cluster.close();
      await this.zk.close();
    }
  }

  // ---- membership and rebalancing ----

  private readonly onGroupChange: ZkWatcher = (e) => this.requestRebalance(`${e.type} ${e.path}`);

  private async register(): Promise<void> {
    const path = consumerIdPath(this.groupId, this.consumerId);
    await this.zk.ensurePath(consumerIdsPath(this.groupId));
    const data = ConsumerRegistrationZNode.encode({ subscription: this.subscription!, pattern: 'static', timestampMs: Date.now() });
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
    if (this.closed || !this.subscription) return;
    this.logger?.info({ group: this.groupId, consumerId: this.consumerId, reason }, 'rebalance triggered');
    this.rebalancePending = true;
    this.rebalancing ??= this.runRebalances().finally(() => (this.rebalancing = null));
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
    members.set(this.consumerId, this.subscription!);
    const partitions = new Map<string, number[]>();
    for (const topic of Object.keys(this.subscription!)) {
      const got = await this.zk.getIfExists(topicPath(topic), this.onGroupChange);
      if (got) partitions.set(topic, [...TopicZNode.decode(topic, got.data).partitions.keys()]);
      else await this.zk.exists(topicPath(topic), this.onGroupChange); // told when it is created
    }
    const myThreads = new Set(Object.values(consumerThreadIds(this.consumerId, this.subscription!)).flat());
    const mine = [...rangeAssign(members, partitions).values()].filter((a) => myThreads.has(a.threadId));

    // Commit and give back everything first (Kafka's closeFetchers + releasePartitionOwnership).
    if (this.opts.autoCommitEnable) await this.commitOffsets().catch((err: unknown) => this.logger?.warn({ err: String(err) }, 'commit before release failed'));
    await this.releaseOwnership();

    const offsets = await this.offsets.fetch(mine);
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
    this.owned = new Map(mine.map((a) => [tpKey(a.topic, a.partition), a]));
    this.fetcher.setAssignment(mine);
    for (const a of mine) {
      const o = offsets.get(tpKey(a.topic, a.partition));
      if (o !== null && o !== undefined) this.fetcher.state(a.topic, a.partition)!.seek(o);
    }
    this.logger?.info({ group: g, consumerId: this.consumerId, owned: mine.map((a) => tpKey(a.topic, a.partition)) }, 'rebalance done');
    this.emit('rebalanced', mine);
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
    const owned = [...this.owned.values()];
    this.dropOwnership();
    for (const a of owned) await this.deleteOwnerNode(a);
  }

  /** Forgets the partitions (and their positions) without touching ZooKeeper. */
  private dropOwnership(): void {
    this.owned = new Map();
    this.fetcher.setAssignment([]);
  }

  /** Positions for owned partitions without one, or out of range: auto.offset.reset. */
  private async initPositions(): Promise<void> {
    const needing: PartitionState[] = [...this.fetcher.states.values()].filter((s) => s.position === null || s.outOfRange);
    if (needing.length === 0) return;
    const timestamp = this.opts.autoOffsetReset === 'smallest' ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP;
    const answers = await listOffsets(this.cluster, needing.map((s) => ({ topic: s.topic, partition: s.partition, timestamp })));
    for (const a of answers) {
      const s = needing.find((x) => x.topic === a.topic && x.partition === a.partition);
      // A rebalance meanwhile replaced the state (with a stored offset, maybe): leave it alone.
      if (!s || this.fetcher.state(a.topic, a.partition) !== s || (s.position !== null && !s.outOfRange)) continue;
      s.seek(a.offset);
    }
  }
}
