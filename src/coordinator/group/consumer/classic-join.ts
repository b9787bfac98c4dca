/**
 * A classic JoinGroup for the id of a consumer group (KIP-848), as Kafka 4 answers it: an empty
 * consumer group is deleted (tombstones) and the classic group takes its place, its committed
 * offsets kept; one with members takes the member in as a classic member
 * (classic-member-in-consumer-group.ts). Fjord refuses a member the group does not know yet with
 * INCONSISTENT_GROUP_PROTOCOL when group.consumer.migration.policy is `disabled`, so such a
 * group never mixes protocols.
 */
import { ErrorCode } from '../../../protocol/errors.js';
import type { OperationResult } from '../../runtime/types.js';
import { type JoinOutcome, joinError } from '../classic-group.js';
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import { type ClassicJoin, classicJoinToConsumerGroup } from './classic-member-in-consumer-group.js';
import { groupTombstones } from './consumer-replay.js';

type Result = OperationResult<Promise<JoinOutcome>, CoordinatorRecord>;

export function classicJoinOverConsumerGroup(shard: GroupShardState, req: ClassicJoin, now: number, join: () => Result): Result {
  const g = shard.consumerGroups.get(req.groupId);
  if (!g) return join();
  if (g.members.size > 0) {
    const refuse = (code: number): Result => ({ records: [], response: Promise.resolve(joinError(code, req.memberId)) });
    const cfg = shard.config;
    if (req.sessionTimeoutMs < cfg.minSessionTimeoutMs || req.sessionTimeoutMs > cfg.maxSessionTimeoutMs) return refuse(ErrorCode.INVALID_SESSION_TIMEOUT);
    const known = g.members.has(req.memberId) || (req.groupInstanceId !== null && g.memberByInstance(req.groupInstanceId) !== undefined);
    if (!known && shard.consumerEnv.settings.migrationPolicy === 'disabled') return refuse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    return classicJoinToConsumerGroup(shard, g, req, now);
  }
  const tombstones = groupTombstones(g);
  const joined = join();
  return { ...joined, records: [...tombstones, ...joined.records] };
}
