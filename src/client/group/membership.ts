/**
 * Classic consumer group membership: JoinGroup (retrying with the member id the coordinator
 * hands out), the leader runs the assignor, SyncGroup delivers each member's share, heartbeats
 * keep the session alive, LeaveGroup on close. Eager assignors give everything up before
 * joining; cooperative ones keep what they still own and give up only what moved, then rejoin.
 */
import { Api } from '../apis.js';
import { sleep, type Cluster } from '../cluster.js';
import { KafkaError } from '../errors.js';
import { ErrorCode } from '../../protocol/errors.js';
import { Reader, Writer } from '../../protocol/primitives/index.js';
import { ConsumerProtocolAssignmentCodec, ConsumerProtocolSubscriptionCodec } from '../../protocol/messages/index.js';
import type { JoinGroupResponseMember } from '../../protocol/messages/11-join-group.js';
import type { Assignor, GroupAssignment, MemberSubscription } from './assignors.js';
import { sendToCoordinator } from './coordinator.js';
import { tpKey } from '../../common/partition-keys.js';
import type { TopicPartition } from './offsets.js';

export interface MembershipOptions {
  groupId: string;
  groupInstanceId: string | null;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
  assignors: readonly Assignor[];
}

export interface MembershipHooks {
  /** Topics this member subscribes to now. */
  subscription(): string[];
  /** What this member owns now. */
  owned(): TopicPartition[];
  /** Partitions being taken away (commit their offsets here). */
  onRevoked(partitions: TopicPartition[]): Promise<void>;
  /** The member's full assignment after a completed rebalance. */
  onAssigned(partitions: TopicPartition[]): void;
  /** Partition counts, for the leader's assignment. */
  partitionCounts(topics: string[]): Promise<Map<string, number>>;
}

const CONSUMER_PROTOCOL = 'consumer';
const SUBSCRIPTION_VERSION = 3;
const ASSIGNMENT_VERSION = 3;

export function encodeSubscription(topics: string[], owned: TopicPartition[], generationId: number): Buffer {
  const w = new Writer(128);
  w.int16(SUBSCRIPTION_VERSION);
  ConsumerProtocolSubscriptionCodec.write(
    w,
    { topics, userData: null, ownedPartitions: groupPartitions(owned), generationId, rackId: null },
    SUBSCRIPTION_VERSION,
  );
  return Buffer.from(w.result());
}

export function decodeSubscription(buf: Buffer): { topics: string[]; ownedPartitions: Map<string, number[]>; generationId: number } {
  const r = new Reader(buf);
  const version = Math.min(r.int16(), ConsumerProtocolSubscriptionCodec.maxVersion);
  const s = ConsumerProtocolSubscriptionCodec.read(r, version);
  return { topics: s.topics, ownedPartitions: new Map(s.ownedPartitions.map((tp) => [tp.topic, tp.partitions])), generationId: s.generationId };
}

export function encodeAssignment(byTopic: Map<string, number[]>): Buffer {
  const w = new Writer(128);
  w.int16(ASSIGNMENT_VERSION);
  ConsumerProtocolAssignmentCodec.write(
    w,
    { assignedPartitions: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })), userData: null },
    ASSIGNMENT_VERSION,
  );
  return Buffer.from(w.result());
}

export function decodeAssignment(buf: Buffer): TopicPartition[] {
  if (buf.length < 2) return [];
  const r = new Reader(buf);
  const version = Math.min(r.int16(), ConsumerProtocolAssignmentCodec.maxVersion);
  const a = ConsumerProtocolAssignmentCodec.read(r, version);
  return a.assignedPartitions.flatMap((tp) => tp.partitions.map((partition) => ({ topic: tp.topic, partition })));
}

function groupPartitions(tps: TopicPartition[]): { topic: string; partitions: number[] }[] {
  const m = new Map<string, number[]>();
  for (const tp of tps) m.set(tp.topic, [...(m.get(tp.topic) ?? []), tp.partition]);
  return [...m].map(([topic, partitions]) => ({ topic, partitions }));
}

