/**
 * Message formatters of kafka-console-consumer, selected by Kafka's class names:
 * - kafka.tools.DefaultMessageFormatter (print.key/value/timestamp/partition/offset/headers),
 * - kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter: the classic
 *   `[group,topic,partition]::[OffsetMetadata[offset,metadata],CommitTime t,ExpirationTime t]`,
 * - org.apache.kafka.tools.consumer.OffsetsMessageFormatter: Kafka 3.x's JSON lines,
 * - NoOpMessageFormatter and LoggingMessageFormatter.
 * __consumer_offsets keys and values are an int16 version followed by the generated struct.
 */
import type { ConsumerRecord } from '../../client/index.js';
import { OffsetCommitKeyCodec, OffsetCommitValueCodec } from '../../protocol/coordinator-records/index.js';
import { Reader } from '../../protocol/primitives/index.js';
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

/** Kafka 3.x: {"key":{"type":1,"data":{...}},"value":{"version":3,"data":{...}}}. */
export function jsonOffsetsFormatter(): Formatter {
  return (r) => {
    const d = decodeOffsetCommit(r);
    if (!d) return null;
    const key = { type: d.keyVersion, data: { group: d.group, topic: d.topic, partition: d.partition } };
    let value: unknown = 'NULL';
    if (d.value) {
      const v = d.value;
      const data: Record<string, unknown> = { offset: Number(v.offset) };
      if (v.version >= 3) data.leaderEpoch = v.leaderEpoch;
      data.metadata = v.metadata;
      data.commitTimestamp = Number(v.commitTimestamp);
      if (v.version === 1) data.expireTimestamp = Number(v.expireTimestamp);
      value = { version: v.version, data };
    }
    return `${JSON.stringify({ key, value })}\n`;
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
    case 'OffsetsMessageFormatter':
      return n.startsWith('kafka.coordinator') ? classicOffsetsFormatter(ctx) : jsonOffsetsFormatter();
    case 'NoOpMessageFormatter':
      return () => null;
    case 'LoggingMessageFormatter':
      return (r) => `${defaultFormatter(ctx.props)(r)}`;
    default:
      throw new CliError(`unknown formatter "${n}" (DefaultMessageFormatter, GroupMetadataManager$OffsetsMessageFormatter, org.apache.kafka.tools.consumer.OffsetsMessageFormatter, NoOpMessageFormatter)`);
  }
}

/** Whether a formatter reads __consumer_offsets (the tool then needs the retention setting). */
export function needsRetention(name: string | undefined): boolean {
  return name !== undefined && name.includes('kafka.coordinator.group');
}
