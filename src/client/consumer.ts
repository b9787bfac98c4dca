/**
 * The consumer: `subscribe` (names or a pattern, with a group) or `assign` (explicit
 * partitions), then `poll()` or `for await (const r of consumer)`. Positions start at the
 * group's committed offset, else at `autoOffsetReset`. With a group and auto-commit, positions
 * are committed every `autoCommitIntervalMs` (even when unchanged, as Kafka does), before a
 * rebalance takes partitions away, and on close; commits go one at a time, in the order made
 * (group/commit-queue.ts). `groupProtocol: 'consumer'` makes it a KIP-848
 * group member (group/consumer-protocol-membership.ts) instead of a classic one.
 */
import { Cluster, type ClientOptions } from './cluster.js';
import { KafkaError } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';
import { Fetcher, type ConsumerRecord } from './fetcher.js';
import { startClientTelemetry, type ClientTelemetry } from './telemetry/client-telemetry.js';
import { assignorByName } from './group/assignors.js';
import { GroupMembership } from './group/membership.js';
import { ConsumerProtocolMembership, checkGroupProtocolOptions } from './group/consumer-protocol-membership.js';
import { tpKey } from '../common/partition-keys.js';
import { CommitQueue } from './group/commit-queue.js';
import { commitOffsets, fetchCommittedOffsets, type OffsetAndMetadata, type TopicPartition } from './group/offsets.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, listOffsets } from './list-offsets.js';

export type { ConsumerRecord, TopicPartition, OffsetAndMetadata };

/** Hears a group member's rebalances (Java's ConsumerRebalanceListener). */
export interface RebalanceListener {
  onPartitionsRevoked?(partitions: TopicPartition[]): void | Promise<void>;
  onPartitionsAssigned?(partitions: TopicPartition[]): void;
}

export interface ConsumerOptions extends ClientOptions {
  groupId?: string;
  groupInstanceId?: string;
  /** group.protocol: classic (JoinGroup/SyncGroup, the default) or consumer (KIP-848). */
  groupProtocol?: 'classic' | 'consumer';
  /** group.remote.assignor: the server-side assignor asked for with the consumer protocol. */
  groupRemoteAssignor?: string;
  /** client.rack: sent to the coordinator for rack-aware assignment (consumer protocol). */
  clientRack?: string;
  autoOffsetReset?: 'earliest' | 'latest' | 'none';
  /** Default true when a group is set. */
  enableAutoCommit?: boolean;
  autoCommitIntervalMs?: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** max.poll.interval.ms: also the rebalance timeout. */
  maxPollIntervalMs?: number;
  /** Assignor names in preference order (default range, cooperative-sticky, as Java). */
  partitionAssignmentStrategy?: readonly string[];
  fetchMinBytes?: number;
  fetchMaxBytes?: number;
  fetchMaxWaitMs?: number;
  maxPartitionFetchBytes?: number;
  maxPollRecords?: number;
  isolationLevel?: 'read_uncommitted' | 'read_committed';
  /** Keep internal topics out of pattern subscriptions (default true). */
  excludeInternalTopics?: boolean;
}

export class Consumer implements AsyncIterable<ConsumerRecord> {
  readonly cluster: Cluster;
  private readonly fetcher: Fetcher;
  private readonly membership: GroupMembership | ConsumerProtocolMembership | null;
  private subscribedTopics: string[] = [];
  private pattern: RegExp | null = null;
  private patternCheckedAt = 0;
  private assigned: TopicPartition[] = [];
  private manualAssignment = false;
  private rebalanceListener: RebalanceListener | null = null;
  private autoCommitTimer: NodeJS.Timeout | null = null;
  /** Commits one at a time, in the order made: an older one never lands after a newer one. */
  private readonly commits = new CommitQueue();
  private closed = false;
  private readonly autoCommit: boolean;
  /** A consumer-protocol member's id and epoch for OffsetFetch v9+ (null otherwise). */
  private readonly fetchingMember = () => (this.membership instanceof ConsumerProtocolMembership ? this.membership.fetchingMember : null);
  /** KIP-714 telemetry (null with enable.metrics.push=false). */
  readonly telemetry: ClientTelemetry | null;

