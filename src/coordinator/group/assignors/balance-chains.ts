/**
 * The last step of the uniform assignor's heterogeneous path: moves no single partition can
 * make. With A on topic x, B on x and y, C on y, counts 2, 1, 0 cannot improve one partition at a
 * time (A-B and B-C differ by one, A and C share no topic), but A gives an x partition to B and B
 * a y partition to C: 1, 1, 1. Searched breadth-first from the least-loaded members over "owns a
 * partition of a topic I subscribe to" until a member with at least two more is reached, then
 * each member on the path hands one partition down it. Each such shift lowers the sum of the
 * squared counts; with no shift left, no other assignment has a smaller one (for unit-size
 * partitions, no improving path means optimal), so the counts are as even as the subscriptions
 * allow. A search touches each topic once: linear in partitions plus subscriptions.
 */

export interface ChainState {
  /** Topic ordinal -> first flat index (one past the end at [topics]). */
  readonly first: Int32Array;
  /** Member ordinal -> the ordinals of the topics it subscribes to. */
  readonly memberTopics: readonly (readonly number[])[];
  readonly owner: Int32Array;
  readonly counts: Int32Array;
}

/** Shifts partitions along chains until none helps; returns how many partitions moved. */
export function shiftAlongChains(s: ChainState): number {
  const n = s.counts.length;
  const parent = new Int32Array(n);
  const via = new Int32Array(n);
  const scanned = new Uint8Array(s.first.length - 1);
  const queue = new Int32Array(n);
  let moves = 0;

  /** A member with at least `level + 2` partitions reachable from those with `level`, or -1. */
  const search = (level: number): number => {
    parent.fill(-2);
    scanned.fill(0);
    let head = 0;
    let tail = 0;
    for (let m = 0; m < n; m++) {
      if (s.memberTopics[m]!.length > 0 && s.counts[m] === level) {
        parent[m] = -1;
        queue[tail++] = m;
      }
    }
    while (head < tail) {
      const v = queue[head++]!;
      for (const t of s.memberTopics[v]!) {
        if (scanned[t]) continue; // every owner of t is already reached through some subscriber of t
        scanned[t] = 1;
        for (let i = s.first[t]!; i < s.first[t + 1]!; i++) {
          const u = s.owner[i]!;
          if (u < 0 || parent[u] !== -2) continue;
          parent[u] = v;
          via[u] = i;
          if (s.counts[u]! >= level + 2) return u;
          queue[tail++] = u;
        }
      }
    }
    return -1;
  };

  for (;;) {
    let lowest = Number.MAX_SAFE_INTEGER;
    let highest = -1;
    for (let m = 0; m < n; m++) {
      if (s.memberTopics[m]!.length === 0) continue;
      lowest = Math.min(lowest, s.counts[m]!);
      highest = Math.max(highest, s.counts[m]!);
    }
    let giver = -1;
    for (let level = lowest; level <= highest - 2 && giver < 0; level++) giver = search(level);
    if (giver < 0) return moves;
    for (let u = giver; parent[u] !== -1; u = parent[u]!) {
      s.owner[via[u]!] = parent[u]!;
      s.counts[u]!--;
      s.counts[parent[u]!]!++;
      moves++;
    }
  }
}
