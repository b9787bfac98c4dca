/**
 * Leader epoch → start offset history of one partition, persisted in `leader-epoch-checkpoint`.
 * Replication uses it to answer OffsetForLeaderEpoch and to truncate diverging followers.
 */
import path from 'node:path';
import { LEADER_EPOCH_CHECKPOINT, readLeaderEpochCheckpoint, writeLeaderEpochCheckpoint, type EpochEntry } from './checkpoints.js';

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
   * Kafka's endOffsetFor: (largest epoch <= requested, its end offset); an epoch older than every
   * known one gets (that epoch, start of the first known epoch), as Kafka answers, so a replica
   * whose only epoch the leader never wrote in (say a leader that appended nothing) truncates to
   * there instead of being told its offset is out of range again and again; (-1, -1) with no
   * epochs or for epoch -1.
   */
  endOffsetFor(epoch: number, logEndOffset: number): { epoch: number; endOffset: number } {
    let idx = -1;
    for (let i = 0; i < this.entries.length; i++) if (this.entries[i]!.epoch <= epoch) idx = i;
    if (idx < 0) {
      const first = this.entries[0];
      return first && epoch >= 0 ? { epoch, endOffset: first.startOffset } : { epoch: -1, endOffset: -1 };
    }
    const next = this.entries[idx + 1];
    return { epoch: this.entries[idx]!.epoch, endOffset: next ? next.startOffset : logEndOffset };
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
