/**
 * Group membership with the consumer protocol of KIP-848 (`group.protocol=consumer`): the
 * coordinator computes every member's assignment and hands it out by ConsumerGroupHeartbeat.
 * This member joins with epoch 0 under a member id it makes itself (v1), heartbeats at the
 * interval the coordinator returns, and reconciles what it owns towards each assignment it
 * receives: revoked partitions first (their offsets committed by the consumer's hook), then
 * the acknowledgement (a heartbeat carrying what it now owns), then the new partitions. Fenced
 * (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID): every partition is released as lost and the member
 * rejoins with epoch 0. Close leaves with epoch -1, or -2 for a static member. As KIP-848 allows
 * (and the Java client does), a heartbeat carries the subscription, owned partitions, rack,
 * assignor and rebalance timeout only when joining, after a failed heartbeat, or when they
 * changed; null (-1 for the timeout) tells the coordinator "unchanged".
 */
import { Api } from '../apis.js';
import { sleep, type Cluster } from '../cluster.js';
import { KafkaError, isRetriableError } from '../errors.js';
import { ErrorCode } from '../../protocol/errors.js';
import { randomUuid } from '../../protocol/primitives/index.js';
import { tpKey } from '../../common/partition-keys.js';
import { sendToCoordinator } from './coordinator.js';
import type { FetchingMember, TopicPartition } from './offsets.js';

const JOIN_EPOCH = 0;
const LEAVE_EPOCH = -1;
const STATIC_LEAVE_EPOCH = -2;

/** Errors after which the member starts over (epoch 0) rather than giving up. */
const FENCED: ReadonlySet<number> = new Set([ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID]);
/** Errors that pass with time: the next heartbeat tries again. */
const TRANSIENT: ReadonlySet<number> = new Set([
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.UNRELEASED_INSTANCE_ID,
  ErrorCode.REQUEST_TIMED_OUT,
]);

/** The consumer options a group protocol refuses, by Kafka name (Java's ConsumerConfig lists). */
const REFUSED_BY_PROTOCOL = {
  consumer: [
    ['partition.assignment.strategy', 'partitionAssignmentStrategy'],
    ['heartbeat.interval.ms', 'heartbeatIntervalMs'],
    ['session.timeout.ms', 'sessionTimeoutMs'],
  ],
  classic: [['group.remote.assignor', 'groupRemoteAssignor']],
} as const;

/**
 * Throws, as Java's consumer does (ConfigException), when options of the other protocol are
 * set: with group.protocol=consumer the coordinator assigns and times sessions and heartbeats
 * (group.consumer.* broker configs), and the classic protocol has no remote assignor.
 */
export function checkGroupProtocolOptions(options: {
  groupProtocol?: 'classic' | 'consumer';
  partitionAssignmentStrategy?: readonly string[];
  heartbeatIntervalMs?: number;
  sessionTimeoutMs?: number;
  groupRemoteAssignor?: string;
}): void {
  const protocol = options.groupProtocol ?? 'classic';
  const set = REFUSED_BY_PROTOCOL[protocol].filter(([, option]) => {
    const value = options[option];
    return value !== undefined && String(value).trim() !== '';
  });
  if (set.length > 0) throw new Error(`${set.map(([key]) => key).join(', ')} cannot be set when group.protocol=${protocol.toUpperCase()}`);
}

export interface ConsumerProtocolOptions {
  groupId: string;
  groupInstanceId: string | null;
  /** max.poll.interval.ms: how long the coordinator waits for a revocation. */
  rebalanceTimeoutMs: number;
  /** group.remote.assignor: the server-side assignor this member asks for (null: the group's default). */
  remoteAssignor: string | null;
  rackId: string | null;
}

export interface ConsumerProtocolHooks {
  /** Topic names subscribed to (empty with a regex). */
  subscription(): string[];
  /** The regex subscribed to, in the broker's dialect, or null. */
  regex(): string | null;
  owned(): TopicPartition[];
  /** Partitions taken away: the consumer commits their offsets, then stops fetching them. */
  onRevoked(tps: TopicPartition[]): Promise<void>;
  /** Partitions lost by fencing: no commit (the epoch is stale), just stop fetching them. */
  onLost(tps: TopicPartition[]): Promise<void>;
  /** The partitions this member now owns, after any revocation. */
  onAssigned(tps: TopicPartition[]): void;
}

/** What the coordinator has acknowledged of this member's fields, as comparable keys. */
interface SentFields {
  subscription: string;
  owned: string;
}

