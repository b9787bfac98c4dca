/**
 * The flat numbering the server-side assignors work in: every partition of the topics they
 * assign gets one integer (topics in topic-id order, partitions ascending), so owners and counts
 * live in typed arrays instead of maps of maps (10,000 partitions for 1,000 members cost a few
 * arrays, not 10,000 objects). Also: members in a fixed order (by member id: the result must not
 * depend on the order the coordinator happened to insert them), previous targets read into the
 * numbering, the result written back as the contract's TargetAssignment, and the racks.
 */
import type { AssignmentSpec, AssignorMember, AssignorTopic, TargetAssignment } from './types.js';

export class PartitionSpace {
  /** The topics, by topic id. */
  readonly topics: readonly AssignorTopic[];
  /** A topic's ordinal in `topics` -> the flat index of its partition 0. */
  readonly first: Int32Array;
  /** Flat index -> the ordinal of its topic. */
  readonly topicOf: Int32Array;
  readonly size: number;
  private readonly ordinalById = new Map<string, number>();

  constructor(topics: Iterable<AssignorTopic>) {
    this.topics = [...topics].sort((a, b) => compareStrings(a.topicId, b.topicId));
    this.first = new Int32Array(this.topics.length + 1);
    let size = 0;
    this.topics.forEach((t, ordinal) => {
      this.ordinalById.set(t.topicId, ordinal);
      this.first[ordinal] = size;
      size += Math.max(0, t.partitionCount);
    });
    this.first[this.topics.length] = size;
    this.size = size;
    this.topicOf = new Int32Array(size);
    for (let t = 0; t < this.topics.length; t++) this.topicOf.fill(t, this.first[t]!, this.first[t + 1]!);
  }

  ordinal(topicId: string): number | undefined {
    return this.ordinalById.get(topicId);
  }

  /** The flat index of a partition, or -1 where the topic is not here or has no such partition. */
  index(topicId: string, partition: number): number {
    const t = this.ordinalById.get(topicId);
    if (t === undefined || !Number.isInteger(partition) || partition < 0) return -1;
    const i = this.first[t]! + partition;
    return i < this.first[t + 1]! ? i : -1;
  }

  partitionOf(index: number): number {
    return index - this.first[this.topicOf[index]!]!;
  }

  /**
   * A member's previous target as flat indices, ascending, once each: only partitions that still exist and
   * that `keep` allows (the member still subscribes to the topic).
   */
  previousOf(member: AssignorMember, keep: (topicOrdinal: number) => boolean): number[] {
    const out: number[] = [];
    for (const [topicId, partitions] of member.currentTarget) {
      const t = this.ordinalById.get(topicId);
      if (t === undefined || !keep(t)) continue;
      for (const p of partitions) {
        const i = this.index(topicId, p);
        if (i >= 0) out.push(i);
      }
    }
    return ascendingUnique(out);
  }

  /** owner[flat index] = member ordinal (or -1) -> the contract's result, partitions ascending. */
  toTarget(members: readonly AssignorMember[], owner: Int32Array): TargetAssignment {
    const perMember: Map<string, number[]>[] = members.map(() => new Map());
    for (let i = 0; i < this.size; i++) {
      const m = owner[i]!;
      if (m < 0) continue;
      const topicId = this.topics[this.topicOf[i]!]!.topicId;
      const byTopic = perMember[m]!;
      let list = byTopic.get(topicId);
      if (!list) byTopic.set(topicId, (list = []));
      list.push(this.partitionOf(i));
    }
    const target: TargetAssignment = new Map();
    members.forEach((m, ordinal) => target.set(m.memberId, perMember[ordinal]!));
    return target;
  }
}

/** Sorts flat indices and drops repeats (a previous target read from a record may list one twice). */
export function ascendingUnique(indices: number[]): number[] {
  indices.sort((a, b) => a - b);
  let n = 0;
  for (let k = 0; k < indices.length; k++) if (k === 0 || indices[k] !== indices[k - 1]) indices[n++] = indices[k]!;
  indices.length = n;
  return indices;
}

/** Code-unit order, as Java's String.compareTo: independent of the locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The spec's members in member-id order. */
export function membersInOrder(spec: AssignmentSpec): AssignorMember[] {
  return [...spec.members.values()].sort((a, b) => compareStrings(a.memberId, b.memberId));
}

/** The subscribed topics the spec describes (a subscription to a topic it does not describe is skipped). */
export function subscribedTopics(spec: AssignmentSpec, members: readonly AssignorMember[]): AssignorTopic[] {
  const ids = new Set<string>();
  for (const m of members) for (const id of m.subscribedTopicIds) ids.add(id);
  const out: AssignorTopic[] = [];
  for (const id of ids) {
    const t = spec.topics.get(id);
    if (t) out.push(t);
  }
  return out;
}

/** Whether every member subscribes to the same topics (checked, not only taken from the spec). */
export function isHomogeneous(members: readonly AssignorMember[]): boolean {
  const first = members[0];
  if (!first) return true;
  for (const m of members) {
    if (m.subscribedTopicIds.size !== first.subscribedTopicIds.size) return false;
    for (const id of m.subscribedTopicIds) if (!first.subscribedTopicIds.has(id)) return false;
  }
  return true;
}

/**
 * Which partitions have a replica in which member's rack. Built only when some member has a
 * rack and some partition's replicas have racks: otherwise null and no assignor asks
 * partitionRacks at all.
 */
export class RackMatch {
  private constructor(
    /** Member ordinal -> its rack's ordinal, -1 for none. */
    readonly memberRack: Int32Array,
    /** Flat index -> the ordinals of its replicas' racks (only racks some member is in). */
    readonly partitionRacks: readonly (readonly number[])[],
    readonly rackCount: number,
  ) {}

  static of(space: PartitionSpace, members: readonly AssignorMember[]): RackMatch | null {
    const rackOrdinal = new Map<string, number>();
    const memberRack = new Int32Array(members.length).fill(-1);
    members.forEach((m, ordinal) => {
      if (m.rackId === null || m.rackId === '') return;
      let r = rackOrdinal.get(m.rackId);
      if (r === undefined) rackOrdinal.set(m.rackId, (r = rackOrdinal.size));
      memberRack[ordinal] = r;
    });
    if (rackOrdinal.size === 0) return null;
    const partitionRacks: number[][] = new Array(space.size);
    let any = false;
    for (let i = 0; i < space.size; i++) {
      const racks: number[] = [];
      for (const rack of space.topics[space.topicOf[i]!]!.partitionRacks(space.partitionOf(i))) {
        const r = rackOrdinal.get(rack);
        if (r !== undefined && !racks.includes(r)) racks.push(r);
      }
      if (racks.length > 0) any = true;
      partitionRacks[i] = racks;
    }
    return any ? new RackMatch(memberRack, partitionRacks, rackOrdinal.size) : null;
  }

  /** Whether a replica of the partition sits in the member's rack. */
  matches(member: number, index: number): boolean {
    const r = this.memberRack[member]!;
    return r >= 0 && this.partitionRacks[index]!.includes(r);
  }
}
