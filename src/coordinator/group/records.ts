/**
 * The records the group coordinator writes to `__consumer_offsets`, in Kafka's exact binary form
 * (key = int16 version + key struct, value = int16 version + value struct, tombstone = null
 * value), so Kafka's own formatters and lag monitors read Fjord's partitions.
 */
import { Reader, Writer } from '../../protocol/primitives/index.js';
import type { BatchContext } from '../runtime/types.js';
import {
  GroupMetadataKeyCodec,
  GroupMetadataValueCodec,
  OffsetCommitKeyCodec,
  OffsetCommitValueCodec,
  type GroupMetadataValue,
  type OffsetCommitValue,
} from '../../protocol/coordinator-records/index.js';
import { type ConsumerGroupRecord, decodeConsumerGroupRecord, encodeConsumerGroupRecord, isConsumerGroupKeyVersion } from './consumer/consumer-records.js';

/** Key versions 0 and 1 are offset commits, 2 is group metadata, 3-8 consumer groups (KIP-848); 9+ share groups. */
const OFFSET_COMMIT_KEY_VERSION = 1;
const GROUP_METADATA_KEY_VERSION = 2;
/** Kafka writes GroupMetadataValue v3 (static members) until v4's flexible form is required. */
export const GROUP_METADATA_VALUE_VERSION = 3;

export interface OffsetCommitRecord {
  type: 'offset';
  group: string;
  topic: string;
  partition: number;
  /** null: tombstone (offset deleted or expired). */
  value: OffsetCommitValue | null;
  /**
   * A transactional offset commit (TxnOffsetCommit) of this producer: pending until its
   * transaction's marker. Not part of the record's bytes: it is the batch's producer id.
   */
  producerId?: bigint;
}

export interface GroupMetadataRecord {
  type: 'group';
  group: string;
  /** null: tombstone (group deleted). */
  value: GroupMetadataValue | null;
}

export type CoordinatorRecord = OffsetCommitRecord | GroupMetadataRecord | ConsumerGroupRecord;

export interface EncodedRecord {
  key: Buffer;
  value: Buffer | null;
}

/**
 * Kafka's choice of value version: 1 when the commit carries an expire timestamp (old clients
 * with a retention time), otherwise 3 (with the leader epoch).
 */
export function offsetValueVersion(v: OffsetCommitValue): number {
  return v.expireTimestamp >= 0n ? 1 : 3;
}

export function encodeRecord(r: CoordinatorRecord): EncodedRecord {
  if (r.type !== 'offset' && r.type !== 'group') return encodeConsumerGroupRecord(r);
  const kw = new Writer(64);
  if (r.type === 'offset') {
    kw.int16(OFFSET_COMMIT_KEY_VERSION);
    OffsetCommitKeyCodec.write(kw, { group: r.group, topic: r.topic, partition: r.partition }, OFFSET_COMMIT_KEY_VERSION);
    if (r.value === null) return { key: Buffer.from(kw.result()), value: null };
    const version = offsetValueVersion(r.value);
    const vw = new Writer(64);
    vw.int16(version);
    OffsetCommitValueCodec.write(vw, r.value, version);
    return { key: Buffer.from(kw.result()), value: Buffer.from(vw.result()) };
  }
  kw.int16(GROUP_METADATA_KEY_VERSION);
  GroupMetadataKeyCodec.write(kw, { group: r.group }, GROUP_METADATA_KEY_VERSION);
  if (r.value === null) return { key: Buffer.from(kw.result()), value: null };
  const vw = new Writer(256);
  vw.int16(GROUP_METADATA_VALUE_VERSION);
  GroupMetadataValueCodec.write(vw, r.value, GROUP_METADATA_VALUE_VERSION);
  return { key: Buffer.from(kw.result()), value: Buffer.from(vw.result()) };
}

/**
 * Decodes one record of the offsets topic. Returns null for record types this coordinator does
 * not keep (newer group protocols), so replay skips them instead of failing the load.
 */
export function decodeRecord(key: Buffer, value: Buffer | null, batch?: BatchContext): CoordinatorRecord | null {
  const r = decodePlain(key, value);
  if (r !== null && r.type === 'offset' && batch?.isTransactional) return { ...r, producerId: batch.producerId };
  return r;
}

function decodePlain(key: Buffer, value: Buffer | null): CoordinatorRecord | null {
  const kr = new Reader(key);
  const keyVersion = kr.int16();
  if (keyVersion === 0 || keyVersion === 1) {
    const k = OffsetCommitKeyCodec.read(kr, keyVersion);
    if (value === null) return { type: 'offset', group: k.group, topic: k.topic, partition: k.partition, value: null };
    const vr = new Reader(value);
    const vv = vr.int16();
    return {
      type: 'offset',
      group: k.group,
      topic: k.topic,
      partition: k.partition,
      value: OffsetCommitValueCodec.read(vr, Math.min(vv, OffsetCommitValueCodec.maxVersion)),
    };
  }
  if (keyVersion === GROUP_METADATA_KEY_VERSION) {
    const k = GroupMetadataKeyCodec.read(kr, keyVersion);
    if (value === null) return { type: 'group', group: k.group, value: null };
    const vr = new Reader(value);
    const vv = vr.int16();
    return { type: 'group', group: k.group, value: GroupMetadataValueCodec.read(vr, Math.min(vv, GroupMetadataValueCodec.maxVersion)) };
  }
  if (isConsumerGroupKeyVersion(keyVersion)) return decodeConsumerGroupRecord(keyVersion, kr, value);
  return null;
}
