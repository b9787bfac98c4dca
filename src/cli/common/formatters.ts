/**
 * Message formatters of kafka-console-consumer, selected by Kafka's class names:
 * - kafka.tools.DefaultMessageFormatter (print.key/value/timestamp/partition/offset/headers),
 * - kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter: the classic
 *   `[group,topic,partition]::[OffsetMetadata[offset,metadata],CommitTime t,ExpirationTime t]`,
 * - kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter: the classic
 *   `group::GroupMetadata(...)` lines,
 * - org.apache.kafka.tools.consumer.OffsetsMessageFormatter and GroupMetadataMessageFormatter
 *   (also under kafka.tools.): Kafka 3.9's JSON lines,
 * - org.apache.kafka.tools.consumer.TransactionLogMessageFormatter (Kafka 3.9's JSON lines for
 *   __transaction_state) and the classic kafka.coordinator.transaction.TransactionLog$
 *   TransactionLogMessageFormatter (`id::TransactionMetadata(...)`),
 * - NoOpMessageFormatter and LoggingMessageFormatter.
 * __consumer_offsets keys and values are an int16 version followed by the generated struct.
 */
import type { ConsumerRecord } from '../../client/index.js';
import {
  GroupMetadataKeyCodec,
  GroupMetadataValueCodec,
  OffsetCommitKeyCodec,
  OffsetCommitValueCodec,
  type GroupMetadataValue,
} from '../../protocol/coordinator-records/index.js';
import { Reader } from '../../protocol/primitives/index.js';
import { decodeTransactionLog } from '../../protocol/transaction-log-json.js';
import { CliError } from './tool.js';

export type Formatter = (r: ConsumerRecord) => string | null;

export interface FormatterContext {
  props: Map<string, string>;
  /** offsets.retention.ms of the broker, for commits stored without an expiration. */
  offsetsRetentionMs: number;
}

const unescapeSep = (s: string): string => s.replace(/\\t/g, '\t').replace(/\\n/g, '\n').replace(/\\r/g, '\r');

export function defaultFormatter(props: Map<string, string>): Formatter {
  const on = (k: string, dflt = false) => (props.has(k) ? props.get(k)!.trim().toLowerCase() === 'true' : dflt);
  const printTimestamp = on('print.timestamp');
  const printPartition = on('print.partition');
  const printOffset = on('print.offset');
  const printHeaders = on('print.headers');
  const printKey = on('print.key');
  const printValue = on('print.value', true);
  const keySep = unescapeSep(props.get('key.separator') ?? '\t');
  const lineSep = unescapeSep(props.get('line.separator') ?? '\n');
  const headersSep = unescapeSep(props.get('headers.separator') ?? ',');
  const nullLiteral = props.get('null.literal') ?? 'null';
  const text = (b: Buffer | null): string => (b === null ? nullLiteral : b.toString('utf8'));
  return (r) => {
    const cols: string[] = [];
    if (printTimestamp) cols.push(r.timestamp >= 0n ? `${r.timestampType}:${r.timestamp}` : 'NO_TIMESTAMP');
    if (printPartition) cols.push(`Partition:${r.partition}`);
    if (printOffset) cols.push(`Offset:${r.offset}`);
    if (printHeaders) cols.push(r.headers.length === 0 ? 'NO_HEADERS' : r.headers.map((h) => `${h.key}:${text(h.value)}`).join(headersSep));
    if (printKey) cols.push(text(r.key));
    if (printValue) cols.push(text(r.value));
    // Kafka ends the line only after the value; with print.value=false the last column ends it.
    return cols.join(keySep) + lineSep;
  };
}

interface DecodedOffsetCommit {
  keyVersion: number;
  group: string;
  topic: string;
  partition: number;
  value: { version: number; offset: bigint; leaderEpoch: number; metadata: string; commitTimestamp: bigint; expireTimestamp: bigint } | null;
}

/** Null for records that are not offset commits (group metadata, unknown versions). */
export function decodeOffsetCommit(r: ConsumerRecord): DecodedOffsetCommit | null {
  if (!r.key || r.key.length < 2) return null;
  const keyVersion = r.key.readInt16BE(0);
  if (keyVersion !== 0 && keyVersion !== 1) return null;
  const k = OffsetCommitKeyCodec.read(new Reader(r.key, 2), keyVersion);
  if (!r.value) return { keyVersion, group: k.group, topic: k.topic, partition: k.partition, value: null };
  const version = r.value.readInt16BE(0);
  const v = OffsetCommitValueCodec.read(new Reader(r.value, 2), Math.min(version, OffsetCommitValueCodec.maxVersion));
  return { keyVersion, group: k.group, topic: k.topic, partition: k.partition, value: { version, ...v } };
}

/**
 * The seed's format. Commits made with the current protocol carry no expiration of their own
 * (Kafka 2.1+ expires them relative to when the group empties); for those the line shows
 * CommitTime + offsets.retention, the time the commit expires once the group is gone, which is
 * what older brokers stored.
 */
