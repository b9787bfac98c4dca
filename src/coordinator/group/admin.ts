/**
 * ListGroups, DescribeGroups and DeleteGroups over one shard.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { OperationResult } from '../runtime/types.js';
import type { GroupShardState } from './group-shard-state.js';
import type { CoordinatorRecord } from './records.js';
import { groupTombstones } from './consumer/consumer-replay.js';

export interface ListedGroup {
  groupId: string;
  protocolType: string;
  groupState: string;
  groupType: string;
}

/** Group types as Kafka 4 names them in ListGroups v5 (GroupType.toString()); filters match them case-insensitively. */
export const GroupTypeName = { classic: 'Classic', consumer: 'Consumer', share: 'Share' } as const;

/** ListGroups' filters, lower-cased once per request: states (v4+) and types (v5); empty = any. */
export interface ListFilters {
  readonly states: ReadonlySet<string>;
  readonly types: ReadonlySet<string>;
}

export function listFilters(statesFilter: readonly string[], typesFilter: readonly string[]): ListFilters {
  return { states: new Set(statesFilter.map((s) => s.toLowerCase())), types: new Set(typesFilter.map((s) => s.toLowerCase())) };
}

/** Whether a group in `state` of `type` (as listed: 'Stable', 'Classic') passes the filters. */
export function passesListFilters(filters: ListFilters, state: string, type: string): boolean {
  return (filters.states.size === 0 || filters.states.has(state.toLowerCase())) && (filters.types.size === 0 || filters.types.has(type.toLowerCase()));
}

export function listGroups(shard: GroupShardState, statesFilter: string[], typesFilter: string[]): ListedGroup[] {
  const filters = listFilters(statesFilter, typesFilter);
  const out: ListedGroup[] = [];
  for (const g of shard.groups.values()) {
    if (g.is('Dead') || !passesListFilters(filters, g.state, GroupTypeName.classic)) continue;
    out.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', groupState: g.state, groupType: GroupTypeName.classic });
  }
  return out;
}

export interface DescribedGroup {
  errorCode: number;
  groupId: string;
  groupState: string;
  protocolType: string;
  protocolData: string;
  members: {
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    memberMetadata: Buffer;
    memberAssignment: Buffer;
  }[];
}

/**
 * As Kafka: an unknown group is described as Dead with no members, not as an error (before v6).
 * A consumer (KIP-848) group is not a classic group: Kafka 4 answers it the same way below v6
 * (GROUP_ID_NOT_FOUND from v6), so clients describe it by ConsumerGroupDescribe.
 */
export function describeGroup(shard: GroupShardState, groupId: string): DescribedGroup {
  const g = shard.consumerGroups.has(groupId) ? undefined : shard.groups.get(groupId);
  if (!g) return { errorCode: ErrorCode.NONE, groupId, groupState: 'Dead', protocolType: '', protocolData: '', members: [] };
  const stable = g.is('Stable');
  return {
    errorCode: ErrorCode.NONE,
    groupId,
    groupState: g.state,
    protocolType: g.protocolType ?? '',
    protocolData: stable ? (g.protocolName ?? '') : '',
    // Metadata and assignments are only meaningful once the generation's assignment is final.
    members: [...g.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      memberMetadata: stable ? g.metadataFor(m) : Buffer.alloc(0),
      memberAssignment: stable ? m.assignment : Buffer.alloc(0),
    })),
  };
}

/** Deletes empty groups: tombstones for each offset and for the group itself. */
export function deleteGroups(shard: GroupShardState, groupIds: string[]): OperationResult<{ groupId: string; errorCode: number }[], CoordinatorRecord> {
  const records: CoordinatorRecord[] = [];
  const results = groupIds.map((groupId) => {
    const consumerGroup = shard.consumerGroups.get(groupId);
    if (consumerGroup && consumerGroup.members.size > 0) return { groupId, errorCode: ErrorCode.NON_EMPTY_GROUP };
    if (consumerGroup) records.push(...groupTombstones(consumerGroup));
    const g = consumerGroup ? undefined : shard.groups.get(groupId);
    if (!consumerGroup && (!g || g.is('Dead'))) return { groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND };
    if (g && !g.is('Empty')) return { groupId, errorCode: ErrorCode.NON_EMPTY_GROUP };
    for (const o of shard.offsets.list(groupId)) records.push({ type: 'offset', group: groupId, topic: o.topic, partition: o.partition, value: null });
    if (!consumerGroup) records.push({ type: 'group', group: groupId, value: null });
    return { groupId, errorCode: ErrorCode.NONE };
  });
  return { records, response: results };
}
