/**
 * OffsetCommit and OffsetFetch against a consumer group (KIP-848), as Kafka 4 checks them: a
 * member commits and fetches with its current member epoch (OffsetCommit v9+ carries it in the
 * generation id field, OffsetFetch v9+ in MemberEpoch); a stale one is STALE_MEMBER_EPOCH, an
 * unknown member UNKNOWN_MEMBER_ID. Without an epoch (-1: admin tools, standalone consumers)
 * a commit is accepted only while the group has no members, and a fetch always. A member
 * speaking the classic protocol (KIP-848 migration) gives its epoch as its generation, with any
 * version, and a wrong one is ILLEGAL_GENERATION, as Kafka 4 answers classic members.
 */
import { ErrorCode } from '../../../protocol/errors.js';
import type { ConsumerGroup } from './consumer-group.js';

export function consumerGroupCommitError(g: ConsumerGroup, memberId: string, memberEpoch: number, apiVersion: number): number {
  if (memberEpoch < 0 && g.members.size === 0) return ErrorCode.NONE;
  const m = g.members.get(memberId);
  if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
  // A classic member (KIP-848 migration) commits with its member epoch as generation, any version.
  if (m.classic !== null) return memberEpoch === m.memberEpoch ? ErrorCode.NONE : ErrorCode.ILLEGAL_GENERATION;
  // Below v9 the field is a classic generation id: a consumer-protocol member must use v9+.
  if (apiVersion < 9) return ErrorCode.UNSUPPORTED_VERSION;
  return memberEpoch === m.memberEpoch ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
}

export function consumerGroupFetchError(g: ConsumerGroup, memberId: string | null, memberEpoch: number): number {
  if (memberEpoch < 0) return ErrorCode.NONE;
  const m = memberId === null ? undefined : g.members.get(memberId);
  if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
  if (m.classic !== null) return memberEpoch === m.memberEpoch ? ErrorCode.NONE : ErrorCode.ILLEGAL_GENERATION;
  return memberEpoch === m.memberEpoch ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
}

/**
 * TxnOffsetCommit to a consumer group: without member information (v0-v2, or -1) it is not
 * checked; otherwise the member must exist at that epoch (ILLEGAL_GENERATION: the code the
 * transactional APIs carry).
 */
export function consumerGroupTxnCommitError(g: ConsumerGroup, memberId: string, memberEpoch: number): number {
  if (memberEpoch < 0) return ErrorCode.NONE;
  const m = g.members.get(memberId);
  if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
  return memberEpoch === m.memberEpoch ? ErrorCode.NONE : ErrorCode.ILLEGAL_GENERATION;
}