export function classicOffsetsFormatter(ctx: FormatterContext): Formatter {
  return (r) => {
    const d = decodeOffsetCommit(r);
    if (!d) return null;
    const head = `[${d.group},${d.topic},${d.partition}]::`;
    if (!d.value) return `${head}NULL\n`;
    const v = d.value;
    const expire = v.expireTimestamp >= 0n ? v.expireTimestamp : v.commitTimestamp + BigInt(ctx.offsetsRetentionMs);
    const metadata = v.metadata.length > 0 ? v.metadata : 'NO_METADATA';
    return `${head}[OffsetMetadata[${v.offset},${metadata}],CommitTime ${v.commitTimestamp},ExpirationTime ${expire}]\n`;
  };
}

type Json = Record<string, unknown>;

/** The OffsetCommitValue fields a version carries, as Kafka's generated JSON converter writes them. */
function offsetValueJson(v: NonNullable<DecodedOffsetCommit['value']>): Json {
  const data: Json = { offset: Number(v.offset) };
  if (v.version >= 3) data.leaderEpoch = v.leaderEpoch;
  data.metadata = v.metadata;
  data.commitTimestamp = Number(v.commitTimestamp);
  if (v.version === 1) data.expireTimestamp = Number(v.expireTimestamp);
  return data;
}

/** The GroupMetadataValue fields a version carries (bytes as base64, as Jackson writes them). */
function groupValueJson(version: number, v: GroupMetadataValue): Json {
  const data: Json = { protocolType: v.protocolType, generation: v.generation, protocol: v.protocol, leader: v.leader };
  if (version >= 2) data.currentStateTimestamp = Number(v.currentStateTimestamp);
  data.members = v.members.map((m) => {
    const j: Json = { memberId: m.memberId };
    if (version >= 3) j.groupInstanceId = m.groupInstanceId;
    j.clientId = m.clientId;
    j.clientHost = m.clientHost;
    if (version >= 1) j.rebalanceTimeout = m.rebalanceTimeout;
    j.sessionTimeout = m.sessionTimeout;
    j.subscription = m.subscription.toString('base64');
    j.assignment = m.assignment.toString('base64');
    return j;
  });
  return data;
}

type RecordKind = 'offset' | 'group';

/**
 * Kafka 3.9's ApiMessageFormatter: `{"key":{"version":k,"data":{..}},"value":{"version":v,
 * "data":{..}}}`, a tombstone's value as null, "unknown" for versions it cannot read, and records
 * of the other kind skipped. Kafka writes no line separator after it; Fjord ends each with a
 * newline so the output is one record per line.
 */
function apiMessageFormatter(kind: RecordKind): Formatter {
  return (r) => {
    if (!r.key || r.key.length < 2) return null;
    const keyVersion = r.key.readInt16BE(0);
    let keyData: unknown = 'unknown';
    if (keyVersion === 0 || keyVersion === 1) {
      if (kind !== 'offset') return null;
      const k = OffsetCommitKeyCodec.read(new Reader(r.key, 2), keyVersion);
      keyData = { group: k.group, topic: k.topic, partition: k.partition };
    } else if (keyVersion === 2) {
      if (kind !== 'group') return null;
      keyData = { group: GroupMetadataKeyCodec.read(new Reader(r.key, 2), keyVersion).group };
    }
    let value: unknown = null;
    if (r.value && r.value.length >= 2) {
      const version = r.value.readInt16BE(0);
      let data: unknown = 'unknown';
      if (kind === 'offset' && version >= 0 && version <= OffsetCommitValueCodec.maxVersion) {
        const v = OffsetCommitValueCodec.read(new Reader(r.value, 2), version);
        data = offsetValueJson({ version, ...v });
      } else if (kind === 'group' && version >= 0 && version <= GroupMetadataValueCodec.maxVersion) {
        data = groupValueJson(version, GroupMetadataValueCodec.read(new Reader(r.value, 2), version));
      }
      value = { version, data };
    }
    return `${JSON.stringify({ key: { version: keyVersion, data: keyData }, value })}\n`;
  };
}

/**
 * Kafka 3.9's TransactionLogMessageFormatter: `{"key":{"version":0,"data":{"transactionalId":..}},
 * "value":{"version":0,"data":{..}}}`; a null key or a tombstone's value is null, a version it
 * cannot read has data "unknown". Ended with a newline, as the JSON group formatters here.
 */
export function transactionLogFormatter(): Formatter {
  return (r) => {
    const d = decodeTransactionLog(r.key, r.value);
    return `${JSON.stringify({ key: d.key, value: d.value })}\n`;
  };
}

/** Kafka's TransactionState names by id (TransactionState.fromId). */
const TXN_STATES = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];

/**
 * The classic TransactionLog$TransactionLogMessageFormatter: `id::` and the TransactionMetadata it
 * reads (Kafka's toString: partitions as a Scala 2.13 HashSet of topic-partition, in stored
 * order; none for an Empty transaction), or `id::NULL` for a tombstone. Records whose key
 * version it cannot read are skipped.
 */
