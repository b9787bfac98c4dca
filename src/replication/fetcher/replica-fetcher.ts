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
 * that makes this broker the leader never races the fetcher's last write (the partitions, their
 * states and those guarded writes are fetcher-partitions.ts).
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../../protocol/errors.js';
import { truncationPoint } from './truncation.js';
import { FetcherPartitions } from './fetcher-partitions.js';
import { messageOf } from '../../common/errors.js';
import { LEADER_NOT_READY, QUICK_RETRIES, QUICK_RETRY_MS, type PartitionFetchState } from './fetch-state.js';
import { handleOutOfRange, processPartitionData, type FetcherView } from './fetch-answers.js';
import type { FetcherConfig, InitialFetchState, LeaderEndpoint, ReplicaFetchData, ReplicaFetchPartition, ReplicationTraffic } from './types.js';

export class ReplicaFetcher {
  private readonly partitions: FetcherPartitions;
  /** What fetch-answers.ts uses of this fetcher. */
  private readonly view: FetcherView;
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | undefined;
  private connectFailures = 0;

  constructor(
    readonly leader: LeaderEndpoint,
    readonly fetcherId: number,
    private readonly cfg: FetcherConfig,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
    traffic: ReplicationTraffic = { bytesIn: 0 },
  ) {
    this.partitions = new FetcherPartitions(this.name, leader.leaderId, cfg.fetchBackoffMs, logger, clock);
    this.view = { name: this.name, leader, partitions: this.partitions, logger, traffic };
  }

  get name(): string {
    return `ReplicaFetcher-${this.fetcherId}-${this.leader.leaderId}`;
  }

  get partitionCount(): number {
    return this.partitions.size;
  }

  /** Partitions removed after an error that only a new LeaderAndIsr can fix. */
  get failed(): Set<string> {
    return this.partitions.failed;
  }

  /** The largest lag (leader's high watermark minus fetch offset, as of the last answer) of this fetcher's partitions. */
  get maxLag(): number {
    let max = 0;
    for (const st of this.partitions.all()) if (st.lag > max) max = st.lag;
    return max;
  }

  /** Partitions whose local log refuses writes (a full disk): out of the ISR until appends succeed. */
  get blockedPartitionsCount(): number {
    return this.partitions.faults.blockedCount;
  }

  has(key: string): boolean {
    return this.partitions.has(key);
  }

  /** The fetch state of a partition (tests, diagnostics). */
  stateOf(key: string): Readonly<PartitionFetchState> | undefined {
    return this.partitions.get(key);
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
    this.partitions.add(initial);
    this.wake();
  }

