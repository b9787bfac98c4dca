/**
 * Member checks shared by SyncGroup, Heartbeat, OffsetCommit and LeaveGroup: is this member
 * (dynamic or static) part of the group, and is it the generation the group is at?
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { ClassicGroup, ClassicMember } from './classic-group.js';

export const UNKNOWN_MEMBER_ID = '';

/** Returns the member, or the error code that refuses the request. */
export function checkMember(g: ClassicGroup, memberId: string, groupInstanceId: string | null): ClassicMember | number {
  if (groupInstanceId !== null) {
    const registered = g.staticMembers.get(groupInstanceId);
    // Another process took over this instance id: the old one must stop (KIP-345).
    if (registered !== undefined && registered !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
  }
  return g.members.get(memberId) ?? ErrorCode.UNKNOWN_MEMBER_ID;
}

export function protocolsEqual(a: { name: string; metadata: Buffer }[], b: { name: string; metadata: Buffer }[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((p, i) => p.name === b[i]!.name && p.metadata.equals(b[i]!.metadata));
}