  constructor(private readonly options: ConsumerOptions) {
    checkGroupProtocolOptions(options);
    this.cluster = new Cluster(options);
    this.fetcher = new Fetcher(this.cluster, {
      maxWaitMs: options.fetchMaxWaitMs ?? 500,
      minBytes: options.fetchMinBytes ?? 1,
      maxBytes: options.fetchMaxBytes ?? 52428800,
      maxPartitionBytes: options.maxPartitionFetchBytes ?? 1048576,
      isolationLevel: options.isolationLevel === 'read_committed' ? 1 : 0,
    });
    this.autoCommit = (options.enableAutoCommit ?? true) && options.groupId !== undefined;
    const classicGroupId = options.groupProtocol === 'consumer' ? undefined : options.groupId;
    this.membership = classicGroupId
      ? new GroupMembership(
          this.cluster,
          {
            groupId: classicGroupId,
            groupInstanceId: options.groupInstanceId ?? null,
            sessionTimeoutMs: options.sessionTimeoutMs ?? 45000,
            rebalanceTimeoutMs: options.maxPollIntervalMs ?? 300000,
            heartbeatIntervalMs: options.heartbeatIntervalMs ?? 3000,
            assignors: (options.partitionAssignmentStrategy ?? ['range', 'cooperative-sticky']).map(assignorByName),
          },
          {
            subscription: () => this.subscribedTopics,
            owned: () => this.assigned,
            onRevoked: (tps) => this.revoke(tps),
            onAssigned: (tps) => this.assignFromGroup(tps),
            partitionCounts: async (topics) => {
              const md = await this.cluster.topicsMetadata(topics);
              return new Map([...md].filter(([, t]) => t.errorCode === 0).map(([name, t]) => [name, t.partitions.length]));
            },
          },
        )
      : this.consumerProtocolMembership();
    this.cluster.stats.assignedPartitions = () => this.fetcher.states.size;
    this.telemetry = startClientTelemetry('consumer', this.cluster, options, options.groupId ? { group_id: options.groupId } : {});
  }

  /** group.protocol=consumer: KIP-848 membership (group/consumer-protocol-membership.ts). */
  private consumerProtocolMembership(): ConsumerProtocolMembership | null {
    const o = this.options;
    if (!o.groupId) return null;
    const settings = { groupId: o.groupId, groupInstanceId: o.groupInstanceId ?? null, rebalanceTimeoutMs: o.maxPollIntervalMs ?? 300000 };
    return new ConsumerProtocolMembership(
      this.cluster,
      { ...settings, remoteAssignor: o.groupRemoteAssignor ?? null, rackId: o.clientRack ?? null },
      {
        subscription: () => this.subscribedTopics,
        regex: () => this.pattern?.source ?? null,
        owned: () => this.assigned,
        onRevoked: (tps) => this.revoke(tps),
        onLost: (tps) => this.lose(tps),
        onAssigned: (tps) => this.assignFromGroup(tps),
      },
    );
  }

  get groupId(): string | undefined {
    return this.options.groupId;
  }

  /**
   * Subscribes to topic names or a pattern (needs a group). Replaces any earlier subscription.
   * The listener hears rebalances as Java's ConsumerRebalanceListener does: revoked partitions
   * (after their offsets were auto-committed), then the partitions newly assigned.
   */
  subscribe(topics: readonly string[] | RegExp, listener?: RebalanceListener): void {
    if (!this.membership) throw new Error('subscribe needs a groupId; use assign() without a group');
    this.rebalanceListener = listener ?? null;
    this.manualAssignment = false;
    if (topics instanceof RegExp) {
      this.pattern = topics;
      this.subscribedTopics = [];
      this.patternCheckedAt = 0;
    } else {
      this.pattern = null;
      this.subscribedTopics = [...topics];
    }
    this.membership.requestRejoin();
    this.startAutoCommit();
  }

  /** Takes these partitions with no group rebalancing. */
  assign(partitions: readonly TopicPartition[]): void {
    this.manualAssignment = true;
    this.pattern = null;
    this.subscribedTopics = [];
    this.setAssigned([...partitions]);
    this.startAutoCommit();
  }

  assignment(): TopicPartition[] {
    return [...this.assigned];
  }

  seek(tp: TopicPartition, offset: bigint | number): void {
    this.requireState(tp).seek(BigInt(offset));
  }

  async seekToBeginning(tps: readonly TopicPartition[] = this.assigned): Promise<void> {
    await this.resetTo(tps, EARLIEST_TIMESTAMP);
  }

  async seekToEnd(tps: readonly TopicPartition[] = this.assigned): Promise<void> {
    await this.resetTo(tps, LATEST_TIMESTAMP);
  }

  position(tp: TopicPartition): bigint | null {
    return this.requireState(tp).position;
  }

