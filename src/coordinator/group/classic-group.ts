/**
 * A classic (JoinGroup/SyncGroup) group in memory: its state, generation, chosen protocol and
 * members. Plain data plus the small decisions that depend only on the group itself (protocol
 * vote, who has joined, converting to and from the GroupMetadata record), the legal moves
 * between its states (Kafka's ClassicGroupState), and the answers of a failed join or sync.
 */
import type { GroupMetadataValue } from '../../protocol/coordinator-records/index.js';
import { EMPTY } from '../../protocol/primitives/index.js';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

/** Legal moves, as Kafka's ClassicGroupState: target state → the states it may be entered from. */
export const VALID_PREVIOUS_GROUP_STATES: ReadonlyMap<GroupState, ReadonlySet<GroupState>> = new Map<GroupState, ReadonlySet<GroupState>>([
  ['Empty', new Set<GroupState>(['PreparingRebalance'])],
  ['PreparingRebalance', new Set<GroupState>(['Stable', 'CompletingRebalance', 'Empty'])],
  ['CompletingRebalance', new Set<GroupState>(['PreparingRebalance'])],
  ['Stable', new Set<GroupState>(['CompletingRebalance'])],
  ['Dead', new Set<GroupState>(['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'])],
]);

export function canGroupTransition(from: GroupState, to: GroupState): boolean {
  return VALID_PREVIOUS_GROUP_STATES.get(to)?.has(from) ?? false;
}

/** A move the table does not allow: a bug in the rebalance code, never a client's doing. */
export class IllegalGroupTransition extends Error {
  constructor(
    readonly groupId: string,
    readonly from: GroupState,
    readonly to: GroupState,
  ) {
    super(`group ${groupId}: illegal transition ${from} -> ${to}`);
  }
}

export interface JoinOutcome {
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  memberId: string;
  skipAssignment: boolean;
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

export interface SyncOutcome {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

export interface ProtocolOffer {
  name: string;
  metadata: Buffer;
}

export interface ClassicMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: ProtocolOffer[];
  assignment: Buffer;
  /** Set while the member waits for the join phase to complete. */
  joinWaiter: ((o: JoinOutcome) => void) | null;
  /** Set while the member waits for the leader's assignment. */
  syncWaiter: ((o: SyncOutcome) => void) | null;
  /** Joined in the current rebalance for the first time. */
  isNew: boolean;
}

export class ClassicGroup {
  state: GroupState = 'Empty';
  /** When the group entered its current state (offsets of an empty group expire from here). */
  stateTimestamp: number;
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  readonly members = new Map<string, ClassicMember>();
  /** group.instance.id → member id. */
  readonly staticMembers = new Map<string, string>();
  /** Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet (KIP-394). */
  readonly pendingMembers = new Set<string>();
  /** Members of the current generation that have not sent SyncGroup yet. */
  readonly pendingSync = new Set<string>();
  /** The initial rebalance delay is running (group.initial.rebalance.delay.ms). */
  initialDelayRemainingMs = 0;
  initialDelayActive = false;
  /** A member joined while the initial delay ran (the delay is extended once more). */
  newMemberAdded = false;
  /** When the running rebalance started (logged with its duration when it completes). */
  rebalanceStartedAt: number | null = null;

  constructor(
    readonly groupId: string,
    now: number,
  ) {
    this.stateTimestamp = now;
  }

  /** Moves to `state`, checked against the table; an illegal move throws IllegalGroupTransition. */
  transitionTo(state: GroupState, now: number): void {
    if (!canGroupTransition(this.state, state)) throw new IllegalGroupTransition(this.groupId, this.state, state);
    this.state = state;
    this.stateTimestamp = now;
  }

  is(...states: GroupState[]): boolean {
    return states.includes(this.state);
  }

  get isEmpty(): boolean {
    return this.members.size === 0;
  }

  hasAllMembersJoined(): boolean {
    for (const m of this.members.values()) if (m.joinWaiter === null) return false;
    return this.pendingMembers.size === 0;
  }

  rebalanceTimeoutMs(): number {
    let t = 0;
    for (const m of this.members.values()) t = Math.max(t, m.rebalanceTimeoutMs);
    return t;
  }

