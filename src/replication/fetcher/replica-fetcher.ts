/**
 * One replica fetcher: the partitions this broker follows whose leader is one source broker and
 * whose fetcher index is this one (Kafka's AbstractFetcherThread + ReplicaFetcherThread, as an
 * async loop on the event loop instead of a thread). Each round:
 *
 * 1. connect to the leader if needed (errors: every partition backs off replica.fetch.backoff.ms);
 * 2. truncate partitions that need it: with a leader older than Fetch v12, ask OffsetForLeaderEpoch
 *    for our latest epoch and cut where the logs diverge; with no epoch at all, cut to the high
 *    watermark;
 * 3. one Fetch for every partition ready, then per partition: append the batches as the leader
 *    wrote them and take its high watermark and log start; `diverging_epoch` → truncate there
 *    and go on; OFFSET_OUT_OF_RANGE → ask the leader's log end / start and truncate to it (or
 *    restart the log at its start); FENCED_LEADER_EPOCH → the partition is failed until the next
 *    LeaderAndIsr re-adds it (said once per round, fetcher-faults.ts); a local log that refuses
 *    writes while its directory is online (a full disk) → the partition is fetched again with
 *    growing back-off until appends succeed; one in an offline directory is failed; other errors
 *    → the partition backs off (before its first answer, "leader not ready yet" errors are
 *    retried after 50 ms, up to 20 times).
 *
 * Removing a partition waits for an append or truncation of it in progress, so a LeaderAndIsr
 * that makes this broker the leader never races the fetcher's last write.
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../../protocol/errors.js';
import { tpKey } from '../../common/partition-keys.js';
import { KafkaStorageError } from '../../storage/errors.js';
import { truncationPoint } from './truncation.js';
import { FetcherFaults } from './fetcher-faults.js';
import { messageOf } from '../../common/errors.js';
import { EMPTY, LEADER_NOT_READY, QUICK_RETRIES, QUICK_RETRY_MS, initialFetchState, isCorrupt, wholeBatches, type PartitionFetchState } from './fetch-state.js';
import type { FetcherConfig, InitialFetchState, LeaderEndpoint, ReplicaFetchData, ReplicaFetchPartition } from './types.js';


export class ReplicaFetcher {
  private readonly states = new Map<string, PartitionFetchState>();
  /** Partitions removed after an error that only a new LeaderAndIsr can fix. */
  readonly failed = new Set<string>();
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | undefined;
  private connectFailures = 0;
  private readonly faults: FetcherFaults;

  constructor(
    readonly leader: LeaderEndpoint,
    readonly fetcherId: number,
    private readonly cfg: FetcherConfig,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    this.faults = new FetcherFaults(logger, this.name, leader.leaderId, cfg.fetchBackoffMs, clock);
  }

  get name(): string {
    return `ReplicaFetcher-${this.fetcherId}-${this.leader.leaderId}`;
  }

  get partitionCount(): number {
    return this.states.size;
  }

  /** Partitions whose local log refuses writes (a full disk): out of the ISR until appends succeed. */
  get blockedPartitionsCount(): number {
    return this.faults.blockedCount;
  }

  has(key: string): boolean {
    return this.states.has(key);
  }

  /** The fetch state of a partition (tests, diagnostics). */
  stateOf(key: string): Readonly<PartitionFetchState> | undefined {
    return this.states.get(key);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /**
   * Starts fetching partitions (Kafka's addPartitions): a partition already here with the same
   * leader epoch keeps its state (a re-sent LeaderAndIsr); otherwise it starts at the offset given.
   */
  addPartitions(initial: readonly InitialFetchState[]): void {
    for (const init of initial) {
      const key = tpKey(init.replica.topic, init.replica.partition);
      this.failed.delete(key);
      const current = this.states.get(key);
      if (current && current.currentLeaderEpoch === init.leaderEpoch) continue;
      this.states.set(key, initialFetchState(key, init));
    }
    this.wake();
  }

  /** Stops fetching partitions; resolves once no append or truncation of them is in progress. */
  async removePartitions(keys: Iterable<string>): Promise<void> {
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

  /**
   * Stops the loop and closes the connection; waits for any write in progress, not for the
   * loop: it may be waiting on a leader that never answers (a frozen process) until the socket
   * timeout, and LeaderAndIsr (which stops idle fetchers) must not wait that long. Once its
   * partitions are removed the loop starts no write, and it ends when its request fails.
   */
  async shutdown(): Promise<void> {
    this.running = false;
    this.wake();
    this.leader.close();
    await this.removePartitions([...this.states.keys()]);
  }

  /** Resolves when the loop has ended (tests). */
  get stopped(): Promise<void> {
    return this.loopDone;
  }

  private wake(): void {
    this.wakeUp?.();
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      timer.unref();
      this.wakeUp = done;
    });
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        await this.doWork();
      } catch (err) {
        if (!this.running) break;
        this.logger.error({ fetcher: this.name, err: messageOf(err) }, 'replica fetcher round failed');
        await this.idle(this.cfg.fetchBackoffMs);
      } finally {
        this.faults.report();
      }
    }
  }

  private ready(now: number): PartitionFetchState[] {
    return [...this.states.values()].filter((s) => s.delayUntil <= now);
  }

  private async doWork(): Promise<void> {
    const now = this.clock();
    if (this.ready(now).length === 0) {
      let next = Infinity;
      for (const s of this.states.values()) next = Math.min(next, s.delayUntil - now);
      await this.idle(Number.isFinite(next) ? next : this.cfg.fetchBackoffMs);
      return;
    }
    let truncationOnFetch: boolean;
    try {
      ({ truncationOnFetch } = await this.leader.connect());
      this.connectFailures = 0;
    } catch (err) {
      if (!this.running) return;
      const fields = { fetcher: this.name, leader: this.leader.leaderId, err: messageOf(err) };
      if (this.connectFailures++ === 0) this.logger.warn(fields, 'cannot connect to the leader; retrying');
      else this.logger.debug(fields, 'cannot connect to the leader; retrying');
      this.delay([...this.states.values()]);
      return;
    }
    for (const st of this.states.values()) {
      if (st.kind !== 'pending') continue;
      // Kafka 2.7+ (truncation on fetch): a log with epochs fetches from where it is and lets the
      // leader's diverging_epoch say where it must cut; otherwise truncate before fetching.
      const latest = st.replica.latestEpoch();
      if (truncationOnFetch && latest >= 0) {
        st.kind = 'fetching';
        st.lastFetchedEpoch = latest;
      } else {
        st.kind = 'truncating';
      }
    }
    await this.maybeTruncate(truncationOnFetch);
    await this.maybeFetch(truncationOnFetch);
  }

  private delay(states: Iterable<PartitionFetchState>, ms = this.cfg.fetchBackoffMs): void {
    const until = this.clock() + ms;
    for (const st of states) if (this.states.get(st.key) === st) st.delayUntil = until;
  }

  private markFailed(st: PartitionFetchState, why: string): void {
    if (!this.fail(st)) return;
    this.logger.warn({ fetcher: this.name, partition: st.key, why }, 'partition marked as failed until the next LeaderAndIsr');
  }

  private fail(st: PartitionFetchState): boolean {
    if (this.states.get(st.key) !== st) return false;
    this.states.delete(st.key);
    this.faults.forget(st.key);
    this.failed.add(st.key);
    return true;
  }

  /** The leader has a newer epoch (FENCED_LEADER_EPOCH): a leader move whose LeaderAndIsr is on its way. */
  private fenced(st: PartitionFetchState): void {
    if (!this.fail(st)) return;
    this.faults.fenced(st.key);
    this.logger.debug({ fetcher: this.name, partition: st.key, leaderEpoch: st.currentLeaderEpoch }, 'the leader fenced this leader epoch; waiting for the next LeaderAndIsr');
  }

  /**
   * A write to the local log failed. A storage error while the log's directory is online (a
   * full disk, no descriptors) passes: fetch again after a growing back-off. Anything else (an
   * offline directory, an unexpected error) fails the partition until the next LeaderAndIsr.
   */
  private writeFailed(st: PartitionFetchState, what: string, err: unknown): void {
    if (err instanceof KafkaStorageError && !st.replica.offline) {
      if (this.states.get(st.key) === st) this.delay([st], this.faults.refused(st.key, `${what}: ${messageOf(err)}`));
    } else {
      this.markFailed(st, `${what}: ${messageOf(err)}`);
    }
  }

  /** Runs a write on the replica unless the partition left this fetcher; removal waits for it. */
  private async write<T>(st: PartitionFetchState, op: () => Promise<T>): Promise<{ done: true; value: T } | { done: false }> {
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
  private async truncate(st: PartitionFetchState, offset: number, reason: string): Promise<boolean> {
    try {
      const before = st.replica.logEndOffset;
      const r = await this.write(st, () => st.replica.truncateTo(offset));
      if (!r.done) return false;
      this.faults.wrote(st.key);
      if (offset < before) {
        const hw = st.replica.highWatermark;
        this.logger.info({ fetcher: this.name, partition: st.key, offset, logEndOffset: before, reason }, 'truncating the follower log');
        if (offset < hw) this.logger.warn({ partition: st.key, offset, highWatermark: hw }, 'truncating below the high watermark');
      }
      return true;
    } catch (err) {
      this.writeFailed(st, `truncation to ${offset} failed`, err);
      return false;
    }
  }

  private afterTruncation(st: PartitionFetchState, offset: number, complete: boolean, truncationOnFetch: boolean): void {
    if (this.states.get(st.key) !== st) return;
    st.fetchOffset = Math.min(offset, st.replica.logEndOffset);
    st.kind = truncationOnFetch || complete ? 'fetching' : 'truncating';
    st.lastFetchedEpoch = st.replica.latestEpoch();
  }

  private async maybeTruncate(truncationOnFetch: boolean): Promise<void> {
    const now = this.clock();
    const withEpochs: PartitionFetchState[] = [];
    const withoutEpochs: PartitionFetchState[] = [];
    for (const st of this.ready(now)) {
      if (st.kind !== 'truncating') continue;
      (st.replica.latestEpoch() >= 0 ? withEpochs : withoutEpochs).push(st);
    }
    if (withEpochs.length > 0) await this.truncateToEpochEndOffsets(withEpochs, truncationOnFetch);
    // No epoch to compare: the high watermark (the initial fetch offset) is the safe point.
    for (const st of withoutEpochs) {
      if (await this.truncate(st, st.fetchOffset, 'high watermark')) this.afterTruncation(st, st.fetchOffset, true, truncationOnFetch);
    }
  }

  private async truncateToEpochEndOffsets(states: PartitionFetchState[], truncationOnFetch: boolean): Promise<void> {
    const asked = states.map((st) => ({ st, leaderEpoch: st.replica.latestEpoch() }));
    let answers: Map<string, { errorCode: number; leaderEpoch: number; endOffset: number }>;
    try {
      answers = await this.leader.fetchEpochEndOffsets(
        asked.map(({ st, leaderEpoch }) => ({ topic: st.replica.topic, partition: st.replica.partition, currentLeaderEpoch: st.currentLeaderEpoch, leaderEpoch })),
      );
    } catch (err) {
      if (!this.running) return;
      this.logger.warn({ fetcher: this.name, err: messageOf(err) }, 'OffsetForLeaderEpoch failed; retrying');
      this.delay(states);
      return;
    }
    for (const { st } of asked) {
      const a = answers.get(st.key);
      if (!a || this.states.get(st.key) !== st) continue;
      if (a.errorCode === ErrorCode.NONE) {
        const point = truncationPoint(a, st.replica, st.fetchOffset);
        if (await this.truncate(st, point.offset, `leader epoch ${a.leaderEpoch} ends at ${a.endOffset}`)) this.afterTruncation(st, point.offset, point.complete, truncationOnFetch);
      } else if (a.errorCode === ErrorCode.FENCED_LEADER_EPOCH) {
        this.fenced(st);
      } else {
        this.delay([st]);
      }
    }
  }

  private async maybeFetch(truncationOnFetch: boolean): Promise<void> {
    const now = this.clock();
    const states = this.ready(now).filter((s) => s.kind === 'fetching');
    if (states.length === 0) return;
    const request: ReplicaFetchPartition[] = states.map((st) => ({
      topic: st.replica.topic,
      topicId: st.topicId,
      partition: st.replica.partition,
      fetchOffset: st.fetchOffset,
      currentLeaderEpoch: st.currentLeaderEpoch,
      lastFetchedEpoch: truncationOnFetch ? st.lastFetchedEpoch : -1,
      logStartOffset: st.replica.logStartOffset,
      maxBytes: this.cfg.fetchMaxBytes,
    }));
    let answers: Map<string, ReplicaFetchData>;
    try {
      answers = await this.leader.fetch(request, {
        maxWaitMs: this.cfg.fetchWaitMaxMs,
        minBytes: this.cfg.fetchMinBytes,
        maxBytes: this.cfg.fetchResponseMaxBytes,
      });
    } catch (err) {
      if (!this.running) return;
      this.logger.warn({ fetcher: this.name, leader: this.leader.leaderId, err: messageOf(err) }, 'replica fetch failed; backing off');
      this.delay(states);
      return;
    }
    const diverging: { st: PartitionFetchState; epoch: number; endOffset: number }[] = [];
    for (let i = 0; i < states.length; i++) {
      const st = states[i]!;
      const sent = request[i]!;
      const data = answers.get(st.key);
      // Only an answer to the state we asked for: the partition may have been removed, re-added
      // with a new epoch or truncated while the fetch was out.
      if (!data) continue;
      if (this.states.get(st.key) !== st || st.fetchOffset !== sent.fetchOffset || st.kind !== 'fetching') {
        this.logger.debug({ fetcher: this.name, partition: st.key, highWatermark: data.highWatermark }, 'answer dropped: the partition changed while the fetch was out');
        continue;
      }
      if (data.errorCode === ErrorCode.NONE) st.answered = true;
      switch (data.errorCode) {
        case ErrorCode.NONE:
          if (truncationOnFetch && data.divergingEpoch && (data.divergingEpoch.epoch >= 0 || data.divergingEpoch.endOffset >= 0)) {
            diverging.push({ st, ...data.divergingEpoch });
          } else {
            await this.processPartitionData(st, data, truncationOnFetch);
          }
          break;
        case ErrorCode.OFFSET_OUT_OF_RANGE:
          if (!(await this.handleOutOfRange(st))) this.delay([st]);
          break;
        case ErrorCode.FENCED_LEADER_EPOCH:
          // Our epoch is older than the leader's: a LeaderAndIsr is on its way.
          this.fenced(st);
          break;
        default:
          // NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH (the leader has not caught up with the
          // controller yet), UNKNOWN_TOPIC_OR_PARTITION...: retry after the backoff.
          this.logger.debug({ fetcher: this.name, partition: st.key, errorCode: data.errorCode }, 'replica fetch error; backing off');
          // A partition just added (new topic, new leader) whose leader is not ready for it yet is
          // asked again soon: a whole backoff (1 s) would hold up every acks=all produce to it.
          if (!st.answered && LEADER_NOT_READY.has(data.errorCode) && st.quickRetries++ < QUICK_RETRIES) this.delay([st], Math.min(this.cfg.fetchBackoffMs, QUICK_RETRY_MS));
          else this.delay([st]);
      }
    }
    // Kafka's truncateOnFetchResponse.
    for (const d of diverging) {
      if (this.states.get(d.st.key) !== d.st) continue;
      const point = truncationPoint({ leaderEpoch: d.epoch, endOffset: d.endOffset }, d.st.replica, d.st.fetchOffset);
      if (await this.truncate(d.st, point.offset, `diverging epoch ${d.epoch} ending at ${d.endOffset}`)) this.afterTruncation(d.st, point.offset, point.complete, truncationOnFetch);
    }
  }

  private async processPartitionData(st: PartitionFetchState, data: ReplicaFetchData, truncationOnFetch: boolean): Promise<void> {
    const records = wholeBatches(data.records ?? EMPTY);
    const replica = st.replica;
    try {
      if (records.length > 0) {
        if (st.fetchOffset !== replica.logEndOffset) {
          // Something else wrote to the log (a produce accepted just before this broker became a
          // follower). Kafka gives the partition up until the next LeaderAndIsr; here the data is
          // dropped and the fetch restarts from the log end, where last_fetched_epoch (or, with an
          // older leader, OffsetForLeaderEpoch) lets the leader say whether those records must go.
          this.logger.warn({ fetcher: this.name, partition: st.key, fetchOffset: st.fetchOffset, logEndOffset: replica.logEndOffset }, 'the log moved under the fetcher; fetching again from its end');
          st.fetchOffset = replica.logEndOffset;
          st.lastFetchedEpoch = replica.latestEpoch();
          if (!truncationOnFetch) st.kind = 'truncating';
          return;
        }
        const r = await this.write(st, () => replica.appendAsFollower(records));
        if (!r.done) return;
      }
      replica.setFollowerHighWatermark(data.highWatermark);
      await this.write(st, () => replica.followLeaderLogStartOffset(data.logStartOffset));
    } catch (err) {
      if (err instanceof KafkaStorageError) this.writeFailed(st, 'storage error', err);
      else if (isCorrupt(err)) {
        this.logger.error({ fetcher: this.name, partition: st.key, offset: st.fetchOffset, err: messageOf(err) }, 'invalid records from the leader; backing off');
        this.delay([st]);
      } else this.markFailed(st, `append failed: ${messageOf(err)}`);
      return;
    }
    if (this.states.get(st.key) !== st) return;
    this.faults.wrote(st.key);
    if (records.length > 0) {
      st.fetchOffset = replica.logEndOffset;
      st.lastFetchedEpoch = replica.latestEpoch();
    }
    st.lag = Math.max(0, data.highWatermark - st.fetchOffset);
  }

  /** Kafka's fetchOffsetAndTruncate: our fetch offset is outside the leader's log. */
  private async handleOutOfRange(st: PartitionFetchState): Promise<boolean> {
    const { replica } = st;
    try {
      const leaderEnd = await this.leader.fetchOffset(replica.topic, replica.partition, st.currentLeaderEpoch, 'latest');
      if (this.states.get(st.key) !== st) return true;
      if (leaderEnd < replica.logEndOffset) {
        // The leader's log is shorter (an unclean election, or a leader without epochs): cut to it.
        if (!(await this.truncate(st, leaderEnd, `the leader's log ends at ${leaderEnd}`))) return true;
        this.afterTruncation(st, leaderEnd, true, true);
        return true;
      }
      const leaderStart = await this.leader.fetchOffset(replica.topic, replica.partition, st.currentLeaderEpoch, 'earliest');
      if (this.states.get(st.key) !== st) return true;
      if (leaderStart > replica.logEndOffset) {
        this.logger.warn({ fetcher: this.name, partition: st.key, logEndOffset: replica.logEndOffset, leaderStart }, 'the leader\'s log starts beyond ours: starting over at its start');
        const r = await this.write(st, () => replica.truncateFullyAndStartAt(leaderStart));
        if (!r.done) return true;
      }
      this.afterTruncation(st, Math.max(leaderStart, replica.logEndOffset), true, true);
      return true;
    } catch (err) {
      if (err instanceof KafkaStorageError) {
        this.writeFailed(st, 'storage error', err);
        return true;
      }
      this.logger.warn({ fetcher: this.name, partition: st.key, err: messageOf(err) }, 'cannot learn the leader\'s offsets after OFFSET_OUT_OF_RANGE; backing off');
      return false;
    }
  }
}
