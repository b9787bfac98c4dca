/**
 * The partitions one replica fetcher holds: their fetch states, those failed until the next
 * LeaderAndIsr, and every write to their local logs. A write runs only while its state is still
 * the partition's (a partition removed or re-added meanwhile is left alone) and is kept as
 * `busy` so that removing the partition waits for it; a write the log refuses backs the
 * partition off or fails it (fetcher-faults.ts says so once per round). Apart from
 * ReplicaFetcher, which runs the rounds (connect, truncate, fetch, apply the answers).
 */
import type { Logger } from 'pino';
import { tpKey } from '../../common/partition-keys.js';
import { KafkaStorageError } from '../../storage/errors.js';
import { messageOf } from '../../common/errors.js';
import { FetcherFaults } from './fetcher-faults.js';
import { initialFetchState, type PartitionFetchState } from './fetch-state.js';
import type { InitialFetchState } from './types.js';

export class FetcherPartitions {
  private readonly states = new Map<string, PartitionFetchState>();
  /** Partitions removed after an error that only a new LeaderAndIsr can fix. */
  readonly failed = new Set<string>();
  readonly faults: FetcherFaults;

  constructor(
    private readonly fetcherName: string,
    leaderId: number,
    private readonly fetchBackoffMs: number,
    private readonly logger: Logger,
    private readonly clock: () => number,
  ) {
    this.faults = new FetcherFaults(logger, fetcherName, leaderId, fetchBackoffMs, clock);
  }

  get size(): number {
    return this.states.size;
  }

  has(key: string): boolean {
    return this.states.has(key);
  }

  get(key: string): PartitionFetchState | undefined {
    return this.states.get(key);
  }

  all(): IterableIterator<PartitionFetchState> {
    return this.states.values();
  }

  keys(): string[] {
    return [...this.states.keys()];
  }

  /** Whether `st` is still the partition's state (not removed, not replaced by a re-add). */
  isCurrent(st: PartitionFetchState): boolean {
    return this.states.get(st.key) === st;
  }

  /** Partitions not backing off at `now`. */
  ready(now: number): PartitionFetchState[] {
    return [...this.states.values()].filter((s) => s.delayUntil <= now);
  }

  /** Kafka's addPartitions: a partition already here with the same leader epoch keeps its state. */
  add(initial: readonly InitialFetchState[]): void {
    for (const init of initial) {
      const key = tpKey(init.replica.topic, init.replica.partition);
      this.failed.delete(key);
      const current = this.states.get(key);
      if (current && current.currentLeaderEpoch === init.leaderEpoch) continue;
      this.states.set(key, initialFetchState(key, init));
    }
  }

  /** Forgets partitions; resolves once no append or truncation of them is in progress. */
  async remove(keys: Iterable<string>): Promise<void> {
    const busy: Promise<unknown>[] = [];
    for (const key of keys) {
      const st = this.states.get(key);
      this.failed.delete(key);
      this.faults.forget(key);
      if (!st) continue;
      this.states.delete(key);
      if (st.busy) busy.push(st.busy.catch(() => undefined));
    }
    await Promise.all(busy);
  }

  /** Backs these partitions off for `ms` (those still held). */
  delay(states: Iterable<PartitionFetchState>, ms = this.fetchBackoffMs): void {
    const until = this.clock() + ms;
    for (const st of states) if (this.states.get(st.key) === st) st.delayUntil = until;
  }

  /** Gives the partition up until the next LeaderAndIsr, saying why. */
  markFailed(st: PartitionFetchState, why: string): void {
    if (!this.fail(st)) return;
    this.logger.warn({ fetcher: this.fetcherName, partition: st.key, why }, 'partition marked as failed until the next LeaderAndIsr');
  }

  private fail(st: PartitionFetchState): boolean {
    if (this.states.get(st.key) !== st) return false;
    this.states.delete(st.key);
    this.faults.forget(st.key);
    this.failed.add(st.key);
    return true;
  }

  /** The leader has a newer epoch (FENCED_LEADER_EPOCH): a leader move whose LeaderAndIsr is on its way. */
  fenced(st: PartitionFetchState): void {
    if (!this.fail(st)) return;
    this.faults.fenced(st.key);
    this.logger.debug(
      { fetcher: this.fetcherName, partition: st.key, leaderEpoch: st.currentLeaderEpoch },
      'the leader fenced this leader epoch; waiting for the next LeaderAndIsr',
    );
  }

  /**
   * A write to the local log failed. A storage error while the log's directory is online (a
   * full disk, no descriptors) passes: fetch again after a growing back-off. Anything else (an
   * offline directory, an unexpected error) fails the partition until the next LeaderAndIsr.
   */
  writeFailed(st: PartitionFetchState, what: string, err: unknown): void {
    if (err instanceof KafkaStorageError && !st.replica.offline) {
      if (this.states.get(st.key) === st) this.delay([st], this.faults.refused(st.key, `${what}: ${messageOf(err)}`));
    } else {
      this.markFailed(st, `${what}: ${messageOf(err)}`);
    }
  }

  /** Runs a write on the replica unless the partition left this fetcher; removal waits for it. */
  async write<T>(st: PartitionFetchState, op: () => Promise<T>): Promise<{ done: true; value: T } | { done: false }> {
    if (this.states.get(st.key) !== st) return { done: false };
    const p = op();
    st.busy = p;
    try {
      return { done: true, value: await p };
    } finally {
      if (st.busy === p) st.busy = undefined;
    }
  }

  /** Truncates; false (partition failed) when the log refuses. */
  async truncate(st: PartitionFetchState, offset: number, reason: string): Promise<boolean> {
    try {
      const before = st.replica.logEndOffset;
      const r = await this.write(st, () => st.replica.truncateTo(offset));
      if (!r.done) return false;
      this.faults.wrote(st.key);
      if (offset < before) {
        const hw = st.replica.highWatermark;
        this.logger.info({ fetcher: this.fetcherName, partition: st.key, offset, logEndOffset: before, reason }, 'truncating the follower log');
        if (offset < hw) this.logger.warn({ partition: st.key, offset, highWatermark: hw }, 'truncating below the high watermark');
      }
      return true;
    } catch (err) {
      this.writeFailed(st, `truncation to ${offset} failed`, err);
      return false;
    }
  }

  /** Fetches on from `offset` (or the log end, if lower) once a truncation is done. */
  afterTruncation(st: PartitionFetchState, offset: number, complete: boolean, truncationOnFetch: boolean): void {
    if (this.states.get(st.key) !== st) return;
    st.fetchOffset = Math.min(offset, st.replica.logEndOffset);
    st.kind = truncationOnFetch || complete ? 'fetching' : 'truncating';
    st.lastFetchedEpoch = st.replica.latestEpoch();
  }
}
