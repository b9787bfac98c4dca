/**
 * Admin operations on consumer groups: list (asks every broker, since each coordinates its own
 * groups), describe (members with their decoded assignments; KIP-848 groups with their epochs
 * and target assignments), delete, and the group's offsets (read, overwrite as a "simple" commit
 * with generation -1, delete).
 */
import { Api } from './apis.js';
import type { Cluster } from './cluster.js';
import { KafkaError, UnsupportedApiError } from './errors.js';
import { findCoordinator, sendToCoordinator } from './group/coordinator.js';
import { decodeAssignment } from './group/membership.js';
import { commitOffsets, fetchCommittedOffsets, type TopicPartition } from './group/offsets.js';

export interface GroupListing {
  groupId: string;
  protocolType: string;
  state: string;
  /** The group's type as the broker names it (Classic, Consumer, Share); absent before ListGroups v5. */
  type?: string;
}

/** ListGroups' filters: group states (brokers 2.6+, ListGroups v4) and types (Kafka 4, v5), case-insensitive. */
export interface ListGroupsOptions {
  states?: readonly string[];
  types?: readonly string[];
}

export interface GroupMemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  assignment: TopicPartition[];
  /** Consumer (KIP-848) groups only: the member's epoch and the assignment it is moving to. */
  memberEpoch?: number;
  targetAssignment?: TopicPartition[];
}

export interface GroupDescription {
  groupId: string;
  errorCode: number;
  state: string;
  protocolType: string;
  /** The assignor in use (e.g. range). */
  protocol: string;
  members: GroupMemberDescription[];
  /** The coordinator broker (nodeId -1 when the metadata does not list it). */
  coordinator: { host: string; port: number; nodeId: number };
  /** Which protocol the group speaks, as Kafka 4 names its types: Classic or Consumer (KIP-848). */
  type?: 'Classic' | 'Consumer';
  /** Consumer groups only: the group's epoch and the epoch of its target assignment. */
  groupEpoch?: number;
  targetAssignmentEpoch?: number;
}

/** GROUP_ID_NOT_FOUND: ConsumerGroupDescribe's answer for a group that is not a consumer group. */
const GROUP_ID_NOT_FOUND = 69;

async function coordinatorOf(cluster: Cluster, groupId: string): Promise<GroupDescription['coordinator']> {
  const conn = await findCoordinator(cluster, groupId);
  const brokers = (await cluster.refreshMetadata([])).brokers.values();
  const node = [...brokers].find((b) => b.host === conn.host && b.port === conn.port);
  return { host: conn.host, port: conn.port, nodeId: node?.nodeId ?? -1 };
}

export async function listGroups(cluster: Cluster, options: ListGroupsOptions = {}): Promise<GroupListing[]> {
  const md = await cluster.refreshMetadata([]);
  const seen = new Map<string, GroupListing>();
  const statesFilter = [...(options.states ?? [])];
  const typesFilter = [...(options.types ?? [])];
  for (const id of md.brokers.keys()) {
    const conn = await cluster.brokerConnection(id);
    // A filter the broker's version cannot carry would silently list every group: refuse, as Kafka's admin client does.
    const version = conn.versionFor(Api.ListGroups) ?? -1;
    if (typesFilter.length > 0 && version < 5) throw new UnsupportedApiError(`broker ${id} cannot filter groups by type (ListGroups v${version} < v5)`);
    if (statesFilter.length > 0 && version < 4) throw new UnsupportedApiError(`broker ${id} cannot filter groups by state (ListGroups v${version} < v4)`);
    const resp = await conn.send(Api.ListGroups, { statesFilter, typesFilter });
    if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, `listing groups on broker ${id} failed`);
    for (const g of resp.groups) {
      seen.set(g.groupId, { groupId: g.groupId, protocolType: g.protocolType, state: g.groupState, ...(g.groupType ? { type: g.groupType } : {}) });
    }
  }
  return [...seen.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
}

export async function describeGroups(cluster: Cluster, ids: readonly string[]): Promise<GroupDescription[]> {
  const out: GroupDescription[] = [];
  for (const groupId of ids) {
    const resp = await sendToCoordinator(
      cluster,
      groupId,
      Api.DescribeGroups,
      { groups: [groupId], includeAuthorizedOperations: false },
      (r) => r.groups[0]?.errorCode ?? 0,
    );
    const coordinator = await coordinatorOf(cluster, groupId);
    for (const g of resp.groups) {
      out.push({
        type: 'Classic',
        groupId: g.groupId,
        errorCode: g.errorCode,
        state: g.groupState,
        protocolType: g.protocolType,
        protocol: g.protocolData,
        coordinator,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          assignment: g.protocolType === 'consumer' ? safeDecodeAssignment(m.memberAssignment) : [],
        })),
      });
    }
  }
  return out;
}

