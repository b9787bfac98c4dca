/**
 * How each consumer group record changes the in-memory groups, for live writes and loading
 * alike (the records are the truth, as in Kafka 4's coordinator), each change returning how to
 * undo it when its append fails. Also the record values built from members and assignments.
 */
import type { Undo } from '../../runtime/types.js';
import { ConsumerGroup, type SubscribedTopic } from './consumer-group.js';
import type { ConsumerGroupRecord } from './consumer-records.js';
import { type Assignment, type ConsumerMember, EMPTY_ASSIGNMENT, type MemberStateValue, assignmentFrom, assignmentList, newMember } from './member.js';

export function replayConsumerGroupRecord(groups: Map<string, ConsumerGroup>, r: ConsumerGroupRecord): Undo | undefined {
  let g = groups.get(r.group);
  if (r.type === 'cg-metadata' && r.value === null) {
    if (!g) return undefined;
    groups.delete(r.group);
    const removed = g;
    return () => void groups.set(r.group, removed);
  }
  let created = false;
  if (!g) {
    // A tombstone of a part of a group that is gone already changes nothing.
    if (r.value === null) return undefined;
    g = new ConsumerGroup(r.group);
    groups.set(r.group, g);
    created = true;
  }
  const undo = applyTo(g, r);
  return () => {
    undo();
    if (created) groups.delete(r.group);
  };
}

function applyTo(g: ConsumerGroup, r: ConsumerGroupRecord): Undo {
  switch (r.type) {
    case 'cg-metadata': {
      const before = g.groupEpoch;
      g.groupEpoch = r.value!.epoch;
      return () => void (g.groupEpoch = before);
    }
    case 'cg-partition-metadata': {
      const before = g.subscriptionMetadata;
      g.subscriptionMetadata = r.value === null ? new Map() : subscriptionFromRecord(r.value.topics);
      return () => void (g.subscriptionMetadata = before);
    }
    case 'cg-target-metadata': {
      const before = g.assignmentEpoch;
      g.assignmentEpoch = r.value === null ? 0 : r.value.assignmentEpoch;
      return () => void (g.assignmentEpoch = before);
    }
    case 'cg-target-member': {
      const before = g.targets.get(r.memberId);
      if (r.value === null) g.targets.delete(r.memberId);
      else g.targets.set(r.memberId, assignmentFrom(r.value.topicPartitions));
      return () => void (before ? g.targets.set(r.memberId, before) : g.targets.delete(r.memberId));
    }
    case 'cg-member': {
      const old = g.members.get(r.memberId);
      let next: ConsumerMember | undefined;
      if (r.value !== null) {
        const v = r.value;
        next = {
          ...(old ?? newMember(r.memberId)),
          instanceId: v.instanceId,
          rackId: v.rackId,
          clientId: v.clientId,
          clientHost: v.clientHost,
          subscribedTopicNames: v.subscribedTopicNames,
          subscribedTopicRegex: v.subscribedTopicRegex,
          rebalanceTimeoutMs: v.rebalanceTimeoutMs,
          serverAssignor: v.serverAssignor,
          classic:
            v.classicMemberMetadata === null
              ? null
              : {
                  sessionTimeoutMs: v.classicMemberMetadata.sessionTimeoutMs,
                  supportedProtocols: v.classicMemberMetadata.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata })),
                },
        };
      }
      const before = g.setMember(r.memberId, next);
      return () => void g.setMember(r.memberId, before);
    }
    case 'cg-current-assignment': {
      const old = g.members.get(r.memberId);
      const v = r.value;
      const next: ConsumerMember = {
        ...(old ?? newMember(r.memberId)),
        memberEpoch: v?.memberEpoch ?? 0,
        previousMemberEpoch: v?.previousMemberEpoch ?? 0,
        state: (v?.state ?? 0) as MemberStateValue,
        assigned: v ? assignmentFrom(v.assignedPartitions) : EMPTY_ASSIGNMENT,
        pendingRevocation: v ? assignmentFrom(v.partitionsPendingRevocation) : EMPTY_ASSIGNMENT,
      };
      // A tombstone of a member that is gone already changes nothing.
      if (!old && v === null) return () => undefined;
      const before = g.setMember(r.memberId, next);
      return () => void g.setMember(r.memberId, before);
    }
  }
}

