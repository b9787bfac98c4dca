/**
 * A partition this broker hosts (leader, or in cluster mode follower), as Kafka's Partition: its
 * role and leader epoch, the ISR (isr/partition-isr.ts), the high watermark's advance (the
 * lowest log end offset in the ISR; at once when the leader is alone in it, as in embedded
 * mode) and the operations waiting on them, over its storage UnifiedLog (segments, epochs,
 * producer state, the high watermark's value). Appends are serialised here (producer checks and
 * the log append are one step); reads go straight to the log (partition-reads.ts, its base).
 * The follower side is partition-follower.ts; the high watermark's advance and the operations
 * waiting on it are leader-high-watermark.ts; produces keep their arrival order (arrival-order.ts).
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { AppendResult } from '../../storage/log/append-types.js';
import { Mutex } from '../../common/mutex.js';
import type { UnifiedLog } from '../../storage/log/unified-log.js';
import { DelayedDeleteRecords, type DeleteRecordsResult } from '../delayed/delayed-delete-records.js';
import { PartitionIsr, type FollowerState, type IsrWriter } from './isr/partition-isr.js';
import { PartitionFollower } from './partition-follower.js';
import { ArrivalOrder, type ArrivalTurn } from './arrival-order.js';
import { LeaderHighWatermark } from './leader-high-watermark.js';
import { PartitionReads } from './partition-reads.js';

export type { FollowerState, IsrChange, IsrChangeCounts, IsrWriter } from './isr/partition-isr.js';
export type { AppendWaiter, StateWaiter } from './leader-high-watermark.js';

export interface LeaderAppendResult {
  errorCode: number;
  errorMessage?: string;
  baseOffset: number;
  /** The last offset appended (of the original batch for a duplicate); -1 on failure. */
  lastOffset: number;
  logAppendTime: number;
  logStartOffset: number;
}

/** The answer to "has an acks=all append reached every in-sync replica?" (Kafka's checkEnoughReplicasReachOffset). */
export type ReplicationCheck = { done: false } | { done: true; errorCode: number };

export class Partition extends PartitionReads {
  leaderEpoch: number;
  topicId: string;
  /**
   * Whether this broker leads the partition: the one check the produce and fetch paths make.
   * Always true in embedded mode; in cluster mode set by LeaderAndIsr (makeLeader/makeFollower).
   */
  isLeader = true;
  /** The leader as the controller last said (-1: none); this broker's id while isLeader. */
  leaderId = -1;
  /** The leader's log end offset when it took this epoch; a follower rejoins the ISR only past it. */
  leaderEpochStartOffset = -1;
  /** LeaderAndIsr named replicas being added or removed (a reassignment in progress; Kafka's isReassigning). */
  reassigning = false;
  /** The ISR, replicas and followers' fetch state (leader side), and ISR changes. */
  private readonly isrState: PartitionIsr = new PartitionIsr(this, () => {
    this.hw.maybeIncrement();
    this.hw.notifyState();
  });
  /** The high watermark's advance and the operations parked on it (leader-high-watermark.ts). */
  private readonly hw: LeaderHighWatermark;
  private readonly appendLock = new Mutex();
  /** The replica fetcher's operations while this broker follows (partition-follower.ts). */
  private readonly follower: PartitionFollower;
  /** Produces reach the log in the order they arrived, whatever their validation takes. */
  private readonly arrivals = new ArrivalOrder();

  private constructor(
    log: UnifiedLog,
    topicId: string,
    leaderEpoch: number,
    private readonly onHighWatermark: (p: Partition) => void,
  ) {
    super(log);
    this.topicId = topicId;
    this.leaderEpoch = leaderEpoch;
    this.follower = new PartitionFollower(log, this.appendLock, (hw) => this.setHw(hw));
    this.hw = new LeaderHighWatermark(this, log, this.isrState, (hw) => this.setHw(hw));
  }

  /** Consumer fetches parked for data, woken when the high watermark moves. */
  get waiters(): LeaderHighWatermark['waiters'] {
    return this.hw.waiters;
  }
  /** Replica fetches parked for data, woken by every append. */
  get replicaWaiters(): LeaderHighWatermark['replicaWaiters'] {
    return this.hw.replicaWaiters;
  }
  /** acks=all produces and DeleteRecords waiting for the high watermark, the ISR or leadership. */
  get stateWaiters(): LeaderHighWatermark['stateWaiters'] {
    return this.hw.stateWaiters;
  }