  pause(tps: readonly TopicPartition[]): void {
    for (const tp of tps) this.requireState(tp).paused = true;
  }

  resume(tps: readonly TopicPartition[]): void {
    for (const tp of tps) this.requireState(tp).paused = false;
  }

  paused(): TopicPartition[] {
    return [...this.fetcher.states.values()].filter((s) => s.paused).map((s) => ({ topic: s.topic, partition: s.partition }));
  }

  /** Returns the next records (possibly none after `timeoutMs`). */
  async poll(timeoutMs = 1000): Promise<ConsumerRecord[]> {
    this.cluster.stats.pollIdle.pollStarted(performance.now());
    try {
      return await this.pollRecords(timeoutMs);
    } finally {
      this.cluster.stats.pollIdle.pollEnded(performance.now());
    }
  }

  private async pollRecords(timeoutMs: number): Promise<ConsumerRecord[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.closed) throw new Error('consumer is closed');
      await this.updatePatternSubscription();
      if (this.membership && !this.manualAssignment) await this.membership.ensureActive();
      await this.initPositions();
      const records = this.fetcher.take(this.options.maxPollRecords ?? 500);
      if (records.length > 0) {
        this.fetcher.sendFetches(); // prefetch while the application handles these
        return records;
      }
      const left = deadline - Date.now();
      if (left <= 0) return [];
      await this.fetcher.fetch(left);
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ConsumerRecord> {
    while (!this.closed) {
      const batch = await this.poll(1000);
      for (const r of batch) yield r;
    }
  }

  /** Commits `offsets` (default: the current positions of all assigned partitions). */
  async commitSync(offsets?: Map<TopicPartition, OffsetAndMetadata> | [TopicPartition, OffsetAndMetadata][]): Promise<void> {
    const groupId = this.options.groupId;
    if (!groupId) throw new Error('commit needs a groupId');
    const entries = offsets ? [...offsets] : this.currentPositions();
    await this.commits.run(async () => {
      const m = this.membership; // the member's generation as it is sent, after the commits before
      const inGroup = m && !this.manualAssignment && m.generationId >= 0;
      const member = { generationId: inGroup ? m.generationId : -1, memberId: inGroup ? m.memberId : '' };
      const startedAt = performance.now();
      await commitOffsets(this.cluster, { groupId, ...member, groupInstanceId: this.options.groupInstanceId ?? null }, entries);
      this.cluster.stats.commitLatency.record(performance.now() - startedAt);
    });
  }

  /** Fire-and-forget commit; the callback hears the outcome. */
  commitAsync(offsets?: Map<TopicPartition, OffsetAndMetadata>, callback?: (err: Error | null) => void): void {
    this.commitSync(offsets).then(
      () => callback?.(null),
      (err: Error) => callback?.(err),
    );
  }

  async committed(tps: readonly TopicPartition[]): Promise<Map<string, bigint | null>> {
    if (!this.options.groupId) throw new Error('committed offsets need a groupId');
    const got = await fetchCommittedOffsets(this.cluster, this.options.groupId, tps, false, this.fetchingMember);
    return new Map(
      tps.map((tp) => {
        const o = got.get(tp.topic)?.get(tp.partition)?.offset ?? -1n;
        return [tpKey(tp.topic, tp.partition), o >= 0n ? o : null];
      }),
    );
  }

  /** Commits (with auto-commit), leaves the group and closes connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.autoCommitTimer) clearInterval(this.autoCommitTimer);
    if (this.autoCommit) await this.commitSync().catch(() => undefined);
    await this.membership?.leave();
    await this.telemetry?.close();
    await this.cluster.close();
  }

  private currentPositions(): [TopicPartition, OffsetAndMetadata][] {
    const out: [TopicPartition, OffsetAndMetadata][] = [];
    for (const s of this.fetcher.states.values()) {
      if (s.position !== null)
        out.push([
          { topic: s.topic, partition: s.partition },
          { offset: s.position, metadata: '' },
        ]);
    }
    return out;
  }

  private startAutoCommit(): void {
    if (!this.autoCommit || this.autoCommitTimer) return;
    this.autoCommitTimer = setInterval(() => {
      const stable = this.manualAssignment || (this.membership?.isStable ?? false);
      if (!stable || this.closed || this.commits.busy) return;
      this.commitSync().catch(() => undefined);
    }, this.options.autoCommitIntervalMs ?? 5000);
  }

  private async revoke(tps: TopicPartition[]): Promise<void> {
    if (this.autoCommit) {
      const revoked = new Set(tps.map((tp) => tpKey(tp.topic, tp.partition)));
      await this.commitSync(this.currentPositions().filter(([tp]) => revoked.has(tpKey(tp.topic, tp.partition)))).catch(() => undefined);
    }
    const gone = new Set(tps.map((tp) => tpKey(tp.topic, tp.partition)));
    this.setAssigned(this.assigned.filter((tp) => !gone.has(tpKey(tp.topic, tp.partition))));
    await this.rebalanceListener?.onPartitionsRevoked?.(tps);
  }

  /** Lost by fencing: no commit (it would be refused); the listener hears them revoked (Java's default onPartitionsLost). */
  private async lose(tps: TopicPartition[]): Promise<void> {
    const gone = new Set(tps.map((tp) => tpKey(tp.topic, tp.partition)));
    this.setAssigned(this.assigned.filter((tp) => !gone.has(tpKey(tp.topic, tp.partition))));
    await this.rebalanceListener?.onPartitionsRevoked?.(tps);
  }

