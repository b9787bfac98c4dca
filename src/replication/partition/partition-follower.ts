/**
 * The follower side of a Partition (issue 12): what the replica fetcher does to a partition led
 * elsewhere. Appends of the leader's batches (Kafka's Partition.appendRecordsToFollowerOrFutureReplica),
 * truncation, the follower's high watermark (UnifiedLog.maybeUpdateHighWatermark) and its log
 * start following the leader's.
 *
 * The partition's log (a UnifiedLog) keeps producer state and the transaction index in step with
 * every append and truncation; this module takes the partition's append lock it is given (so
 * every change here is serialised with the partition's other appends, truncations and
 * snapshots) and moves the high watermark through `setHighWatermark`, which the partition's
 * listener hears of.
 */
import type { AppendResult } from '../../storage/log/append-types.js';
import { existingOffsetRange } from '../../storage/append/append-step.js';
import { UnexpectedAppendOffsetError } from '../../storage/errors.js';
import type { Mutex } from '../../common/mutex.js';
import type { UnifiedLog } from '../../storage/log/unified-log.js';

export class PartitionFollower {
  constructor(
    private readonly log: UnifiedLog,
    /** The partition's append lock. */
    private readonly appendLock: Mutex,
    /** Sets the partition's high watermark (it may go back); producer state and the checkpoint follow. */
    private readonly setHighWatermark: (hw: number) => void,
  ) {}

  /**
   * Appends batches fetched from the leader, as the leader wrote them: the log checks CRCs and
   * offsets and learns the batches' leader epochs; idempotent producers' state follows, so a
   * promotion to leader keeps sequence checks. One special case as Kafka: an empty log whose
   * start offset falls inside the leader's first batch (DeleteRecords cut a batch) restarts at
   * that batch's base offset.
   */
  append(batches: Buffer): Promise<AppendResult> {
    const log = this.log;
    return this.appendLock.run(async () => {
      let res: AppendResult;
      try {
        res = await log.appendAsFollower(batches);
      } catch (err) {
        const range = err instanceof UnexpectedAppendOffsetError && batches.length > 0 ? existingOffsetRange(batches) : undefined;
        const end = log.logEndOffset;
        if (!range || end !== log.logStartOffset || range.first >= end || range.last < end) throw err;
        log.logger.info(`${log.name}: the leader's first batch starts at ${range.first}, before the empty log's start ${end}; restarting the log there`);
        await log.truncateFullyAndStartAt(range.first);
        this.setHighWatermark(range.first);
        res = await log.appendAsFollower(batches);
      }
      return res;
    });
  }

  /** Removes the log at and after `offset`; HW and producer state follow. */
  truncateTo(offset: number): Promise<void> {
    const log = this.log;
    return this.appendLock.run(async () => {
      const hw = log.highWatermark;
      await log.truncateTo(offset);
      // The log brought its high watermark down to its end: the partition hears of it.
      if (hw > log.logEndOffset) this.setHighWatermark(log.logEndOffset);
    });
  }

  /** Empties the log and restarts it at `offset` (the leader's log start is beyond ours). */
  truncateFullyAndStartAt(offset: number): Promise<void> {
    const log = this.log;
    return this.appendLock.run(async () => {
      await log.truncateFullyAndStartAt(offset);
      this.setHighWatermark(offset);
    });
  }

  /**
   * The leader's high watermark, bounded by what this replica holds: within [log start, log
   * end], and it may go back. Returns the high watermark now.
   */
  followLeaderHighWatermark(leaderHw: number): number {
    const log = this.log;
    const hw = Math.max(log.logStartOffset, Math.min(leaderHw, log.logEndOffset));
    if (hw !== log.highWatermark) this.setHighWatermark(hw);
    return log.highWatermark;
  }

  /** The leader's log start moved (retention, DeleteRecords): follow it up to our high watermark. */
  async followLeaderLogStartOffset(leaderLogStartOffset: number): Promise<void> {
    const log = this.log;
    if (leaderLogStartOffset <= log.logStartOffset || leaderLogStartOffset > log.highWatermark) return;
    await log.deleteRecordsBefore(leaderLogStartOffset);
  }
}
