/**
 * A classic JoinGroup for the id of a consumer group (KIP-848), as Kafka 4 answers it without an
 * online migration: an empty consumer group is deleted (tombstones) and the classic group takes
 * its place, its committed offsets kept; one with members refuses the join with
 * INCONSISTENT_GROUP_PROTOCOL.
 */
import type { OperationResult } from '../../runtime/types.js';
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import { groupTombstones } from './consumer-replay.js';

export function classicJoinOverConsumerGroup<T>(
  shard: GroupShardState,
  groupId: string,
  join: () => OperationResult<T, CoordinatorRecord>,
  refused: () => T,
): OperationResult<T, CoordinatorRecord> {
  const g = shard.consumerGroups.get(groupId);
  if (!g) return join();
  if (g.members.size > 0) return { records: [], response: refused() };
  const tombstones = groupTombstones(g);
  const joined = join();
  return { ...joined, records: [...tombstones, ...joined.records] };
}
