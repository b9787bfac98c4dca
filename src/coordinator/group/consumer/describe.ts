/**
 * ConsumerGroupDescribe over one shard, and the consumer groups ListGroups lists (with their
 * type and state).
 */
import { ErrorCode } from '../../../protocol/errors.js';
import type { GroupShardState } from '../group-shard-state.js';
import { GroupTypeName, type ListedGroup, listFilters, passesListFilters } from '../admin.js';
import type { Assignment } from './member.js';
import { groupAssignor } from './target-assignment.js';

export interface DescribedTopicPartitions {
  topicId: string;
  topicName: string;
  partitions: number[];
}

export interface ConsumerGroupDescription {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: {
    memberId: string;
    instanceId: string | null;
    rackId: string | null;
    memberEpoch: number;
    clientId: string;
    clientHost: string;
    subscribedTopicNames: string[];
    subscribedTopicRegex: string | null;
    assignment: { topicPartitions: DescribedTopicPartitions[] };
    targetAssignment: { topicPartitions: DescribedTopicPartitions[] };
  }[];
}

export function describeConsumerGroup(shard: GroupShardState, groupId: string): ConsumerGroupDescription {
  const g = shard.consumerGroups.get(groupId);
  if (!g) {
    const message = shard.groups.has(groupId) ? `Group ${groupId} is not a consumer group.` : `Group ${groupId} not found.`;
    return {
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      errorMessage: message,
      groupId,
      groupState: '',
      groupEpoch: 0,
      assignmentEpoch: 0,
      assignorName: '',
      members: [],
    };
  }
  const names = new Map([...g.subscriptionMetadata.values()].map((t) => [t.topicId, t.name]));
  const described = (a: Assignment): { topicPartitions: DescribedTopicPartitions[] } => ({
    topicPartitions: [...a].map(([topicId, ps]) => ({ topicId, topicName: names.get(topicId) ?? '', partitions: [...ps] })),
  });
  return {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    groupId,
    groupState: g.state,
    groupEpoch: g.groupEpoch,
    assignmentEpoch: g.assignmentEpoch,
    assignorName: groupAssignor(g.members.values(), shard.consumerEnv.settings.assignors)?.name ?? '',
    members: [...g.members.values()].map((m) => ({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      memberEpoch: m.memberEpoch,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...m.subscribedTopicNames],
      subscribedTopicRegex: m.subscribedTopicRegex,
      assignment: described(m.assigned),
      targetAssignment: described(g.targets.get(m.memberId) ?? new Map()),
    })),
  };
}

/** Consumer groups of the shard for ListGroups (type Consumer), filtered as its v4+ filters ask. */
export function listConsumerGroups(shard: GroupShardState, statesFilter: readonly string[], typesFilter: readonly string[]): ListedGroup[] {
  const filters = listFilters(statesFilter, typesFilter);
  const out: ListedGroup[] = [];
  for (const g of shard.consumerGroups.values()) {
    const state = g.state;
    if (passesListFilters(filters, state, GroupTypeName.consumer))
      out.push({ groupId: g.groupId, protocolType: 'consumer', groupState: state, groupType: GroupTypeName.consumer });
  }
  return out;
}