  /**
   * Hosts an opened log (its producer state recovered when it opened). The high watermark starts
   * at the log end (a single broker's log is all committed) unless `initialHighWatermark`
   * (cluster mode: the checkpointed one) says less is known to be replicated.
   * `onHighWatermark` hears of every later change.
   */
  static async open(
    log: UnifiedLog,
    topicId: string,
    leaderEpoch: number,
    onHighWatermark: (p: Partition) => void = () => undefined,
    initialHighWatermark?: number,
  ): Promise<Partition> {
    const end = log.logEndOffset;
    log.updateHighWatermark(initialHighWatermark === undefined ? end : Math.max(0, Math.min(initialHighWatermark, end)));
    return new Partition(log, topicId, leaderEpoch, onHighWatermark);
  }

  /** In-sync replicas as last committed (LeaderAndIsr, or this leader's own accepted change). */
  get isr(): readonly number[] {
    return this.isrState.isr;
  }
  /** The assigned replicas (LeaderAndIsr); [self] in embedded mode. */
  get replicas(): readonly number[] {
    return this.isrState.replicas;
  }
  /** zkVersion of the partition state znode this broker last knew (-1 in embedded mode). */
  get partitionEpoch(): number {
    return this.isrState.partitionEpoch;
  }
  /** The controller epoch of the last LeaderAndIsr; written back with ISR changes. */
  get controllerEpoch(): number {
    return this.isrState.controllerEpoch;
  }
  /** Where ISR changes are written; none in embedded mode (the ISR stays [self]). */
  get isrWriter(): IsrWriter | undefined {
    return this.isrState.writer;
  }
  set isrWriter(writer: IsrWriter | undefined) {
    this.isrState.writer = writer;
  }

  /**
   * LeaderAndIsr made this broker the leader at `leaderEpoch` (Kafka's Partition.makeLeader):
   * the ISR and replicas as the controller wrote them; followers in the ISR count as caught up
   * now, the others as never; a broker that was not leading forgets the followers' log end
   * offsets, which it learns again from their next fetch. Embedded mode: isr = replicas = [self].
   * A new epoch starts at the log end and goes into the leader-epoch cache at once (Kafka's
   * maybeAssignEpochStartOffset), so OffsetForLeaderEpoch knows it before any append; the
   * returned promise settles once the checkpoint has it.
   */
  makeLeader(
    selfId: number,
    leaderEpoch: number,
    isr: readonly number[] = [selfId],
    replicas: readonly number[] = [selfId],
    partitionEpoch = -1,
    controllerEpoch = -1,
  ): Promise<void> {
    const now = Date.now();
    const newLeader = !this.isLeader;
    const newEpoch = newLeader || leaderEpoch !== this.leaderEpoch || this.leaderEpochStartOffset < 0;
    this.takeRole(true, selfId, leaderEpoch, isr, replicas, partitionEpoch, controllerEpoch);
    const leo = this.log.logEndOffset;
    if (newEpoch) this.leaderEpochStartOffset = leo;
    const checkpointed = newEpoch ? this.log.assignEpochStartOffset(leaderEpoch, leo) : Promise.resolve();
    this.isrState.resetFollowers(selfId, newLeader, now);
    this.hw.maybeIncrement();
    this.hw.notifyState();
    return checkpointed;
  }

  /** LeaderAndIsr made `leaderId` the leader: the leader state is dropped, waiting acks=all produces are answered. */
  makeFollower(
    leaderId: number,
    leaderEpoch: number,
    isr: readonly number[] = this.isr,
    replicas: readonly number[] = this.replicas,
    partitionEpoch = this.partitionEpoch,
    controllerEpoch = this.controllerEpoch,
  ): void {
    this.takeRole(false, leaderId, leaderEpoch, isr, replicas, partitionEpoch, controllerEpoch);
    this.leaderEpochStartOffset = -1;
    this.isrState.clearFollowers();
    this.hw.clear();
    this.hw.notifyState();
  }