export class GroupMembership {
  memberId = '';
  generationId = -1;
  protocolName: string | null = null;
  private rejoinNeeded = true;
  private joining: Promise<void> | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: MembershipOptions,
    private readonly hooks: MembershipHooks,
  ) {}

  get needsRejoin(): boolean {
    return this.rejoinNeeded;
  }

  get isStable(): boolean {
    return !this.rejoinNeeded && this.joining === null && this.generationId >= 0;
  }

  /** Asks for a rebalance at the next ensureActive (subscription changed). */
  requestRejoin(): void {
    this.rejoinNeeded = true;
  }

  /** Joins (or rejoins) the group if needed; resolves once this member has its assignment. */
  async ensureActive(): Promise<void> {
    while (this.rejoinNeeded && !this.stopped) {
      this.joining ??= this.joinOnce().finally(() => {
        this.joining = null;
      });
      await this.joining;
    }
  }

  async leave(): Promise<void> {
    this.stopped = true;
    this.stopHeartbeats();
    if (!this.memberId) return;
    const memberId = this.memberId;
    this.memberId = '';
    this.generationId = -1;
    await sendToCoordinator(
      this.cluster,
      this.options.groupId,
      Api.LeaveGroup,
      {
        groupId: this.options.groupId,
        memberId,
        members: [{ memberId, groupInstanceId: this.options.groupInstanceId, reason: 'the consumer is being closed' }],
      },
      (r) => r.errorCode,
    ).catch(() => undefined);
  }

  private get cooperative(): boolean {
    return this.options.assignors.every((a) => a.cooperative);
  }

  private async joinOnce(): Promise<void> {
    this.stopHeartbeats();
    if (!this.cooperative) {
      const owned = this.hooks.owned();
      if (owned.length > 0) await this.hooks.onRevoked(owned);
    }
    const topics = this.hooks.subscription();
    const owned = this.hooks.owned();
    const join = await sendToCoordinator(
      this.cluster,
      this.options.groupId,
      Api.JoinGroup,
      {
        groupId: this.options.groupId,
        sessionTimeoutMs: this.options.sessionTimeoutMs,
        rebalanceTimeoutMs: this.options.rebalanceTimeoutMs,
        memberId: this.memberId,
        groupInstanceId: this.options.groupInstanceId,
        protocolType: CONSUMER_PROTOCOL,
        protocols: this.options.assignors.map((a) => ({ name: a.name, metadata: encodeSubscription(topics, owned, this.generationId) })),
        reason: null,
      },
      (r) => r.errorCode,
      this.options.rebalanceTimeoutMs + 5000,
    );
    if (join.errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
      this.memberId = join.memberId;
      return; // rejoin at once with the id
    }
    if (join.errorCode === ErrorCode.UNKNOWN_MEMBER_ID || join.errorCode === ErrorCode.ILLEGAL_GENERATION) {
      this.memberId = '';
      this.generationId = -1;
      return;
    }
    if (join.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) {
      await sleep(this.cluster.retryBackoffMs);
      return;
    }
    if (join.errorCode !== 0) throw new KafkaError(join.errorCode, `joining group ${this.options.groupId} failed`);
    this.memberId = join.memberId;
    this.generationId = join.generationId;
    this.protocolName = join.protocolName;
    const assignments = join.leader === join.memberId ? await this.leaderAssign(join.protocolName ?? '', join.members) : new Map<string, Buffer>();
    const sync = await sendToCoordinator(
      this.cluster,
      this.options.groupId,
      Api.SyncGroup,
      {
        groupId: this.options.groupId,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: this.options.groupInstanceId,
        protocolType: CONSUMER_PROTOCOL,
        protocolName: this.protocolName,
        assignments: [...assignments].map(([memberId, assignment]) => ({ memberId, assignment })),
      },
      (r) => r.errorCode,
      this.options.rebalanceTimeoutMs + 5000,
    );
    if (sync.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) return;
    if (sync.errorCode === ErrorCode.UNKNOWN_MEMBER_ID || sync.errorCode === ErrorCode.ILLEGAL_GENERATION) {
      this.memberId = '';
      this.generationId = -1;
      return;
    }
    if (sync.errorCode !== 0) throw new KafkaError(sync.errorCode, `syncing group ${this.options.groupId} failed`);
    const assigned = decodeAssignment(sync.assignment);
    const keep = new Set(assigned.map((tp) => tpKey(tp.topic, tp.partition)));
    const revoked = this.hooks.owned().filter((tp) => !keep.has(tpKey(tp.topic, tp.partition)));
    if (revoked.length > 0) await this.hooks.onRevoked(revoked);
    this.hooks.onAssigned(assigned);
    // Cooperative: what we gave up can now go to its new owner, in a follow-up round.
    this.rejoinNeeded = revoked.length > 0 && this.cooperative;
    this.startHeartbeats();
  }

  private async leaderAssign(protocol: string, members: JoinGroupResponseMember[]): Promise<Map<string, Buffer>> {
    const assignor = this.options.assignors.find((a) => a.name === protocol);
    if (!assignor) throw new Error(`the group chose assignor "${protocol}", which this consumer does not have`);
    const subs: MemberSubscription[] = members.map((m) => {
      const s = decodeSubscription(m.metadata);
      return { memberId: m.memberId, topics: s.topics, ownedPartitions: s.ownedPartitions, generation: s.generationId };
    });
    const counts = await this.hooks.partitionCounts([...new Set(subs.flatMap((s) => s.topics))]);
    const result: GroupAssignment = assignor.assign(subs, counts);
    return new Map([...result].map(([member, byTopic]) => [member, encodeAssignment(byTopic)]));
  }

  private startHeartbeats(): void {
    this.stopHeartbeats();
    if (this.stopped) return;
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.options.heartbeatIntervalMs);
    this.heartbeatTimer.unref();
  }

  private stopHeartbeats(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private async heartbeat(): Promise<void> {
    if (this.joining || this.rejoinNeeded) return;
    try {
      const resp = await sendToCoordinator(
        this.cluster,
        this.options.groupId,
        Api.Heartbeat,
        { groupId: this.options.groupId, generationId: this.generationId, memberId: this.memberId, groupInstanceId: this.options.groupInstanceId },
        (r) => r.errorCode,
      );
      if (resp.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) this.rejoinNeeded = true;
      else if (
        resp.errorCode === ErrorCode.UNKNOWN_MEMBER_ID ||
        resp.errorCode === ErrorCode.ILLEGAL_GENERATION ||
        resp.errorCode === ErrorCode.FENCED_INSTANCE_ID
      ) {
        this.memberId = '';
        this.generationId = -1;
        this.rejoinNeeded = true;
      }
    } catch {
      // The coordinator is unreachable for now; the next heartbeat tries again.
    }
  }
}
