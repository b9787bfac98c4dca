/**
 * How WorkerShards (worker-shards.ts) splits a request across shards and puts the answers
 * together: the parts of each shard, when a Fetch gathered from several has enough to answer,
 * what a part gets from a shard that failed or ended, the effective log configs sent with
 * topics to the shards, and the shards' log directories merged into one answer.
 */
import { ErrorCode } from '../../../protocol/errors.js';
import type { TopicInfo } from '../../../metadata/cluster-model.js';
import type { LogConfig } from '../../../storage/config.js';
import type { PartitionFetchResult } from '../../fetch/fetch-reader.js';
import type { AppendOutcome } from '../../append/leader-appends.js';
import type { FromShard } from './shard-protocol.js';
import type { LogDirState } from '../../../storage/manager/log-manager.js';

/** Indexes of `items` by the shard `shardOfItem` names, in item order. */
export function byShard<T>(items: readonly T[], shardOfItem: (item: T) => number): Map<number, number[]> {
  const out = new Map<number, number[]>();
  items.forEach((item, i) => {
    const s = shardOfItem(item);
    let list = out.get(s);
    if (!list) out.set(s, (list = []));
    list.push(i);
  });
  return out;
}

/** A Fetch answers once it has minBytes, or at once on any partition's error (as Kafka's delayed fetch completes). */
export function enoughToAnswer(results: readonly PartitionFetchResult[], minBytes: number): boolean {
  let bytes = 0;
  for (const r of results) {
    if (r.errorCode !== ErrorCode.NONE) return true;
    bytes += r.records?.length ?? 0;
  }
  return bytes >= Math.max(1, minBytes);
}

/** The topics' effective log configs by name (a topic whose stored overrides are invalid is left out: its shard logs it on sync). */
export function logConfigsOf(topics: readonly TopicInfo[], logConfigFor: (topic: string) => LogConfig | undefined): Record<string, LogConfig> {
  const out: Record<string, LogConfig> = {};
  for (const t of topics) {
    try {
      const cfg = logConfigFor(t.name);
      if (cfg) out[t.name] = cfg;
    } catch {
      // an invalid stored override: topicLogConfig in the shard reports it
    }
  }
  return out;
}

const NOT_LEADER: AppendOutcome = {
  errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  errorMessage: null,
  baseOffset: -1,
  logAppendTime: -1,
  logStartOffset: -1,
  recordErrors: [],
};

/** A metadata post's answer: throws what a shard failed with (one that ended answered nothing: not an error here). */
export function failedAs(m: FromShard | undefined): void {
  if (m?.type === 'failed') throw new Error(m.message);
}

/** A produce part's outcome when its shard failed it (UNKNOWN_SERVER_ERROR, with why) or ended (NOT_LEADER_OR_FOLLOWER: clients retry). */
export function failedOutcome(m: FromShard | undefined): AppendOutcome {
  return m?.type === 'failed' ? { ...NOT_LEADER, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: m.message } : NOT_LEADER;
}

/** Every shard's log directories as one list: each directory with every shard's logs in it, online when every shard has it online. */
export function mergedLogDirs(perShard: readonly (readonly LogDirState[])[]): LogDirState[] {
  const merged = new Map<string, LogDirState>();
  for (const d of perShard.flat()) {
    const seen = merged.get(d.dir);
    if (!seen) merged.set(d.dir, { ...d, logs: [...d.logs] });
    else {
      seen.logs.push(...d.logs);
      if (!d.online) Object.assign(seen, { online: false, error: d.error ?? seen.error });
    }
  }
  return [...merged.values()];
}