  /** Stops fetching partitions; resolves once no append or truncation of them is in progress. */
  removePartitions(keys: Iterable<string>): Promise<void> {
    return this.partitions.remove(keys);
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
    await this.removePartitions(this.partitions.keys());
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
        this.partitions.faults.report();
      }
    }
  }

  private async doWork(): Promise<void> {
    const now = this.clock();
    if (this.partitions.ready(now).length === 0) {
      let next = Infinity;
      for (const s of this.partitions.all()) next = Math.min(next, s.delayUntil - now);
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
      this.partitions.delay([...this.partitions.all()]);
      return;
    }
    for (const st of this.partitions.all()) {
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

  private async maybeTruncate(truncationOnFetch: boolean): Promise<void> {
    const now = this.clock();
    const withEpochs: PartitionFetchState[] = [];
    const withoutEpochs: PartitionFetchState[] = [];
    for (const st of this.partitions.ready(now)) {
      if (st.kind !== 'truncating') continue;
      (st.replica.latestEpoch() >= 0 ? withEpochs : withoutEpochs).push(st);
    }
    if (withEpochs.length > 0) await this.truncateToEpochEndOffsets(withEpochs, truncationOnFetch);
    // No epoch to compare: the high watermark (the initial fetch offset) is the safe point.
    for (const st of withoutEpochs) {
      if (await this.partitions.truncate(st, st.fetchOffset, 'high watermark')) this.partitions.afterTruncation(st, st.fetchOffset, true, truncationOnFetch);
    }
  }

  private async truncateToEpochEndOffsets(states: PartitionFetchState[], truncationOnFetch: boolean): Promise<void> {
    const asked = states.map((st) => ({ st, leaderEpoch: st.replica.latestEpoch() }));
    let answers: Map<string, { errorCode: number; leaderEpoch: number; endOffset: number }>;
    try {
      answers = await this.leader.fetchEpochEndOffsets(
        asked.map(({ st, leaderEpoch }) => ({
          topic: st.replica.topic,
          partition: st.replica.partition,
          currentLeaderEpoch: st.currentLeaderEpoch,
          leaderEpoch,
        })),
      );
    } catch (err) {
      if (!this.running) return;
      this.logger.warn({ fetcher: this.name, err: messageOf(err) }, 'OffsetForLeaderEpoch failed; retrying');
      this.partitions.delay(states);
      return;
    }
    for (const { st } of asked) {
      const a = answers.get(st.key);
      if (!a || !this.partitions.isCurrent(st)) continue;
      if (a.errorCode === ErrorCode.NONE) {
        const point = truncationPoint(a, st.replica, st.fetchOffset);
        if (await this.partitions.truncate(st, point.offset, `leader epoch ${a.leaderEpoch} ends at ${a.endOffset}`))
          this.partitions.afterTruncation(st, point.offset, point.complete, truncationOnFetch);
      } else if (a.errorCode === ErrorCode.FENCED_LEADER_EPOCH) {
        this.partitions.fenced(st);
      } else {
        this.partitions.delay([st]);
      }
    }
  }

  private async maybeFetch(truncationOnFetch: boolean): Promise<void> {
    const now = this.clock();
    const states = this.partitions.ready(now).filter((s) => s.kind === 'fetching');
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
      this.partitions.delay(states);
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
      if (!this.partitions.isCurrent(st) || st.fetchOffset !== sent.fetchOffset || st.kind !== 'fetching') {
        this.logger.debug(
          { fetcher: this.name, partition: st.key, highWatermark: data.highWatermark },
          'answer dropped: the partition changed while the fetch was out',
        );
        continue;
      }
      if (data.errorCode === ErrorCode.NONE) st.answered = true;
      switch (data.errorCode) {
        case ErrorCode.NONE:
          if (truncationOnFetch && data.divergingEpoch && (data.divergingEpoch.epoch >= 0 || data.divergingEpoch.endOffset >= 0)) {
            diverging.push({ st, ...data.divergingEpoch });
          } else {
            await processPartitionData(this.view, st, data, truncationOnFetch);
          }
          break;
        case ErrorCode.OFFSET_OUT_OF_RANGE:
          if (!(await handleOutOfRange(this.view, st))) this.partitions.delay([st]);
          break;
        case ErrorCode.FENCED_LEADER_EPOCH:
          // Our epoch is older than the leader's: a LeaderAndIsr is on its way.
          this.partitions.fenced(st);
          break;
        default:
          // NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH (the leader has not caught up with the
          // controller yet), UNKNOWN_TOPIC_OR_PARTITION...: retry after the backoff.
          this.logger.debug({ fetcher: this.name, partition: st.key, errorCode: data.errorCode }, 'replica fetch error; backing off');
          // A partition just added (new topic, new leader) whose leader is not ready for it yet is
          // asked again soon: a whole backoff (1 s) would hold up every acks=all produce to it.
          if (!st.answered && LEADER_NOT_READY.has(data.errorCode) && st.quickRetries++ < QUICK_RETRIES)
            this.partitions.delay([st], Math.min(this.cfg.fetchBackoffMs, QUICK_RETRY_MS));
          else this.partitions.delay([st]);
      }
    }
    // Kafka's truncateOnFetchResponse.
    for (const d of diverging) {
      if (!this.partitions.isCurrent(d.st)) continue;
      const point = truncationPoint({ leaderEpoch: d.epoch, endOffset: d.endOffset }, d.st.replica, d.st.fetchOffset);
      if (await this.partitions.truncate(d.st, point.offset, `diverging epoch ${d.epoch} ending at ${d.endOffset}`))
        this.partitions.afterTruncation(d.st, point.offset, point.complete, truncationOnFetch);
    }
  }
}