  /** What LeaderAndIsr says of the partition, as both roles record it; an ISR write in flight is moot. */
  private takeRole(
    leader: boolean,
    leaderId: number,
    leaderEpoch: number,
    isr: readonly number[],
    replicas: readonly number[],
    partitionEpoch: number,
    controllerEpoch: number,
  ): void {
    this.isLeader = leader;
    this.leaderId = leaderId;
    this.leaderEpoch = leaderEpoch;
    this.isrState.take(isr, replicas, partitionEpoch, controllerEpoch);
  }

  /** A follower's fetch state as the leader last recorded it (tests, DescribeLogDirs-style views). */
  followerState(replicaId: number): Readonly<FollowerState> | undefined {
    return this.isrState.followerState(replicaId);
  }

  /**
   * A replica fetch from `replicaId` at `fetchOffset` (Kafka's Replica.updateFetchState, then
   * maybeExpandIsr and maybeIncrementLeaderHW). Returns false when `replicaId` is not one of
   * this partition's replicas (the caller answers an error, nothing recorded). `logStartOffset`
   * is the follower's own (Fetch v5+; -1 unknown): a move wakes waiting DeleteRecords.
   */
  updateFollowerFetchState(replicaId: number, fetchOffset: number, nowMs: number, logStartOffset = -1): boolean {
    const recorded = this.isrState.updateFollowerFetchState(replicaId, fetchOffset, nowMs, logStartOffset);
    if (!recorded) return false;
    this.hw.maybeIncrement();
    if (recorded.logStartMoved) this.hw.notifyState();
    return true;
  }

  /** Kafka's lowWatermarkIfLeader: the lowest log start among this leader and its live followers (-1: one not reported yet). */
  lowWatermark(isAlive: (brokerId: number) => boolean = () => true): number {
    return this.isrState.lowWatermark(isAlive);
  }

  /**
   * DeleteRecords moved this leader's log start to (at least) `requiredOffset`: resolves once the
   * low watermark has followed (every live replica moved its log start), REQUEST_TIMED_OUT after
   * `timeoutMs`, NOT_LEADER_OR_FOLLOWER if leadership goes meanwhile (Kafka's DelayedDeleteRecords).
   */
  awaitLowWatermark(requiredOffset: number, timeoutMs: number, isAlive: (brokerId: number) => boolean): Promise<DeleteRecordsResult> {
    return new DelayedDeleteRecords(this, requiredOffset, timeoutMs, isAlive).completed;
  }

  /** Kafka's maybeShrinkIsr: ISR followers not caught up for over `maxLagMs` (nor at the log end) leave it; returns them. */
  maybeShrinkIsr(nowMs: number, maxLagMs: number): number[] {
    return this.isrState.maybeShrink(nowMs, maxLagMs);
  }

  /** Whether an ISR change is being written. */
  get isrUpdateInFlight(): boolean {
    return this.isrState.updateInFlight;
  }

