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
 * This class fetches and commits; the membership and rebalancing are ZkGroupMember's
 * (zk-group-member.ts), the settings zk-consumer-options.ts, and offsets are kept by
 * ZkConsumerOffsetStore (offsets.storage, dual.commit.enabled).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { Cluster } from '../cluster.js';
import { Fetcher, type ConsumerRecord, type PartitionState } from '../fetcher.js';
import { tpKey } from '../../common/partition-keys.js';
import type { TopicPartition } from '../group/offsets.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, listOffsets } from '../list-offsets.js';
import { ZkSession } from '../../metadata/zk/zk-session.js';
import type { ThreadAssignment } from './range-assignment.js';
import { brokersFromZooKeeper, generateConsumerId } from './zk-bootstrap.js';
import { ZkConsumerOffsetStore } from './zk-consumer-offset-store.js';
import { consumerSettings, type ZookeeperConsumerOptions, type ZookeeperConsumerSettings } from './zk-consumer-options.js';
import { ZkGroupMember, sleep } from './zk-group-member.js';

export interface ZookeeperConsumerEvents {
  /** A rebalance finished: the partitions this member now owns (possibly none). */
  rebalanced: [ThreadAssignment[]];
}

export class ZookeeperConsumer extends EventEmitter<ZookeeperConsumerEvents> implements AsyncIterable<ConsumerRecord> {
  readonly groupId: string;
  readonly consumerId: string;
  readonly cluster: Cluster;
  private readonly fetcher: Fetcher;
  private readonly offsets: ZkConsumerOffsetStore;
  /** The group membership: what this consumer owns, and the rebalances that decide it. */
  private readonly group: ZkGroupMember;
  private autoCommitTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly stopping = new AbortController();
  private readonly opts: ZookeeperConsumerSettings;

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
    this.opts = consumerSettings(options);
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
    this.group = new ZkGroupMember(
      zk,
      this.groupId,
      this.consumerId,
      this.opts,
      {
        commitOffsets: () => this.commitOffsets(),
        fetchOffsets: (partitions) => this.offsets.fetch(partitions),
        assign: (partitions, offsets) => this.assign(partitions, offsets),
        rebalanced: (partitions) => this.emit('rebalanced', partitions),
      },
      logger,
    );
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
    if (this.group.subscription) throw new Error('this ZooKeeper consumer is already subscribed');
    const sub: Record<string, number> = Array.isArray(topics)
      ? Object.fromEntries((topics as readonly string[]).map((t) => [t, 1]))
      : { ...(topics as Record<string, number>) };
    for (const [t, n] of Object.entries(sub)) if (!Number.isInteger(n) || n < 1) throw new Error(`stream count of ${t} must be a positive integer`);
    await this.group.join(sub);
    if (this.opts.autoCommitEnable) {
      this.autoCommitTimer = setInterval(() => {
        if (this.closed || this.group.rebalancing) return;
        this.commitOffsets().catch((err: unknown) => this.logger?.warn({ err: String(err) }, 'auto-commit failed'));
      }, this.opts.autoCommitIntervalMs);
    }
  }

  /** The partitions this member owns, with their owner thread ids. */
  assignment(): ThreadAssignment[] {
    return [...this.group.owned.values()];
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
      const rebalancing = this.group.rebalancing;
      if (rebalancing) {
        if (left <= 0) return [];
        await Promise.race([rebalancing, sleep(left, this.stopping.signal)]);
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
      if (this.group.owned.size === 0) await sleep(Math.min(left, 100), this.stopping.signal);
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
    for (const [k, a] of this.group.owned) {
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
    this.group.stop();
    if (this.autoCommitTimer) clearInterval(this.autoCommitTimer);
    await this.group.rebalancing?.catch(() => undefined);
    try {
      if (this.opts.autoCommitEnable) await this.commitOffsets().catch((err: unknown) => this.logger?.warn({ err: String(err) }, 'commit on close failed'));
      await this.group.leave();
    } finally {
      await this.cluster.close();
      await this.zk.close();
    }
  }

  /** Fetches the group member's partitions, from their stored offsets where known. */
  private assign(partitions: readonly ThreadAssignment[], offsets?: ReadonlyMap<string, bigint | null>): void {
    this.fetcher.setAssignment(partitions);
    if (!offsets) return;
    for (const a of partitions) {
      const o = offsets.get(tpKey(a.topic, a.partition));
      if (o !== null && o !== undefined) this.fetcher.state(a.topic, a.partition)!.seek(o);
    }
  }

  /** Positions for owned partitions without one, or out of range: auto.offset.reset. */
  private async initPositions(): Promise<void> {
    const needing: PartitionState[] = [...this.fetcher.states.values()].filter((s) => s.position === null || s.outOfRange);
    if (needing.length === 0) return;
    const timestamp = this.opts.autoOffsetReset === 'smallest' ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP;
    const answers = await listOffsets(
      this.cluster,
      needing.map((s) => ({ topic: s.topic, partition: s.partition, timestamp })),
    );
    for (const a of answers) {
      const s = needing.find((x) => x.topic === a.topic && x.partition === a.partition);
      // A rebalance meanwhile replaced the state (with a stored offset, maybe): leave it alone.
      if (!s || this.fetcher.state(a.topic, a.partition) !== s || (s.position !== null && !s.outOfRange)) continue;
      s.seek(a.offset);
    }
  }
}