export class ConsumerProtocolMembership {
  /** Made by the client (ConsumerGroupHeartbeat v1) and kept for the member's whole life. */
  memberId = randomUuid();
  memberEpoch = JOIN_EPOCH;
  private joined = false;
  private heartbeatIntervalMs = 3000;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  /** The last assignment received, as topic ids; kept until every id resolves to a name. */
  private target: Map<string, number[]> | null = null;
  private reconciling = false;
  /** Ownership changed during this beat: the next one goes at once, as its acknowledgement. */
  private acknowledge = false;
  private fatal: Error | null = null;
  private stopped = false;
  /** The fields the last successful heartbeat carried; null: the next one sends them all. */
  private sent: SentFields | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: ConsumerProtocolOptions,
    private readonly hooks: ConsumerProtocolHooks,
  ) {}

  /** The epoch OffsetCommit carries (v9+); -1 while not a member, for a "simple" commit. */
  get generationId(): number {
    return this.joined && this.memberEpoch > 0 ? this.memberEpoch : -1;
  }

  /** Who reads the group's offsets (OffsetFetch v9+): this member at its epoch, while it has one. */
  get fetchingMember(): FetchingMember | null {
    return this.generationId > 0 ? { memberId: this.memberId, memberEpoch: this.generationId } : null;
  }

  /** Auto-commit waits while a revocation is in progress (a topic id not resolved yet does not hold it up). */
  get isStable(): boolean {
    return this.joined && !this.reconciling;
  }

  /** The subscription changed: the next heartbeat, sent at once, carries it. */
  requestRejoin(): void {
    if (this.joined) this.heartbeatSoon(0);
  }

  /** Joins if not a member yet; throws what made the coordinator refuse this member for good. */
  async ensureActive(): Promise<void> {
    while (!this.joined && !this.stopped) {
      if (this.fatal) throw this.fatal;
      await this.heartbeatNow();
      if (this.fatal) throw this.fatal;
      if (!this.joined) await sleep(this.cluster.retryBackoffMs);
    }
    if (this.fatal) throw this.fatal;
  }

  async leave(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.clearTimer();
    // A beat in flight (a join above all) should land before the leave; a bounded wait, since
    // one whose coordinator is gone retries until the request timeout.
    if (this.inFlight) await Promise.race([this.inFlight, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    if (!this.joined) return;
    this.joined = false;
    const epoch = this.options.groupInstanceId !== null ? STATIC_LEAVE_EPOCH : LEAVE_EPOCH;
    const leaving = { groupId: this.options.groupId, memberId: this.memberId, memberEpoch: epoch, instanceId: this.options.groupInstanceId };
    await sendToCoordinator(this.cluster, this.options.groupId, Api.ConsumerGroupHeartbeat, leaving, (r) => r.errorCode).catch(() => undefined);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private heartbeatSoon(delayMs: number): void {
    if (this.stopped) return;
    this.clearTimer();
    this.timer = setTimeout(() => void this.heartbeatNow(), delayMs);
    this.timer.unref();
  }

  /** Sends one heartbeat (or waits for the one in flight), then schedules the next. */
  private heartbeatNow(): Promise<void> {
    this.inFlight ??= this.heartbeatOnce()
      .catch((err: unknown) => {
        // Retriable failures (coordinator moving, connection lost) wait for the next beat.
        const transient = isRetriableError(err) || (err instanceof KafkaError && TRANSIENT.has(err.code));
        if (!transient) this.fatal = err instanceof Error ? err : new Error(String(err));
      })
      .finally(() => {
        this.inFlight = null;
        if (!this.fatal) this.heartbeatSoon(this.acknowledge ? 0 : this.heartbeatIntervalMs);
        this.acknowledge = false;
      });
    return this.inFlight;
  }

  /** The next heartbeat, and the keys of the fields it reports (to send only changes after it). */
  private request() {
    const regex = this.hooks.regex();
    const names = regex === null ? this.hooks.subscription() : null;
    const owned = this.memberEpoch === JOIN_EPOCH ? [] : this.byTopicId(this.hooks.owned());
    const fields: SentFields = { subscription: JSON.stringify([names, regex]), owned: ownedKey(owned) };
    const all = this.memberEpoch === JOIN_EPOCH ? null : this.sent;
    const subscriptionChanged = all === null || all.subscription !== fields.subscription;
    const body = {
      groupId: this.options.groupId,
      memberId: this.memberId,
      memberEpoch: this.memberEpoch,
      instanceId: this.options.groupInstanceId,
      rackId: all === null ? this.options.rackId : null,
      rebalanceTimeoutMs: all === null ? this.options.rebalanceTimeoutMs : -1,
      subscribedTopicNames: subscriptionChanged ? names : null,
      subscribedTopicRegex: subscriptionChanged ? regex : null,
      serverAssignor: all === null ? this.options.remoteAssignor : null,
      topicPartitions: all === null || all.owned !== fields.owned ? owned : null,
    };
    return { body, fields };
  }

  private async heartbeatOnce(): Promise<void> {
    if (this.stopped) return;
    const { body, fields } = this.request();
    // Until this one is answered, a heartbeat lost on the way must not count as sent.
    this.sent = null;
    const resp = await sendToCoordinator(this.cluster, this.options.groupId, Api.ConsumerGroupHeartbeat, body, (r) => r.errorCode);
    if (FENCED.has(resp.errorCode)) {
      await this.fenced();
      return;
    }
    if (resp.errorCode !== ErrorCode.NONE) {
      throw new KafkaError(resp.errorCode, `heartbeat of group ${this.options.groupId} failed${resp.errorMessage ? `: ${resp.errorMessage}` : ''}`);
    }
    this.sent = fields;
    // Recorded even when closing meanwhile: a join that landed must be followed by a leave.
    this.memberEpoch = resp.memberEpoch;
    this.memberId = resp.memberId ?? this.memberId;
    this.joined = true;
    if (this.stopped) return;
    if (resp.heartbeatIntervalMs > 0) this.heartbeatIntervalMs = resp.heartbeatIntervalMs;
    if (resp.assignment) this.target = new Map(resp.assignment.topicPartitions.map((t) => [t.topicId, [...t.partitions]]));
    if (this.target && (await this.reconcile())) this.acknowledge = true;
  }

  /** Releases everything (no commit: the epoch is stale) and joins again under the same id. */
  private async fenced(): Promise<void> {
    this.joined = false;
    if (this.stopped) return;
    this.memberEpoch = JOIN_EPOCH;
    this.target = null;
    const owned = this.hooks.owned();
    if (owned.length > 0) await this.hooks.onLost(owned);
    this.acknowledge = true; // rejoin at once
  }

  /**
   * Moves what this member owns towards the target: revocations first, then additions. Returns
   * whether ownership changed (so the coordinator hears of it by an immediate heartbeat).
   */
  private async reconcile(): Promise<boolean> {
    const target = this.target!;
    this.reconciling = true;
    try {
      const names = await this.topicNames([...target.keys()]);
      const wanted: TopicPartition[] = [];
      let unresolved = false;
      for (const [topicId, partitions] of target) {
        const topic = names.get(topicId);
        if (topic === undefined) unresolved = true;
        else for (const partition of partitions) wanted.push({ topic, partition });
      }
      const wantedKeys = new Set(wanted.map((tp) => tpKey(tp.topic, tp.partition)));
      const owned = this.hooks.owned();
      const ownedKeys = new Set(owned.map((tp) => tpKey(tp.topic, tp.partition)));
      const revoked = owned.filter((tp) => !wantedKeys.has(tpKey(tp.topic, tp.partition)));
      const added = wanted.filter((tp) => !ownedKeys.has(tpKey(tp.topic, tp.partition)));
      if (revoked.length > 0) await this.hooks.onRevoked(revoked);
      if (this.stopped || !this.joined) return false;
      if (added.length > 0 || revoked.length > 0) this.hooks.onAssigned(wanted);
      // A topic id not in the metadata yet (just created) stays pending for the next beat.
      if (!unresolved) this.target = null;
      return added.length > 0 || revoked.length > 0;
    } finally {
      this.reconciling = false;
    }
  }

  /** Topic id to name, refreshing the metadata when an id is unknown. */
  private async topicNames(ids: string[]): Promise<Map<string, string>> {
    const lookup = () => new Map([...this.cluster.current.topics.values()].map((t) => [t.topicId, t.name]));
    let names = lookup();
    if (ids.some((id) => !names.has(id))) {
      await this.cluster.refreshMetadata(null);
      names = lookup();
    }
    return names;
  }

  private byTopicId(tps: TopicPartition[]): OwnedPartitions {
    const byId = new Map<string, number[]>();
    for (const tp of tps) {
      const id = this.cluster.current.topics.get(tp.topic)?.topicId;
      if (id === undefined) continue;
      byId.set(id, [...(byId.get(id) ?? []), tp.partition]);
    }
    return [...byId].map(([topicId, partitions]) => ({ topicId, partitions }));
  }
}

type OwnedPartitions = { topicId: string; partitions: number[] }[];

/** The same partitions give the same key, whatever their order. */
function ownedKey(owned: OwnedPartitions): string {
  return owned
    .map((t) => `${t.topicId}:${[...t.partitions].sort((a, b) => a - b).join(',')}`)
    .sort()
    .join(' ');
}