function subscriptionFromRecord(
  topics: readonly { topicId: string; topicName: string; numPartitions: number; partitionMetadata: { partition: number; racks: string[] }[] }[],
): Map<string, SubscribedTopic> {
  const out = new Map<string, SubscribedTopic>();
  for (const t of topics) {
    out.set(t.topicName, {
      topicId: t.topicId,
      name: t.topicName,
      numPartitions: t.numPartitions,
      racks: new Map(t.partitionMetadata.map((p) => [p.partition, p.racks])),
    });
  }
  return out;
}

// The records an operation writes, built from the values it computed.

export const groupEpochRecord = (group: string, epoch: number): ConsumerGroupRecord => ({ type: 'cg-metadata', group, value: { epoch } });

export const targetEpochRecord = (group: string, assignmentEpoch: number): ConsumerGroupRecord => ({
  type: 'cg-target-metadata',
  group,
  value: { assignmentEpoch },
});

export const targetMemberRecord = (group: string, memberId: string, a: Assignment | null): ConsumerGroupRecord => ({
  type: 'cg-target-member',
  group,
  memberId,
  value: a === null ? null : { topicPartitions: assignmentList(a) },
});

export function subscriptionRecord(group: string, topics: ReadonlyMap<string, SubscribedTopic>): ConsumerGroupRecord {
  return {
    type: 'cg-partition-metadata',
    group,
    value: {
      topics: [...topics.values()].map((t) => ({
        topicId: t.topicId,
        topicName: t.name,
        numPartitions: t.numPartitions,
        partitionMetadata: [...t.racks].map(([partition, racks]) => ({ partition, racks: [...racks] })),
      })),
    },
  };
}

export function memberMetadataRecord(group: string, m: ConsumerMember): ConsumerGroupRecord {
  return {
    type: 'cg-member',
    group,
    memberId: m.memberId,
    value: {
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...m.subscribedTopicNames],
      subscribedTopicRegex: m.subscribedTopicRegex,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      serverAssignor: m.serverAssignor,
      classicMemberMetadata:
        m.classic === null
          ? null
          : {
              sessionTimeoutMs: m.classic.sessionTimeoutMs,
              supportedProtocols: m.classic.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata })),
            },
    },
  };
}

export function currentAssignmentRecord(group: string, m: ConsumerMember): ConsumerGroupRecord {
  return {
    type: 'cg-current-assignment',
    group,
    memberId: m.memberId,
    value: {
      memberEpoch: m.memberEpoch,
      previousMemberEpoch: m.previousMemberEpoch,
      state: m.state,
      assignedPartitions: assignmentList(m.assigned),
      partitionsPendingRevocation: assignmentList(m.pendingRevocation),
    },
  };
}

/** A member leaving for good: its current assignment, target and metadata go, in Kafka's order. */
export function memberRemovalRecords(group: string, memberId: string): ConsumerGroupRecord[] {
  return [
    { type: 'cg-current-assignment', group, memberId, value: null },
    { type: 'cg-target-member', group, memberId, value: null },
    { type: 'cg-member', group, memberId, value: null },
  ];
}

/** Every record of a group as tombstones (DeleteGroups, expiry), the group metadata last. */
export function groupTombstones(g: ConsumerGroup): ConsumerGroupRecord[] {
  const out: ConsumerGroupRecord[] = [];
  for (const id of g.members.keys()) out.push(...memberRemovalRecords(g.groupId, id));
  for (const id of g.targets.keys()) if (!g.members.has(id)) out.push({ type: 'cg-target-member', group: g.groupId, memberId: id, value: null });
  out.push({ type: 'cg-target-metadata', group: g.groupId, value: null });
  out.push({ type: 'cg-partition-metadata', group: g.groupId, value: null });
  out.push({ type: 'cg-metadata', group: g.groupId, value: null });
  return out;
}