  /** A completed rebalance's full assignment: the listener hears what is new to this member. */
  private assignFromGroup(tps: TopicPartition[]): void {
    const had = new Set(this.assigned.map((tp) => tpKey(tp.topic, tp.partition)));
    this.setAssigned(tps);
    const added = tps.filter((tp) => !had.has(tpKey(tp.topic, tp.partition)));
    this.rebalanceListener?.onPartitionsAssigned?.(added);
  }

  private setAssigned(tps: TopicPartition[]): void {
    this.assigned = tps;
    this.fetcher.setAssignment(tps);
  }

  private requireState(tp: TopicPartition) {
    const s = this.fetcher.state(tp.topic, tp.partition);
    if (!s) throw new Error(`partition ${tp.topic}-${tp.partition} is not assigned to this consumer`);
    return s;
  }

  private async updatePatternSubscription(): Promise<void> {
    // The consumer protocol sends the pattern itself: the coordinator resolves it.
    if (!this.pattern || !this.membership || this.membership instanceof ConsumerProtocolMembership) return;
    const age = this.options.metadataMaxAgeMs ?? 300000;
    if (Date.now() - this.patternCheckedAt < Math.min(age, 30000) && this.patternCheckedAt > 0) return;
    this.patternCheckedAt = Date.now();
    const md = await this.cluster.refreshMetadata(null);
    const excludeInternal = this.options.excludeInternalTopics ?? true;
    const matching = [...md.topics.values()]
      .filter((t) => this.pattern!.test(t.name) && !(excludeInternal && t.isInternal))
      .map((t) => t.name)
      .sort();
    if (matching.join('\u0000') !== this.subscribedTopics.join('\u0000')) {
      this.subscribedTopics = matching;
      this.membership.requestRejoin();
    }
  }

  /** Gives every partition without a position one: committed offset, else the reset policy. */
  private async initPositions(): Promise<void> {
    const needing = [...this.fetcher.states.values()].filter((s) => s.position === null || s.outOfRange);
    if (needing.length === 0) return;
    const fresh = needing.filter((s) => s.position === null);
    if (fresh.length > 0 && this.options.groupId) {
      const committed = await fetchCommittedOffsets(
        this.cluster,
        this.options.groupId,
        fresh.map((s) => ({ topic: s.topic, partition: s.partition })),
        false,
        this.fetchingMember,
      );
      for (const s of fresh) {
        const c = committed.get(s.topic)?.get(s.partition);
        if (c && c.offset >= 0n) s.seek(c.offset);
      }
    }
    const toReset = needing.filter((s) => s.position === null || s.outOfRange);
    if (toReset.length === 0) return;
    const policy = this.options.autoOffsetReset ?? 'latest';
    if (policy === 'none') {
      const s = toReset[0]!;
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `no committed offset for ${s.topic}-${s.partition} and auto.offset.reset is none`);
    }
    await this.resetTo(
      toReset.map((s) => ({ topic: s.topic, partition: s.partition })),
      policy === 'earliest' ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP,
    );
  }

  private async resetTo(tps: readonly TopicPartition[], timestamp: bigint): Promise<void> {
    if (tps.length === 0) return;
    const answers = await listOffsets(
      this.cluster,
      tps.map((tp) => ({ ...tp, timestamp })),
      this.options.isolationLevel === 'read_committed' ? 1 : 0,
    );
    for (const a of answers) this.fetcher.state(a.topic, a.partition)?.seek(a.offset);
  }
}