  /**
   * Kafka's checkEnoughReplicasReachOffset: has the high watermark passed `requiredOffset` (the
   * append's last offset + 1)? Then the append is done, NOT_ENOUGH_REPLICAS_AFTER_APPEND when
   * the ISR meanwhile shrank below `minIsr`. Not the leader any more: NOT_LEADER_OR_FOLLOWER.
   */
  checkEnoughReplicasReachOffset(requiredOffset: number, minIsr: number): ReplicationCheck {
    if (!this.isLeader) return { done: true, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    if (this.log.highWatermark < requiredOffset) return { done: false };
    return { done: true, errorCode: this.isr.length >= minIsr ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND };
  }

  /**
   * The transaction coordinator's commit or abort marker (WriteTxnMarkers), as the leader: the
   * log fences and appends it (UnifiedLog.appendTxnMarker). Answered once appended; the caller
   * waits for the ISR as for an acks=all produce.
   */
  appendTxnMarker(m: { producerId: bigint; producerEpoch: number; coordinatorEpoch: number; commit: boolean; timestamp: number }): Promise<LeaderAppendResult> {
    return this.appendLock.run(async () => {
      const res = await this.log.appendTxnMarker(m, this.leaderEpoch);
      return 'errorCode' in res ? this.failure(res.errorCode, res.message) : this.appended(res.appended, res.bytes);
    });
  }

  /** A produce's turn to append, taken on arrival (arrival-order.ts). */
  takeArrivalTurn(): ArrivalTurn {
    return this.arrivals.takeTurn();
  }

  /**
   * Leader append of validated v2 batches: idempotence checks, log append, producer state,
   * high watermark. A duplicate of one of a producer's last five batches is answered with its
   * original base offset and no error, as Kafka does. The batches' CRCs must have been checked
   * already (prepareProducedRecords does; a coordinator's batch is trusted), so the log's one
   * pass (storage/append/append-step.ts) checks producers and assigns offsets without
   * re-validating. `fromClient` false (a coordinator's own batches): producer sequences are not
   * checked, only epochs.
   */
  appendAsLeader(batches: Buffer, fromClient = true): Promise<LeaderAppendResult> {
    return this.appendLock.run(async () => {
      const res = await this.log.appendAsLeader(batches, this.leaderEpoch, fromClient);
      const check = res.refused;
      if (check?.kind === 'error') return this.failure(check.errorCode, check.message);
      if (check?.kind === 'duplicate') {
        return {
          errorCode: ErrorCode.NONE,
          baseOffset: check.firstOffset,
          lastOffset: check.lastOffset,
          logAppendTime: -1,
          logStartOffset: this.log.logStartOffset,
        };
      }
      return this.appended(res, batches.length);
    });
  }

  private failure(errorCode: number, errorMessage: string): LeaderAppendResult {
    return { errorCode, errorMessage, baseOffset: -1, lastOffset: -1, logAppendTime: -1, logStartOffset: this.log.logStartOffset };
  }

  /** A leader append done: the high watermark and the waiters follow (LeaderHighWatermark.afterLeaderAppend). */
  private appended(res: AppendResult, bytes: number): LeaderAppendResult {
    this.hw.afterLeaderAppend(res, bytes);
    return {
      errorCode: ErrorCode.NONE,
      baseOffset: res.firstOffset,
      lastOffset: res.lastOffset,
      logAppendTime: res.logAppendTime,
      logStartOffset: res.logStartOffset,
    };
  }

  /** The log was cut (DeleteRecords moves the start, truncation moves the end): resync HW and producers. */
  onLogTruncated(): void {
    const end = this.log.logEndOffset;
    if (this.log.highWatermark > end) this.log.updateHighWatermark(end);
    this.hw.dropBeyond(end);
    this.producers.truncateFrom(end);
  }

  /** Writes a producer state snapshot at the log end when the state changed since the last one (under the append lock). */
  async snapshotProducerState(force = false): Promise<void> {
    if (!this.log.producerStateChangedSinceSnapshot(force)) return;
    await this.appendLock.run(() => this.log.snapshotProducerState(force));
  }

  // ---- Follower side (issue 12): the replica fetcher's operations on a partition led elsewhere,
  // in partition-follower.ts; serialised with every other append and truncation of the partition.

  /** Appends batches fetched from the leader, as the leader wrote them (Kafka's appendRecordsToFollowerOrFutureReplica). */
  appendAsFollower(batches: Buffer): Promise<AppendResult> {
    return this.follower.append(batches);
  }

  /** Removes the log at and after `offset` (a follower's truncation); HW and producer state follow. */
  truncateTo(offset: number): Promise<void> {
    return this.follower.truncateTo(offset);
  }

  /** Empties the log and restarts it at `offset` (the leader's log start is beyond ours). */
  truncateFullyAndStartAt(offset: number): Promise<void> {
    return this.follower.truncateFullyAndStartAt(offset);
  }

  /** A follower's high watermark: the leader's, bounded by what this replica holds. Returns the high watermark now. */
  setFollowerHighWatermark(leaderHw: number): number {
    return this.follower.followLeaderHighWatermark(leaderHw);
  }

  /** The leader's log start moved (retention, DeleteRecords): follow it up to our high watermark. */
  followLeaderLogStartOffset(leaderLogStartOffset: number): Promise<void> {
    return this.follower.followLeaderLogStartOffset(leaderLogStartOffset);
  }

  /** Resolves once every append and truncation queued so far is done (a leader's last produce before following). */
  appendsDone(): Promise<void> {
    return this.appendLock.run(async () => undefined);
  }

  /** Sets the high watermark (a follower's may go back); producer state and the checkpoint follow. */
  private setHw(hw: number): void {
    this.log.updateHighWatermark(hw);
    this.onHighWatermark(this);
  }
}