/**
 * Describes groups of either protocol, as Kafka 4's admin describeConsumerGroups does: by
 * ConsumerGroupDescribe first; a group it does not know as a consumer group (GROUP_ID_NOT_FOUND),
 * or a coordinator without the API (brokers before 4.0), is described by DescribeGroups.
 */
export async function describeConsumerGroups(cluster: Cluster, ids: readonly string[]): Promise<GroupDescription[]> {
  const out: GroupDescription[] = [];
  for (const groupId of ids) {
    const consumer = await describeConsumerGroup(cluster, groupId);
    out.push(...(consumer ? [consumer] : await describeGroups(cluster, [groupId])));
  }
  return out;
}

/** One group by ConsumerGroupDescribe; null when it is to be described as a classic group. */
async function describeConsumerGroup(cluster: Cluster, groupId: string): Promise<GroupDescription | null> {
  if (!(await findCoordinator(cluster, groupId)).supports(Api.ConsumerGroupDescribe)) return null;
  const resp = await sendToCoordinator(
    cluster,
    groupId,
    Api.ConsumerGroupDescribe,
    { groupIds: [groupId], includeAuthorizedOperations: false },
    (r) => r.groups[0]?.errorCode ?? 0,
  );
  const g = resp.groups[0];
  if (!g || g.errorCode === GROUP_ID_NOT_FOUND) return null;
  const partitionsOf = (a: { topicPartitions: { topicName: string; partitions: number[] }[] }): TopicPartition[] =>
    a.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition })));
  return {
    type: 'Consumer',
    groupId: g.groupId,
    errorCode: g.errorCode,
    state: g.groupState,
    protocolType: 'consumer',
    protocol: g.assignorName,
    coordinator: await coordinatorOf(cluster, groupId),
    groupEpoch: g.groupEpoch,
    targetAssignmentEpoch: g.assignmentEpoch,
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      assignment: partitionsOf(m.assignment),
      memberEpoch: m.memberEpoch,
      targetAssignment: partitionsOf(m.targetAssignment),
    })),
  };
}

function safeDecodeAssignment(buf: Buffer): TopicPartition[] {
  try {
    return decodeAssignment(buf);
  } catch {
    return [];
  }
}

export async function deleteGroups(cluster: Cluster, ids: readonly string[]): Promise<Map<string, KafkaError | null>> {
  const out = new Map<string, KafkaError | null>();
  for (const groupId of ids) {
    const resp = await sendToCoordinator(cluster, groupId, Api.DeleteGroups, { groupsNames: [groupId] }, (r) => r.results[0]?.errorCode ?? 0);
    for (const r of resp.results) out.set(r.groupId, r.errorCode === 0 ? null : new KafkaError(r.errorCode));
  }
  return out;
}

/** Committed offsets of a group: topic → partition → offset (-1 none). */
export async function listGroupOffsets(
  cluster: Cluster,
  groupId: string,
  partitions: readonly TopicPartition[] | null,
): Promise<Map<string, Map<number, { offset: bigint; metadata: string | null }>>> {
  return fetchCommittedOffsets(cluster, groupId, partitions);
}

export async function alterGroupOffsets(
  cluster: Cluster,
  groupId: string,
  offsets: readonly { topic: string; partition: number; offset: bigint }[],
): Promise<void> {
  await commitOffsets(
    cluster,
    { groupId, generationId: -1, memberId: '' },
    offsets.map((o) => [{ topic: o.topic, partition: o.partition }, { offset: o.offset }]),
  );
}

export async function deleteGroupOffsets(cluster: Cluster, groupId: string, partitions: readonly TopicPartition[]): Promise<Map<string, KafkaError | null>> {
  const topics = new Map<string, number[]>();
  for (const tp of partitions) topics.set(tp.topic, [...(topics.get(tp.topic) ?? []), tp.partition]);
  const resp = await sendToCoordinator(
    cluster,
    groupId,
    Api.OffsetDelete,
    { groupId, topics: [...topics].map(([name, ps]) => ({ name, partitions: ps.map((partitionIndex) => ({ partitionIndex })) })) },
    (r) => r.errorCode,
  );
  if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, `deleting offsets of group ${groupId} failed`);
  const out = new Map<string, KafkaError | null>();
  for (const t of resp.topics) for (const p of t.partitions) out.set(`${t.name}-${p.partitionIndex}`, p.errorCode === 0 ? null : new KafkaError(p.errorCode));
  return out;
}
