/**
 * A member of a consumer group (KIP-848) as the coordinator keeps it: what it subscribes to (its
 * ConsumerGroupMemberMetadata record) and where it stands in the reconciliation (its
 * ConsumerGroupCurrentMemberAssignment record: epoch, state, assigned and revoking partitions).
 * Members are immutable values: a change replaces the member, so undoing a failed write is
 * putting the previous value back.
 */

/** topic id -> partitions, sorted ascending; treated as immutable. */
export type Assignment = ReadonlyMap<string, readonly number[]>;

export const EMPTY_ASSIGNMENT: Assignment = new Map();

/** Kafka's MemberState bytes, as the CurrentMemberAssignment record stores them. */
export const MemberState = {
  STABLE: 0,
  /** It must give up partitions before it can move to the next epoch. */
  UNREVOKED_PARTITIONS: 1,
  /** It is at the target epoch but waits for partitions other members still hold. */
  UNRELEASED_PARTITIONS: 2,
  UNKNOWN: 127,
} as const;
export type MemberStateValue = (typeof MemberState)[keyof typeof MemberState];

/** The epochs a heartbeat carries to join and to leave. */
export const JOIN_EPOCH = 0;
export const LEAVE_EPOCH = -1;
export const STATIC_LEAVE_EPOCH = -2;

/**
 * What a member speaking the classic protocol (JoinGroup/SyncGroup) inside a consumer group
 * joined with: its session timeout and its protocols (the ClassicMemberMetadata of its record).
 */
export interface ClassicMemberInfo {
  readonly sessionTimeoutMs: number;
  readonly supportedProtocols: readonly { readonly name: string; readonly metadata: Buffer }[];
}

export interface ConsumerMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly subscribedTopicNames: readonly string[];
  readonly subscribedTopicRegex: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly serverAssignor: string | null;
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: MemberStateValue;
  readonly assigned: Assignment;
  readonly pendingRevocation: Assignment;
  /** Set when the member uses the classic protocol (a migrated or classic-joined member). */
  readonly classic: ClassicMemberInfo | null;
}

export function newMember(memberId: string): ConsumerMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    rebalanceTimeoutMs: -1,
    serverAssignor: null,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: MemberState.STABLE,
    assigned: EMPTY_ASSIGNMENT,
    pendingRevocation: EMPTY_ASSIGNMENT,
    classic: null,
  };
}

export function assignmentsEqual(a: Assignment, b: Assignment): boolean {
  if (a.size !== b.size) return false;
  for (const [t, ps] of a) {
    const qs = b.get(t);
    if (!qs || qs.length !== ps.length) return false;
    for (let i = 0; i < ps.length; i++) if (ps[i] !== qs[i]) return false;
  }
  return true;
}

/** Whether the subscription part of two members differs (a group epoch bump). */
export function subscriptionChanged(a: ConsumerMember, b: ConsumerMember): boolean {
  if (a.subscribedTopicRegex !== b.subscribedTopicRegex || a.serverAssignor !== b.serverAssignor || a.rackId !== b.rackId) return true;
  const x = a.subscribedTopicNames;
  const y = b.subscribedTopicNames;
  if (x.length !== y.length) return true;
  const set = new Set(x);
  return y.some((n) => !set.has(n));
}

/** Whether the metadata record of two members differs. */
export function metadataChanged(a: ConsumerMember, b: ConsumerMember): boolean {
  return (
    subscriptionChanged(a, b) ||
    a.instanceId !== b.instanceId ||
    a.clientId !== b.clientId ||
    a.clientHost !== b.clientHost ||
    a.rebalanceTimeoutMs !== b.rebalanceTimeoutMs ||
    classicChanged(a.classic, b.classic)
  );
}

function classicChanged(a: ClassicMemberInfo | null, b: ClassicMemberInfo | null): boolean {
  if (a === null || b === null) return a !== b;
  if (a.sessionTimeoutMs !== b.sessionTimeoutMs || a.supportedProtocols.length !== b.supportedProtocols.length) return true;
  return a.supportedProtocols.some((p, i) => p.name !== b.supportedProtocols[i]!.name || !p.metadata.equals(b.supportedProtocols[i]!.metadata));
}

/** Whether the current-assignment record of two members differs. */
export function assignmentChanged(a: ConsumerMember, b: ConsumerMember): boolean {
  return (
    a.memberEpoch !== b.memberEpoch ||
    a.previousMemberEpoch !== b.previousMemberEpoch ||
    a.state !== b.state ||
    !assignmentsEqual(a.assigned, b.assigned) ||
    !assignmentsEqual(a.pendingRevocation, b.pendingRevocation)
  );
}

/** An assignment from wire/record form (topic id + partitions), sorted, empty topics dropped. */
export function assignmentFrom(list: readonly { topicId: string; partitions: readonly number[] }[]): Assignment {
  const out = new Map<string, number[]>();
  for (const t of list) {
    if (t.partitions.length === 0) continue;
    const ps = out.get(t.topicId) ?? [];
    ps.push(...t.partitions);
    out.set(t.topicId, ps);
  }
  for (const [t, ps] of out)
    out.set(
      t,
      [...new Set(ps)].sort((x, y) => x - y),
    );
  return out;
}

export function assignmentList(a: Assignment): { topicId: string; partitions: number[] }[] {
  return [...a].map(([topicId, ps]) => ({ topicId, partitions: [...ps] }));
}

export function assignmentContains(a: Assignment, topicId: string, partition: number): boolean {
  return a.get(topicId)?.includes(partition) ?? false;
}
