/**
 * What one replica fetcher says about partitions it cannot go on with, and the back-off of those
 * whose local log refuses writes. Lines are written once per fetcher round, not once per
 * partition: a planned leader move fences every partition the broker follows from that leader at
 * once (one warning each made 2,325 lines on one cluster stop), and a full disk refuses the
 * appends of every partition in it at once.
 *
 * A log that refuses writes while its directory stays online (a full disk, no file descriptors
 * left: storage's transient conditions, see log-io-failures.ts) is fetched again after
 * replica.fetch.backoff.ms, doubling per failure up to BLOCKED_RETRY_MAX_MS, until an append
 * succeeds: the follower then catches up and the leader puts it back in the ISR. Kafka takes the
 * whole log dir offline on any IOException and reports it to the controller; the partition then
 * stays offline on that broker until it restarts. Fjord's storage keeps a full directory online
 * (stored data is still served, appends are refused until space is freed), so the follower heals
 * by itself without the controller, and a restart is never needed for a disk that was only full.
 */
import type { Logger } from 'pino';

/** The longest wait between two tries of a partition whose log refuses writes. */
export const BLOCKED_RETRY_MAX_MS = 10_000;
/** Partitions named in one line; `count` says how many there were. */
const NAMED = 10;

interface Blocked {
  /** Consecutive refused writes. */
  failures: number;
  sinceMs: number;
}

export class FetcherFaults {
  /** Partitions whose log refuses writes, by key. */
  private readonly blocked = new Map<string, Blocked>();
  // What happened in this round, said by report().
  private fencedNow: string[] = [];
  private blockedNow: string[] = [];
  private firstRefusal = '';
  private healedNow: string[] = [];
  private longestBlockedMs = 0;

  constructor(
    private readonly logger: Logger,
    private readonly fetcherName: string,
    private readonly leaderId: number,
    private readonly backoffMs: number,
    private readonly clock: () => number,
  ) {}

  /** Partitions whose log refuses writes now: under-replicated on this broker (a metric reads it). */
  get blockedCount(): number {
    return this.blocked.size;
  }

  /**
   * The leader fenced the partition's leader epoch (FENCED_LEADER_EPOCH): the expected step of a
   * leader move, whose LeaderAndIsr is on its way.
   */
  fenced(key: string): void {
    this.fencedNow.push(key);
  }

  /** The partition's log refused a write but its directory is online: how long to wait before trying again. */
  refused(key: string, why: string): number {
    let b = this.blocked.get(key);
    if (!b) {
      this.blocked.set(key, (b = { failures: 0, sinceMs: this.clock() }));
      if (this.blockedNow.length === 0) this.firstRefusal = why;
      this.blockedNow.push(key);
    }
    b.failures++;
    const cap = Math.max(this.backoffMs, BLOCKED_RETRY_MAX_MS);
    return Math.min(cap, this.backoffMs * 2 ** Math.min(b.failures - 1, 20));
  }

  /** A write of the partition succeeded (cheap when nothing is blocked: the fetch path calls it each time). */
  wrote(key: string): void {
    if (this.blocked.size === 0) return;
    const b = this.blocked.get(key);
    if (!b) return;
    this.blocked.delete(key);
    this.healedNow.push(key);
    this.longestBlockedMs = Math.max(this.longestBlockedMs, this.clock() - b.sinceMs);
  }

  /** The partition left the fetcher (its state goes with it). */
  forget(key: string): void {
    this.blocked.delete(key);
  }

  /** The end of a fetcher round: one line per kind of event seen in it. */
  report(): void {
    if (this.fencedNow.length > 0) {
      const keys = this.fencedNow;
      this.fencedNow = [];
      this.logger.info(
        { fetcher: this.fetcherName, leader: this.leaderId, count: keys.length, partitions: keys.slice(0, NAMED) },
        `${keys.length} partitions fenced by leader epoch changes from broker ${this.leaderId}; fetching them again on their next LeaderAndIsr`,
      );
    }
    if (this.blockedNow.length > 0) {
      const keys = this.blockedNow;
      this.blockedNow = [];
      this.logger.warn(
        {
          fetcher: this.fetcherName,
          leader: this.leaderId,
          count: keys.length,
          blocked: this.blocked.size,
          partitions: keys.slice(0, NAMED),
          err: this.firstRefusal,
        },
        `${keys.length} partitions cannot be written to their local log; they fall out of the ISR and are fetched again, with back-off up to ${Math.max(this.backoffMs, BLOCKED_RETRY_MAX_MS)} ms, until appends succeed`,
      );
    }
    if (this.healedNow.length > 0) {
      const keys = this.healedNow;
      this.healedNow = [];
      this.logger.info(
        {
          fetcher: this.fetcherName,
          leader: this.leaderId,
          count: keys.length,
          blocked: this.blocked.size,
          partitions: keys.slice(0, NAMED),
          blockedMs: this.longestBlockedMs,
        },
        `${keys.length} partitions can be written again; catching up with the leader`,
      );
      this.longestBlockedMs = 0;
    }
  }
}
