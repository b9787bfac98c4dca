/**
 * Leader epoch → start offset history of one partition, persisted in `leader-epoch-checkpoint`.
 * Replication uses it to answer OffsetForLeaderEpoch and to truncate diverging followers.
 */
import path from 'node:path';
import { LEADER_EPOCH_CHECKPOINT, readLeaderEpochCheckpoint, writeLeaderEpochCheckpoint, type EpochEntry } from '../checkpoint/checkpoint-files.js';

export class LeaderEpochCache {
  private entries: EpochEntry[] = [];
  private readonly file: string;

  constructor(dir: string) {
    this.file = path.join(dir, LEADER_EPOCH_CHECKPOINT);
  }

  /** Loads the checkpoint; an unreadable file is treated as empty (the history is advisory). */
  async load(onProblem: (msg: string) => void): Promise<void> {
    try {
      this.entries = await readLeaderEpochCheckpoint(this.file);
    } catch (err) {
      onProblem(`ignoring unreadable ${this.file}: ${(err as Error).message}`);
      this.entries = [];
    }
  }

  all(): readonly EpochEntry[] {
    return this.entries;
  }

  /** The epoch in force at `offset` (the last one starting at or before it), -1 if unknown. */
  epochAt(offset: number): number {
    let epoch = -1;
    for (const e of this.entries) {
      if (e.startOffset <= offset) epoch = e.epoch;
      else break;
    }
    return epoch;
  }

  latestEpoch(): number {
    return this.entries.length === 0 ? -1 : this.entries[this.entries.length - 1]!.epoch;
  }

  /**
   * Records that `epoch` starts at `startOffset`; returns true when the history changed. Only a
   * newer epoch is recorded; entries it supersedes (starting at or after `startOffset`: an epoch
   * a leader took at its log end and wrote nothing in) are dropped, as Kafka's assign does.
   */
  assign(epoch: number, startOffset: number): boolean {
    if (epoch < 0) return false;
    const latest = this.entries[this.entries.length - 1];
    if (latest && epoch <= latest.epoch) return false;
    while (this.entries.length > 0 && this.entries[this.entries.length - 1]!.startOffset >= startOffset) this.entries.pop();
    this.entries.push({ epoch, startOffset });
    return true;
  }

  /**
   * Kafka's LeaderEpochFileCache.endOffsetFor: the latest epoch ends at the log end; an older one
   * as (largest epoch <= requested, start of the next); one below every epoch known here as
   * (requested, start of the first known), so a replica that wrote that epoch alone (a leader
   * whose records no follower fetched before it died) cuts everything of it; (-1, -1) for
   * undefined, an empty cache, or an epoch newer than the latest.
   */
  endOffsetFor(epoch: number, logEndOffset: number): { epoch: number; endOffset: number } {
    const undefinedEpoch = { epoch: -1, endOffset: -1 };
    const latest = this.entries.at(-1);
    if (epoch < 0 || !latest) return undefinedEpoch;
    if (epoch === latest.epoch) return { epoch, endOffset: logEndOffset };
    const higher = this.entries.findIndex((e) => e.epoch > epoch);
    if (higher < 0) return undefinedEpoch;
    if (higher === 0) return { epoch, endOffset: this.entries[0]!.startOffset };
    return { epoch: this.entries[higher - 1]!.epoch, endOffset: this.entries[higher]!.startOffset };
  }

  /** Drops entries starting at or after offset (log truncated to offset). */
  truncateFromEnd(offset: number): boolean {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.startOffset < offset);
    return this.entries.length !== before;
  }

  /** The log start moved: entries entirely before it collapse into one starting at it. */
  truncateFromStart(offset: number): boolean {
    let changed = false;
    while (this.entries.length > 1 && this.entries[1]!.startOffset <= offset) {
      this.entries.shift();
      changed = true;
    }
    const first = this.entries[0];
    if (first && first.startOffset < offset) {
      first.startOffset = offset;
      changed = true;
    }
    return changed;
  }

  clear(): void {
    this.entries = [];
  }

  async persist(): Promise<void> {
    await writeLeaderEpochCheckpoint(this.file, this.entries);
  }
}