  /** Protocols every member supports, in no particular order. */
  candidateProtocols(): Set<string> {
    let common: Set<string> | undefined;
    for (const m of this.members.values()) {
      const names = new Set(m.protocols.map((p) => p.name));
      const prev: Set<string> | undefined = common;
      common = prev === undefined ? names : new Set([...prev].filter((n) => names.has(n)));
    }
    return common ?? new Set<string>();
  }

  /** Would a member offering these protocols fit the group (same type, some common protocol)? */
  supportsProtocols(protocolType: string, offers: ProtocolOffer[]): boolean {
    if (this.isEmpty) return protocolType !== '' && offers.length > 0;
    if (this.protocolType !== protocolType) return false;
    const candidates = this.candidateProtocols();
    return offers.some((o) => candidates.has(o.name));
  }

  /** Kafka's vote: each member votes for its most preferred common protocol; most votes wins. */
  selectProtocol(): string {
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const choice = m.protocols.find((p) => candidates.has(p.name));
      if (choice) votes.set(choice.name, (votes.get(choice.name) ?? 0) + 1);
    }
    let best = '';
    let bestVotes = -1;
    for (const [name, n] of votes) {
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    return best;
  }

  metadataFor(m: ClassicMember, protocol: string | null = this.protocolName): Buffer {
    return m.protocols.find((p) => p.name === protocol)?.metadata ?? EMPTY;
  }

  addMember(m: ClassicMember): void {
    if (this.isEmpty) this.protocolType = m.protocolType;
    this.members.set(m.memberId, m);
    if (m.groupInstanceId !== null) this.staticMembers.set(m.groupInstanceId, m.memberId);
    if (this.leaderId === null) this.leaderId = m.memberId;
  }

  removeMember(memberId: string): ClassicMember | undefined {
    const m = this.members.get(memberId);
    if (!m) return undefined;
    this.members.delete(memberId);
    this.pendingSync.delete(memberId);
    if (m.groupInstanceId !== null && this.staticMembers.get(m.groupInstanceId) === memberId) {
      this.staticMembers.delete(m.groupInstanceId);
    }
    if (this.leaderId === memberId) this.leaderId = this.members.keys().next().value ?? null;
    return m;
  }

  /** The record Kafka writes for this generation (GroupMetadataValue). */
  toRecordValue(): GroupMetadataValue {
    return {
      protocolType: this.protocolType ?? '',
      generation: this.generationId,
      protocol: this.protocolName,
      leader: this.leaderId,
      currentStateTimestamp: BigInt(this.stateTimestamp),
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs,
        sessionTimeout: m.sessionTimeoutMs,
        subscription: this.metadataFor(m),
        assignment: m.assignment,
      })),
    };
  }

  /** Rebuilds a group from its last GroupMetadata record (loading). */
  static fromRecordValue(groupId: string, v: GroupMetadataValue, now: number): ClassicGroup {
    const ts = v.currentStateTimestamp >= 0n ? Number(v.currentStateTimestamp) : now;
    const g = new ClassicGroup(groupId, ts);
    g.generationId = v.generation;
    g.protocolType = v.protocolType === '' ? null : v.protocolType;
    g.protocolName = v.protocol;
    for (const rm of v.members) {
      g.addMember({
        memberId: rm.memberId,
        groupInstanceId: rm.groupInstanceId,
        clientId: rm.clientId,
        clientHost: rm.clientHost,
        rebalanceTimeoutMs: rm.rebalanceTimeout < 0 ? rm.sessionTimeout : rm.rebalanceTimeout,
        sessionTimeoutMs: rm.sessionTimeout,
        protocolType: g.protocolType ?? '',
        protocols: [{ name: v.protocol ?? '', metadata: rm.subscription }],
        assignment: rm.assignment,
        joinWaiter: null,
        syncWaiter: null,
        isNew: false,
      });
    }
    g.protocolType = v.protocolType === '' ? null : v.protocolType;
    g.leaderId = v.leader;
    g.state = g.isEmpty ? 'Empty' : 'Stable';
    g.stateTimestamp = ts;
    return g;
  }
}

/** The JoinGroup answer of a failed join. */
export function joinError(errorCode: number, memberId = ''): JoinOutcome {
  return { errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId, skipAssignment: false, members: [] };
}

/** The SyncGroup answer of a failed sync. */
export function syncError(errorCode: number): SyncOutcome {
  return { errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
}
