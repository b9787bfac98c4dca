/**
 * Partitions this broker took the lead of lately (LeaderAndIsr) that some follower has not
 * fetched yet. Their followers must add them to their fetch sessions, but a follower's fetcher
 * that already fetches other partitions from this broker has a fetch parked here, and it sends
 * the next one (the first that can name the partition) only when that one is answered: after up
 * to replica.fetch.wait.max.ms (500 ms), during which the new partition is not replicated and
 * acks=all produces to it wait (every new topic, every leader change). So the parked fetches of
 * followers that have not fetched it yet are answered at once, and until they fetch it (for at
 * most their max wait) their fetches park only briefly: the follower may process its own
 * LeaderAndIsr after this broker did. ReplicaManager owns one.
 */
import type { Partition } from '../partition/partition.js';
import type { DelayedFetch } from './delayed-fetch.js';

/** How long a follower's fetch parks while a partition it has not fetched yet was just led here. */
const JOIN_POLL_MS = 20;
/** Recently led partitions are forgotten after this long, whatever their followers do. */
const JOIN_WINDOW_MAX_MS = 60_000;

export class FirstFetchWindow {
  /** Partitions led here lately (when) while some follower has not fetched them yet. */
  private joining: { p: Partition; at: number }[] = [];

  constructor(
    /** Whether `p` is the partition hosted here under its name (not one dropped since). */
    private readonly isHosted: (p: Partition) => boolean,
  ) {}

  /** This broker took the lead of `p`: the parked fetches of its followers that have not fetched it yet are answered. */
  noteNewLeadership(p: Partition, waitingFetches: ReadonlySet<DelayedFetch>): void {
    if (!this.awaitingFirstFetch(p)) return;
    this.joining.push({ p, at: Date.now() });
    for (const f of [...waitingFetches]) if (f.replicaId >= 0 && p.followerState(f.replicaId)?.logEndOffset === -1) f.complete();
  }

  /** How long a replica fetch from `replicaId` may park: briefly while a partition led here since lately awaits its first fetch. */
  replicaWaitMs(replicaId: number, maxWaitMs: number): number {
    if (this.joining.length === 0) return maxWaitMs;
    const now = Date.now();
    this.joining = this.joining.filter((j) => now - j.at < JOIN_WINDOW_MAX_MS && this.awaitingFirstFetch(j.p));
    for (const j of this.joining) {
      if (now - j.at < maxWaitMs && j.p.followerState(replicaId)?.logEndOffset === -1) return Math.min(maxWaitMs, JOIN_POLL_MS);
    }
    return maxWaitMs;
  }

  private awaitingFirstFetch(p: Partition): boolean {
    return p.isLeader && this.isHosted(p) && p.replicas.some((id) => p.followerState(id)?.logEndOffset === -1);
  }
}
