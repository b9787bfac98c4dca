/**
 * The two steps both server-side assignors share: a member keeping what it had (up to what it may
 * have now), and the partitions nobody kept handed to the members still short of their quota,
 * where racks are known a partition going to a member in one of its replicas' racks first. The
 * quotas are fixed before either step, so rack preference never costs balance.
 */
import type { RackMatch } from './partition-space.js';

/**
 * Keeps up to `limit` of a member's previous partitions (ascending flat indices), those in its
 * rack first when racks are known, skipping any another member already kept (two members'
 * previous targets should never overlap, but a spec that says so must not assign one twice).
 */
export function keepPrevious(member: number, previous: readonly number[], limit: number, owner: Int32Array, counts: Int32Array, racks: RackMatch | null): void {
  const candidates = previous.filter((i) => owner[i]! < 0);
  if (racks !== null && candidates.length > limit) {
    const inRack = candidates.filter((i) => racks.matches(member, i));
    const elsewhere = candidates.filter((i) => !racks.matches(member, i));
    candidates.length = 0;
    candidates.push(...inRack, ...elsewhere);
  }
  const n = Math.min(limit, candidates.length);
  for (let k = 0; k < n; k++) owner[candidates[k]!] = member;
  counts[member]! += n;
}

/** The previous partitions of a member no other member has kept yet. */
export function stillFree(previous: readonly number[], owner: Int32Array): number {
  let n = 0;
  for (const i of previous) if (owner[i]! < 0) n++;
  return n;
}

/**
 * Hands `pool` (ascending flat indices, all unowned) to the members by `need` (member ordinal ->
 * how many more it takes; decremented). With racks: each partition to the first member still in
 * need in one of its replicas' racks; then what is left, in order, to the members in order, so a
 * member's new partitions form runs.
 */
export function handOut(pool: readonly number[], need: Int32Array, owner: Int32Array, counts: Int32Array, racks: RackMatch | null): void {
  let rest = pool;
  if (racks !== null) {
    const byRack: number[][] = Array.from({ length: racks.rackCount }, () => []);
    for (let m = 0; m < need.length; m++) if (need[m]! > 0 && racks.memberRack[m]! >= 0) byRack[racks.memberRack[m]!]!.push(m);
    const cursor = new Int32Array(racks.rackCount);
    const left: number[] = [];
    for (const i of pool) {
      let given = false;
      for (const r of racks.partitionRacks[i]!) {
        const queue = byRack[r]!;
        while (cursor[r]! < queue.length && need[queue[cursor[r]!]!]! === 0) cursor[r]!++;
        if (cursor[r]! < queue.length) {
          const m = queue[cursor[r]!]!;
          owner[i] = m;
          counts[m]!++;
          need[m]!--;
          given = true;
          break;
        }
      }
      if (!given) left.push(i);
    }
    rest = left;
  }
  let m = 0;
  for (const i of rest) {
    while (m < need.length && need[m]! === 0) m++;
    if (m === need.length) return; // more partitions than needs: the caller's quotas were short
    owner[i] = m;
    counts[m]!++;
    need[m]!--;
  }
}
