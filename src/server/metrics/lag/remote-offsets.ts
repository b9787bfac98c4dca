/**
 * What the consumer-lag refresh asks of partitions led by other brokers, over the inter-broker
 * listener (BrokerConnections, as the transaction markers and leader readiness ask): the log end
 * offset (ListOffsets latest, read_uncommitted: the high watermark, as kafka-exporter reads it)
 * and the timestamp of the record at an offset (a Fetch from that offset with a small partition
 * limit: the first batch, or its head; record-timestamp.ts finds the record). One request per
 * leader and chunk; the caller runs leaders in parallel and bounds the total.
 */
import { Api } from '../../../client/apis.js';
import type { BrokerConnections } from '../../../client/broker-connections.js';
import { ErrorCode } from '../../../protocol/errors.js';
import { timestampAtOffset } from './record-timestamp.js';

export interface PartitionRef {
  topic: string;
  partition: number;
}

export interface OffsetAt extends PartitionRef {
  offset: number;
}

/** A partition's share of a timestamp Fetch: enough for a batch header and, usually, the batch. */
const PARTITION_MAX_BYTES = 16 << 10;
/** A Fetch answer's cap: the partitions of one chunk times their share, and a little more. */
const FETCH_MAX_BYTES = 4 << 20;
/** Partitions per request: a dead or slow leader costs one timeout per chunk, not per partition. */
export const CHUNK = 200;

function byTopic<T extends PartitionRef>(refs: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of refs) {
    const list = out.get(r.topic);
    if (list) list.push(r);
    else out.set(r.topic, [r]);
  }
  return out;
}

export class RemoteOffsets {
  constructor(
    private readonly connections: BrokerConnections,
    private readonly timeoutMs: number,
  ) {}

  /** Log end offsets (high watermarks) of `refs`, all led by `leader`; partitions answered with an error are left out. */
  async endOffsets(leader: number, refs: readonly PartitionRef[], found: (ref: PartitionRef, end: number) => void): Promise<void> {
    const conn = await this.connections.connection(leader);
    const version = conn.versionFor(Api.ListOffsets);
    if (version === null) return;
    for (let i = 0; i < refs.length; i += CHUNK * 5) {
      const topics = byTopic(refs.slice(i, i + CHUNK * 5));
      const resp = await this.connections.send(
        leader,
        conn,
        Api.ListOffsets,
        {
          replicaId: -1,
          isolationLevel: 0,
          timeoutMs: this.timeoutMs,
          topics: [...topics].map(([name, ps]) => ({
            name,
            partitions: ps.map((p) => ({ partitionIndex: p.partition, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 })),
          })),
        },
        version,
        this.timeoutMs,
      );
      for (const t of resp.topics) {
        for (const p of t.partitions) {
          if (p.errorCode !== ErrorCode.NONE) continue;
          const offset = p.oldStyleOffsets.length > 0 ? p.oldStyleOffsets[0]! : p.offset;
          found({ topic: t.name, partition: p.partitionIndex }, Number(offset));
        }
      }
    }
  }

  /** Timestamps of the records at `wanted` (each partition at most once), all led by `leader`. */
  async timestamps(leader: number, wanted: readonly OffsetAt[], found: (at: OffsetAt, timestampMs: number) => void): Promise<void> {
    const conn = await this.connections.connection(leader);
    const version = conn.versionFor(Api.Fetch);
    if (version === null) return;
    for (let i = 0; i < wanted.length; i += CHUNK) {
      const chunk = wanted.slice(i, i + CHUNK);
      const asked = new Map(chunk.map((w) => [`${w.topic}\0${w.partition}`, w]));
      const resp = await this.connections.send(
        leader,
        conn,
        Api.Fetch,
        {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: FETCH_MAX_BYTES,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [...byTopic(chunk)].map(([topic, ws]) => ({
            topic,
            partitions: ws.map((w) => ({
              partition: w.partition,
              currentLeaderEpoch: -1,
              fetchOffset: BigInt(w.offset),
              logStartOffset: -1n,
              partitionMaxBytes: PARTITION_MAX_BYTES,
            })),
          })),
          forgottenTopicsData: [],
          rackId: '',
        },
        version,
        this.timeoutMs,
      );
      for (const t of resp.responses) {
        for (const p of t.partitions) {
          const w = asked.get(`${t.topic}\0${p.partitionIndex}`);
          if (!w || p.errorCode !== ErrorCode.NONE || !p.records) continue;
          const ts = await timestampAtOffset(p.records, w.offset).catch(() => undefined);
          if (ts !== undefined) found(w, ts);
        }
      }
    }
  }
}
