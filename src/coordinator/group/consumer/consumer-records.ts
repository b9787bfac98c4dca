/**
 * The consumer group (KIP-848) records of `__consumer_offsets`, in Kafka 4's binary form: key =
 * int16 key version (3 group metadata, 4 partition metadata, 5 member metadata, 6 target
 * assignment metadata, 7 target assignment of a member, 8 current assignment of a member) + key
 * struct; value = int16 value version (0) + value struct; a null value is a tombstone.
 */
import { Reader, Writer } from '../../../protocol/primitives/index.js';
import type { MessageCodec } from '../../../protocol/primitives/index.js';
import {
  ConsumerGroupCurrentMemberAssignmentKeyCodec,
  ConsumerGroupCurrentMemberAssignmentValueCodec,
  ConsumerGroupMemberMetadataKeyCodec,
  ConsumerGroupMemberMetadataValueCodec,
  ConsumerGroupMetadataKeyCodec,
  ConsumerGroupMetadataValueCodec,
  ConsumerGroupPartitionMetadataKeyCodec,
  ConsumerGroupPartitionMetadataValueCodec,
  ConsumerGroupTargetAssignmentMemberKeyCodec,
  ConsumerGroupTargetAssignmentMemberValueCodec,
  ConsumerGroupTargetAssignmentMetadataKeyCodec,
  ConsumerGroupTargetAssignmentMetadataValueCodec,
  type ConsumerGroupCurrentMemberAssignmentValue,
  type ConsumerGroupMemberMetadataValue,
  type ConsumerGroupMetadataValue,
  type ConsumerGroupPartitionMetadataValue,
  type ConsumerGroupTargetAssignmentMemberValue,
  type ConsumerGroupTargetAssignmentMetadataValue,
} from '../../../protocol/coordinator-records/index.js';

export interface CgMetadataRecord {
  type: 'cg-metadata';
  group: string;
  value: ConsumerGroupMetadataValue | null;
}
export interface CgPartitionMetadataRecord {
  type: 'cg-partition-metadata';
  group: string;
  value: ConsumerGroupPartitionMetadataValue | null;
}
export interface CgMemberRecord {
  type: 'cg-member';
  group: string;
  memberId: string;
  value: ConsumerGroupMemberMetadataValue | null;
}
export interface CgTargetMetadataRecord {
  type: 'cg-target-metadata';
  group: string;
  value: ConsumerGroupTargetAssignmentMetadataValue | null;
}
export interface CgTargetMemberRecord {
  type: 'cg-target-member';
  group: string;
  memberId: string;
  value: ConsumerGroupTargetAssignmentMemberValue | null;
}
export interface CgCurrentAssignmentRecord {
  type: 'cg-current-assignment';
  group: string;
  memberId: string;
  value: ConsumerGroupCurrentMemberAssignmentValue | null;
}

export type ConsumerGroupRecord =
  | CgMetadataRecord
  | CgPartitionMetadataRecord
  | CgMemberRecord
  | CgTargetMetadataRecord
  | CgTargetMemberRecord
  | CgCurrentAssignmentRecord;

interface KeyShape {
  groupId: string;
  memberId?: string;
}

/** Per record type: its key version and the codecs of its key and value. */
type AnyCodec = MessageCodec<object>;
const TABLE: Record<ConsumerGroupRecord['type'], { keyVersion: number; key: AnyCodec; value: AnyCodec }> = {
  'cg-metadata': { keyVersion: 3, key: ConsumerGroupMetadataKeyCodec, value: ConsumerGroupMetadataValueCodec },
  'cg-partition-metadata': { keyVersion: 4, key: ConsumerGroupPartitionMetadataKeyCodec, value: ConsumerGroupPartitionMetadataValueCodec },
  'cg-member': { keyVersion: 5, key: ConsumerGroupMemberMetadataKeyCodec, value: ConsumerGroupMemberMetadataValueCodec },
  'cg-target-metadata': { keyVersion: 6, key: ConsumerGroupTargetAssignmentMetadataKeyCodec, value: ConsumerGroupTargetAssignmentMetadataValueCodec },
  'cg-target-member': { keyVersion: 7, key: ConsumerGroupTargetAssignmentMemberKeyCodec, value: ConsumerGroupTargetAssignmentMemberValueCodec },
  'cg-current-assignment': { keyVersion: 8, key: ConsumerGroupCurrentMemberAssignmentKeyCodec, value: ConsumerGroupCurrentMemberAssignmentValueCodec },
};
const BY_KEY_VERSION = new Map(Object.entries(TABLE).map(([type, e]) => [e.keyVersion, type as ConsumerGroupRecord['type']]));

export const isConsumerGroupKeyVersion = (v: number): boolean => BY_KEY_VERSION.has(v);

export function encodeConsumerGroupRecord(r: ConsumerGroupRecord): { key: Buffer; value: Buffer | null } {
  const e = TABLE[r.type];
  const kw = new Writer(64);
  kw.int16(e.keyVersion);
  const key: KeyShape = 'memberId' in r ? { groupId: r.group, memberId: r.memberId } : { groupId: r.group };
  e.key.write(kw, key as object, e.keyVersion);
  if (r.value === null) return { key: Buffer.from(kw.result()), value: null };
  const vw = new Writer(128);
  vw.int16(0);
  e.value.write(vw, r.value, 0);
  return { key: Buffer.from(kw.result()), value: Buffer.from(vw.result()) };
}

/** Decodes a record whose key version `keyVersion` (already read from `kr`) is a consumer group's. */
export function decodeConsumerGroupRecord(keyVersion: number, kr: Reader, value: Buffer | null): ConsumerGroupRecord | null {
  const type = BY_KEY_VERSION.get(keyVersion);
  if (type === undefined) return null;
  const e = TABLE[type];
  const k = e.key.read(kr, keyVersion) as KeyShape;
  let v: unknown = null;
  if (value !== null) {
    const vr = new Reader(value);
    const vv = vr.int16();
    v = e.value.read(vr, Math.min(vv, e.value.maxVersion));
  }
  const withMember = type === 'cg-member' || type === 'cg-target-member' || type === 'cg-current-assignment';
  return (withMember ? { type, group: k.groupId, memberId: k.memberId ?? '', value: v } : { type, group: k.groupId, value: v }) as ConsumerGroupRecord;
}