export function classicTransactionLogFormatter(): Formatter {
  return (r) => {
    const d = decodeTransactionLog(r.key, r.value);
    if (!d.key || d.key.data === 'unknown') return null;
    const id = d.key.data.transactionalId;
    const v = d.raw;
    if (!v) return `${id}::NULL\n`;
    const state = TXN_STATES[v.transactionStatus] ?? `Unknown(${v.transactionStatus})`;
    const partitions = state === 'Empty' ? [] : (v.transactionPartitions ?? []).flatMap((p) => p.partitionIds.map((i) => `${p.topic}-${i}`));
    return (
      `${id}::TransactionMetadata(transactionalId=${id}, producerId=${v.producerId}, producerEpoch=${v.producerEpoch}, ` +
      `txnTimeoutMs=${v.transactionTimeoutMs}, state=${state}, pendingState=None, topicPartitions=HashSet(${partitions.join(', ')}), ` +
      `txnStartTimestamp=${v.transactionStartTimestampMs}, txnLastUpdateTimestamp=${v.transactionLastUpdateTimestampMs})\n`
    );
  };
}

/** Scala's Option and collection forms, as the classic formatter's toString prints them. */
const scalaOption = (s: string | null): string => (s === null ? 'None' : `Some(${s})`);

/**
 * The classic GroupMetadataManager$GroupMetadataMessageFormatter: `group::GroupMetadata(groupId=g,
 * generation=n, protocolType=Some(consumer), currentState=Stable, members=HashMap(id ->
 * MemberMetadata(...)))`, or `group::NULL` for a tombstone.
 */
export function classicGroupMetadataFormatter(): Formatter {
  return (r) => {
    if (!r.key || r.key.length < 2 || r.key.readInt16BE(0) !== 2) return null;
    const group = GroupMetadataKeyCodec.read(new Reader(r.key, 2), 2).group;
    if (!r.value) return `${group}::NULL\n`;
    const version = Math.min(r.value.readInt16BE(0), GroupMetadataValueCodec.maxVersion);
    const v = GroupMetadataValueCodec.read(new Reader(r.value, 2), version);
    const members = v.members.map(
      (m) =>
        `${m.memberId} -> MemberMetadata(memberId=${m.memberId}, groupInstanceId=${scalaOption(m.groupInstanceId)}, clientId=${m.clientId}, ` +
        `clientHost=${m.clientHost}, sessionTimeoutMs=${m.sessionTimeout}, rebalanceTimeoutMs=${m.rebalanceTimeout}, ` +
        `supportedProtocols=List(${v.protocol ?? ''}))`,
    );
    const state = v.members.length === 0 ? 'Empty' : 'Stable';
    return `${group}::GroupMetadata(groupId=${group}, generation=${v.generation}, protocolType=${scalaOption(v.protocolType)}, currentState=${state}, members=HashMap(${members.join(', ')}))\n`;
  };
}

export function formatterByName(name: string | undefined, ctx: FormatterContext): Formatter {
  const n = (name ?? 'kafka.tools.DefaultMessageFormatter').trim();
  const simple = n.slice(n.lastIndexOf('.') + 1);
  switch (simple) {
    case 'DefaultMessageFormatter':
      return defaultFormatter(ctx.props);
    case 'GroupMetadataManager$OffsetsMessageFormatter':
      return classicOffsetsFormatter(ctx);
    case 'GroupMetadataManager$GroupMetadataMessageFormatter':
      return classicGroupMetadataFormatter();
    // kafka.tools.* (Kafka 3.8) and org.apache.kafka.tools.consumer.* (3.9) print the JSON form.
    case 'OffsetsMessageFormatter':
      return n.startsWith('kafka.coordinator') ? classicOffsetsFormatter(ctx) : apiMessageFormatter('offset');
    case 'GroupMetadataMessageFormatter':
      return n.startsWith('kafka.coordinator') ? classicGroupMetadataFormatter() : apiMessageFormatter('group');
    case 'TransactionLog$TransactionLogMessageFormatter':
      return classicTransactionLogFormatter();
    case 'TransactionLogMessageFormatter':
      return n.startsWith('kafka.coordinator') ? classicTransactionLogFormatter() : transactionLogFormatter();
    case 'NoOpMessageFormatter':
      return () => null;
    case 'LoggingMessageFormatter':
      return (r) => `${defaultFormatter(ctx.props)(r)}`;
    default:
      throw new CliError(
        `unknown formatter "${n}" (DefaultMessageFormatter, GroupMetadataManager$OffsetsMessageFormatter, GroupMetadataManager$GroupMetadataMessageFormatter, ` +
          'org.apache.kafka.tools.consumer.OffsetsMessageFormatter, org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter, ' +
          'kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter, org.apache.kafka.tools.consumer.TransactionLogMessageFormatter, NoOpMessageFormatter)',
      );
  }
}

/** Whether a formatter reads __consumer_offsets (the tool then needs the retention setting). */
export function needsRetention(name: string | undefined): boolean {
  return name !== undefined && name.includes('kafka.coordinator.group');
}
