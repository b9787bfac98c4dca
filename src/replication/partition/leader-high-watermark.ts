/**
 * A leader's high watermark and what waits on it (Kafka's Partition.maybeIncrementLeaderHW and
 * the purgatories it wakes): the high watermark is the lowest log end offset in the ISR, moved
 * at once by each append while the leader is alone in it (embedded mode), else by followers'
 * fetches. Each move wakes the consumer fetches parked for data, told how many bytes became
 * visible (unreplicated-appends.ts), and the operations waiting on the partition's state
 * (acks=all produces, DeleteRecords), which ISR and leadership changes wake too. Partition owns
 * one; replica fetches park here as well, woken by every append since they read to the log end.
 */
import type { AppendResult } from '../../storage/log/append-types.js';
import type { UnifiedLog } from '../../storage/log/unified-log.js';
import type { PartitionIsr } from './isr/partition-isr.js';
import type { Partition } from './partition.js';
import { UnreplicatedAppends } from './unreplicated-appends.js';

/** Something waiting for data on this partition (a long-polling fetch). */
export interface AppendWaiter {
  onAppend(partition: Partition, bytes: number, firstOffset: number): void;
}

/** Something waiting for the high watermark, the ISR or leadership to change (an acks=all produce). */
export interface StateWaiter {
  onStateChange(partition: Partition): void;
}

export class LeaderHighWatermark {
  /** Consumer fetches parked for data: woken when the high watermark moves. */
  readonly waiters = new Set<AppendWaiter>();
  /** Replica fetches parked for data: woken by every append (they read up to the log end). */
  readonly replicaWaiters = new Set<AppendWaiter>();
  /** acks=all produces and DeleteRecords waiting for the high watermark, the ISR or leadership. */
  readonly stateWaiters = new Set<StateWaiter>();
  /** Appends above the high watermark, to tell parked consumer fetches what became visible. */
  private readonly unreplicated = new UnreplicatedAppends();

  constructor(
    private readonly partition: Partition,
    private readonly log: UnifiedLog,
    private readonly isr: PartitionIsr,
    /** Sets the log's high watermark and tells the partition's owner. */
    private readonly setHw: (hw: number) => void,
  ) {}

  /** HW = the lowest log end offset in the (maximal) ISR; it only moves forward. */
  maybeIncrement(): void {
    if (!this.partition.isLeader) return;
    const hw = this.isr.replicatedOffset();
    const current = this.log.highWatermark;
    if (hw <= current) return;
    const bytes = this.unreplicated.takeCovered(hw);
    this.advance(hw, Math.max(bytes, 1), current);
  }

  /**
   * After a leader append: replica fetches parked for data wake; with the leader alone in the
   * ISR (embedded mode) the HW is the new log end at once, else it waits for the followers.
   */
  afterLeaderAppend(res: AppendResult, bytes: number): void {
    const { firstOffset, lastOffset } = res;
    if (this.replicaWaiters.size > 0) for (const w of [...this.replicaWaiters]) w.onAppend(this.partition, bytes, firstOffset);
    if (this.isr.leaderAlone) this.advance(this.log.logEndOffset, bytes, firstOffset);
    else {
      this.unreplicated.add(lastOffset + 1, bytes);
      this.maybeIncrement();
    }
  }

  /** Wakes the operations waiting on the high watermark, the ISR or leadership. */
  notifyState(): void {
    if (this.stateWaiters.size === 0) return;
    for (const w of [...this.stateWaiters]) w.onStateChange(this.partition);
  }

  /** The log was cut at `end`: appends beyond it will never be replicated. */
  dropBeyond(end: number): void {
    this.unreplicated.dropBeyond(end);
  }

  /** This broker follows now: its own appends above the high watermark are no longer tracked. */
  clear(): void {
    this.unreplicated.clear();
  }

  private advance(hw: number, bytes: number, firstOffset: number): void {
    if (hw <= this.log.highWatermark) return;
    this.setHw(hw);
    for (const w of [...this.waiters]) w.onAppend(this.partition, bytes, firstOffset);
    this.notifyState();
  }
}
