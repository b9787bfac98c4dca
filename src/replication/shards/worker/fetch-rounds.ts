/**
 * A Fetch's reads in rounds, when its partitions' whole budgets exceed max_bytes
 * (cross-shard-fetch.ts says when and why). Each round gives the partitions still to read what
 * fetch-budget.ts's `roundAllowances` leaves them, in request order, and every shard reads its
 * part in parallel. A partition given its whole partition_max_bytes is done: one reader going
 * through the partitions in order would have read exactly that; so is the first one still to
 * read (all before it are done, none after it has read, so what is left is its). The others (the
 * one given what was left, those given nothing) go on in the next round with the bytes the round
 * did not use, from where their read ended, while records remain; a part read in two rounds is
 * joined. Each round finishes one partition at least, and the answer is one reader's whenever
 * the rounds reach the end of the budget or of the partitions; they stop early
 * when the budget left is smaller than every batch read so far (in a backlog the batches are
 * alike: a next round would read nothing), or after MAX_ROUNDS.
 */
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';
import { continueFrom, joined, roundAllowances, smallestBatch } from './fetch-budget.js';

/** Rounds of shard reads for one answer, at most (the first included). */
export const MAX_ROUNDS = 3;

/** What the rounds read through: one shard's read of its part, its results in that order. */
export type ShardRead = (shard: number, targets: FetchTarget[], params: FetchParams) => Promise<PartitionFetchResult[]>;

/** A partition still to read: its index in the request, where its read goes on, and what is left of its own budget. */
interface Pending {
  index: number;
  from: number;
  left: number;
}

/**
 * Reads `targets` into `out` within `params.maxBytes`; `shardOf` gives each target's shard. Only
 * the shard of the first partition still to read may take an oversized first batch, and only
 * until some partition has answered records.
 */
export async function readInRounds(
  targets: readonly FetchTarget[],
  params: FetchParams,
  shardOf: (index: number) => number,
  read: ShardRead,
  out: PartitionFetchResult[],
): Promise<void> {
  let pending: Pending[] = targets.map((t, index) => ({
    index,
    from: t.fetchOffset,
    left: t.presetError === undefined ? Math.max(0, t.partitionMaxBytes) : 0,
  }));
  let budget = params.maxBytes;
  let smallest = Infinity;
  for (let round = 1; ; round++) {
    const firstBatchShard = smallest === Infinity && !params.hardMaxBytes ? shardOf(pending[0]!.index) : undefined;
    const allowances = roundAllowances(
      pending.map((p) => p.left),
      budget,
    );
    // Done after this round: a partition given its whole budget left, and the first one still to read (every partition
    // before it is done and none after it has read yet, so it is given what one reader would give it).
    const done = pending.map((p, k) => k === 0 || allowances[k]! >= p.left);
    const byShard = new Map<number, { part: Pending; allowance: number }[]>();
    pending.forEach((part, k) => {
      // The first round asks every partition (its offsets and errors answer even with nothing to read); later ones only those given bytes.
      if (round > 1 && allowances[k]! === 0) return;
      const s = shardOf(part.index);
      let list = byShard.get(s);
      if (!list) byShard.set(s, (list = []));
      list.push({ part, allowance: allowances[k]! });
    });
    await Promise.all(
      [...byShard].map(async ([s, parts]) => {
        let shardBudget = 0;
        for (const p of parts) shardBudget += p.allowance;
        const limited = parts.map(({ part, allowance }) => continued(targets[part.index]!, part.from, allowance));
        const results = await read(s, limited, { ...params, maxWaitMs: 0, maxBytes: shardBudget, hardMaxBytes: params.hardMaxBytes || s !== firstBatchShard });
        parts.forEach(({ part }, k) => {
          const r = results[k]!;
          const earlier = out[part.index];
          const got = r.records?.length ?? 0;
          out[part.index] = earlier ? joined(earlier, r) : r;
          part.left -= got;
          budget -= got;
          smallest = Math.min(smallest, smallestBatch(r.records));
        });
      }),
    );
    const next: Pending[] = [];
    pending.forEach((part, k) => {
      if (done[k]) return;
      const from = continueFrom(targets[part.index]!, out[part.index]!, params.readCommitted);
      if (from !== undefined && part.left > 0) next.push({ ...part, from });
    });
    pending = next;
    if (pending.length === 0 || budget <= 0 || (smallest !== Infinity && budget < smallest) || round >= MAX_ROUNDS) return;
  }
}

/**
 * The target read from `from` within `allowance`. A read that goes on past the fetch offset drops
 * the fetcher's last fetched epoch: it names the epoch of the batch before the fetch offset, and
 * checked against a later offset it could report a divergence that is not there.
 */
function continued(target: FetchTarget, from: number, allowance: number): FetchTarget {
  const out: FetchTarget = { ...target, fetchOffset: from, partitionMaxBytes: allowance };
  if (from !== target.fetchOffset) delete out.lastFetchedEpoch;
  return out;
}
