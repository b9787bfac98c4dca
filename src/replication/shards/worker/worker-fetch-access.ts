/**
 * How WorkerShards reads and parks for a Fetch across shards (cross-shard-fetch.ts): one shard's
 * part of a Fetch over its channel, and a long poll parked on one shard whose progress messages
 * reach the caller until the shard's last word. Apart from worker-shards.ts to keep that file's
 * room to the shards' lifecycle and the seam's calls.
 */
import { ErrorCode } from '../../../protocol/errors.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';
import { bufferOf, type HandoverStats } from './records-handover.js';
import type { FetchShardsAccess, ParkedPart, ShardPark } from './cross-shard-fetch.js';
import type { ShardChannel } from './shard-channels.js';
import type { FromShard, ToShard } from './shard-protocol.js';

export interface WorkerFetchDeps {
  readonly shards: readonly ShardChannel[];
  /** Sends a message that expects one answer (undefined when the shard ended first). */
  call(shard: ShardChannel, message: Extract<ToShard, { type: 'fetch' }>): Promise<FromShard | undefined>;
  /** The next message id, shared with every other call on the channels. */
  nextId(): number;
  /** A restarted worker still opening its logs takes no park. */
  isOpening(shard: number): boolean;
  shardOf(topic: string, partition: number): number;
  readonly stats: HandoverStats;
}

export function workerFetchAccess(d: WorkerFetchDeps): FetchShardsAccess {
  return {
    shardOf: (topic, partition) => d.shardOf(topic, partition),
    read: (s, targets, params) => readShard(d, s, targets, params),
    park: (s, parts, minBytes, maxWaitMs, replicaId, counted) => parkOnShard(d, s, parts, minBytes, maxWaitMs, replicaId, counted),
    stats: d.stats,
  };
}

/** One shard's part of a Fetch: its answers in `targets` order (NOT_LEADER_OR_FOLLOWER from a shard that ended). */
async function readShard(d: WorkerFetchDeps, s: number, targets: FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]> {
  const answer = await d.call(d.shards[s]!, { type: 'fetch', id: d.nextId(), targets, params });
  return targets.map((_, k) => {
    const r = answer?.type === 'fetched' ? answer.results[k] : undefined;
    if (!r) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, records: null };
    d.stats.fetchBytesRead += r.records?.length ?? 0;
    return { ...r, records: bufferOf(r.records) };
  });
}

/** Parks a long poll on shard `s`: its 'fetchProgress' messages reach `counted` until its 'fetchWaited' (or its end). */
function parkOnShard(
  d: WorkerFetchDeps,
  s: number,
  parts: ParkedPart[],
  minBytes: number,
  maxWaitMs: number,
  replicaId: number,
  counted: (bytes: number) => void,
): ShardPark {
  const shard = d.shards[s]!;
  const id = d.nextId();
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  if (!shard.alive || d.isOpening(s)) {
    end();
    return { ended, cancel: () => undefined };
  }
  // The channel forgets an id once it answers; progress is not the last word, so the handler puts itself back.
  const onMessage = (m: FromShard | undefined): void => {
    if (m?.type !== 'fetchProgress') {
      end();
      return;
    }
    shard.pending.set(id, onMessage);
    counted(m.bytes);
  };
  shard.pending.set(id, onMessage);
  d.stats.messages++;
  shard.send({ type: 'fetchWait', id, parts, minBytes, maxWaitMs, replicaId });
  return {
    ended,
    cancel: () => {
      if (shard.pending.delete(id)) shard.send({ type: 'fetchWaitEnd', id });
      end();
    },
  };
}
