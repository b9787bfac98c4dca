/**
 * ListOffsets: the earliest (-2), latest (-1), max-timestamp (-3) offset of partitions, or the
 * first offset at/after a timestamp. Requests go to each partition's leader.
 */
import { Api } from './apis.js';
import { sleep, type Cluster } from './cluster.js';
import { KafkaError } from './errors.js';
import { isRetriable } from '../protocol/errors.js';

export const EARLIEST_TIMESTAMP = -2n;
export const LATEST_TIMESTAMP = -1n;
export const MAX_TIMESTAMP = -3n;

export interface OffsetQuery {
  topic: string;
  partition: number;
  /** -2 earliest, -1 latest, -3 max timestamp, else milliseconds. */
  timestamp: bigint;
}

export interface OffsetAnswer {
  topic: string;
  partition: number;
  offset: bigint;
  timestamp: bigint;
}

/** Answers in query order; offset -1 when no record matches the timestamp. */
export async function listOffsets(cluster: Cluster, queries: readonly OffsetQuery[], isolationLevel = 0): Promise<OffsetAnswer[]> {
  const deadline = Date.now() + cluster.requestTimeoutMs;
  for (;;) {
    try {
      return await listOnce(cluster, queries, isolationLevel);
    } catch (err) {
      const retriable = err instanceof KafkaError ? isRetriable(err.code) : true;
      if (!retriable || Date.now() + cluster.retryBackoffMs > deadline) throw err;
      cluster.invalidate();
      await sleep(cluster.retryBackoffMs);
    }
  }
}

async function listOnce(cluster: Cluster, queries: readonly OffsetQuery[], isolationLevel: number): Promise<OffsetAnswer[]> {
  await cluster.topicsMetadata([...new Set(queries.map((q) => q.topic))]);
  const byLeader = new Map<number, OffsetQuery[]>();
  for (const q of queries) {
    const leader = cluster.leaderFor(q.topic, q.partition);
    if (leader < 0) {
      const known = cluster.current.topics.get(q.topic);
      const code = known && known.errorCode === 0 && known.partitions.length > q.partition ? 5 : 3;
      throw new KafkaError(code, `no leader for ${q.topic}-${q.partition}`);
    }
    byLeader.set(leader, [...(byLeader.get(leader) ?? []), q]);
  }
  const answers = new Map<string, OffsetAnswer>();
  await Promise.all(
    [...byLeader].map(async ([leader, list]) => {
      const conn = await cluster.brokerConnection(leader);
      const topics = new Map<string, OffsetQuery[]>();
      for (const q of list) topics.set(q.topic, [...(topics.get(q.topic) ?? []), q]);
      const resp = await conn.send(Api.ListOffsets, {
        replicaId: -1,
        isolationLevel,
        timeoutMs: cluster.requestTimeoutMs,
        topics: [...topics].map(([name, qs]) => ({
          name,
          partitions: qs.map((q) => ({ partitionIndex: q.partition, currentLeaderEpoch: -1, timestamp: q.timestamp, maxNumOffsets: 1 })),
        })),
      });
      for (const t of resp.topics) {
        for (const p of t.partitions) {
          if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `listing offsets of ${t.name}-${p.partitionIndex} failed`);
          // v0 answers with a list of offsets instead of one.
          const offset = p.oldStyleOffsets.length > 0 ? p.oldStyleOffsets[0]! : p.offset;
          answers.set(`${t.name}:${p.partitionIndex}`, { topic: t.name, partition: p.partitionIndex, offset, timestamp: p.timestamp });
        }
      }
    }),
  );
  return queries.map((q) => {
    const a = answers.get(`${q.topic}:${q.partition}`);
    if (!a) throw new KafkaError(3, `no answer for ${q.topic}-${q.partition}`);
    return a;
  });
}
