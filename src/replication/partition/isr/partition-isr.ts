/**
 * A partition's in-sync replica set and what its leader knows of each follower (Kafka's
 * Partition ISR state and Replica): the ISR and replicas as LeaderAndIsr last said, each
 * follower's fetch state (log end offset, last fetch and last caught-up times, log start), the
 * ISR's shrink and expand through an injected IsrWriter (one change in flight at a time), and the
 * lowest log end offset over the (maximal) ISR, which the partition makes its high watermark.
 *
 * The partition owns the log, the leader epoch and the high watermark; this module reads them
 * through `IsrHost` and tells the partition when an ISR write settles (`onIsrSettled`), so the
 * high watermark can move and waiting produces re-check.
 */

/** What the leader knows of one follower (Kafka's Replica). -1: not known yet. */
export interface FollowerState {
  logEndOffset: number;
  lastFetchTimeMs: number;
  /** The last time the follower was known to hold everything the leader held. */
  lastCaughtUpTimeMs: number;
  /** The leader's log end offset at the follower's previous fetch. */
  lastFetchLeaderLogEndOffset: number;
  /** The follower's log start offset as its last fetch reported it (DeleteRecords' low watermark). */
  logStartOffset: number;
}

/**
 * Writes an ISR change where the cluster keeps it (ZooKeeper in cluster mode). Resolves with the
 * new partition epoch (zkVersion), or 'BAD_VERSION' when the partition's state moved on
 * meanwhile (the change is given up; the controller's newer state comes by LeaderAndIsr).
 */
export interface IsrWriter {
  /** `previousIsr`: the ISR the change replaces, for the state-change log. */
  writeIsr(change: IsrChange, previousIsr?: readonly number[]): Promise<number | 'BAD_VERSION'>;
  /** Accepted ISR changes of this broker's leaders, counted here (Kafka's IsrShrinksPerSec / IsrExpandsPerSec). */
  readonly counts?: IsrChangeCounts;
}

/** Totals of accepted ISR shrinks and expands (plain numbers the metrics read). */
export interface IsrChangeCounts {
  shrinks: number;
  expands: number;
}

export interface IsrChange {
  topic: string;
  partition: number;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  controllerEpoch: number;
  /** The partition epoch (zkVersion) the change is conditional on. */
  partitionEpoch: number;
}

/** What the ISR state reads of its partition. */
export interface IsrHost {
  readonly topic: string;
  readonly partition: number;
  readonly isLeader: boolean;
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly logEndOffset: number;
  readonly logStartOffset: number;
  readonly highWatermark: number;
  /** The leader's log end offset when it took this epoch; a follower rejoins the ISR only past it. */
  readonly leaderEpochStartOffset: number;
}

export class PartitionIsr {
  /** In-sync replicas as last committed (LeaderAndIsr, or this leader's own accepted change). */
  isr: readonly number[] = [];
  /** The assigned replicas (LeaderAndIsr); [self] in embedded mode. */
  replicas: readonly number[] = [];
  /** zkVersion of the partition state znode this broker last knew (-1 in embedded mode). */
  partitionEpoch = -1;
  /** The controller epoch of the last LeaderAndIsr; written back with ISR changes. */
  controllerEpoch = -1;
  /** Where ISR changes are written; none in embedded mode (the ISR stays [self]). */
  writer: IsrWriter | undefined;
  /** An ISR change being written; the high watermark counts its members too (Kafka's maximal ISR). */
  private pending: readonly number[] | undefined;
  private readonly followers = new Map<number, FollowerState>();

  constructor(
    private readonly host: IsrHost,
    /** An ISR write settled (accepted, refused or failed): the HW may move, waiters re-check. */
    private readonly onIsrSettled: () => void,
  ) {}

  /** What LeaderAndIsr says of the ISR, as both roles record it; an ISR write in flight is moot. */
  take(isr: readonly number[], replicas: readonly number[], partitionEpoch: number, controllerEpoch: number): void {
    this.isr = [...isr];
    this.replicas = [...replicas];
    this.partitionEpoch = partitionEpoch;
    this.controllerEpoch = controllerEpoch;
    this.pending = undefined;
  }

  /**
   * This broker (`selfId`) leads now (Kafka's makeLeader, follower part): followers in the ISR
   * count as caught up now, the others as never; a broker that was not leading (`newLeader`)
   * forgets the followers' log end offsets, which it learns again from their next fetch.
   */
  resetFollowers(selfId: number, newLeader: boolean, nowMs: number): void {
    const leo = this.host.logEndOffset;
    for (const id of [...this.followers.keys()]) if (!this.replicas.includes(id)) this.followers.delete(id);
    for (const id of this.replicas) {
      if (id === selfId) continue;
      const f = this.followers.get(id);
      const lastCaughtUpTimeMs = this.isr.includes(id) ? nowMs : 0;
      if (!f || newLeader) {
        this.followers.set(id, { logEndOffset: -1, lastFetchTimeMs: nowMs, lastCaughtUpTimeMs, lastFetchLeaderLogEndOffset: leo, logStartOffset: -1 });
      } else {
        f.lastCaughtUpTimeMs = lastCaughtUpTimeMs;
        f.lastFetchLeaderLogEndOffset = leo;
        f.lastFetchTimeMs = nowMs;
      }
    }
  }

  /** A follower keeps no leader state. */
  clearFollowers(): void {
    this.followers.clear();
  }

  followerState(replicaId: number): Readonly<FollowerState> | undefined {
    return this.followers.get(replicaId);
  }

  /**
   * Records a replica fetch (Kafka's Replica.updateFetchState, then maybeExpandIsr): undefined
   * when `replicaId` is not a follower of this leader (nothing recorded), else whether the
   * follower's log start offset moved. The caller advances the high watermark.
   */
  updateFollowerFetchState(replicaId: number, fetchOffset: number, nowMs: number, logStartOffset: number): { logStartMoved: boolean } | undefined {
    const f = this.followers.get(replicaId);
    if (!f || !this.host.isLeader) return undefined;
    const logStartMoved = logStartOffset !== f.logStartOffset;
    f.logStartOffset = logStartOffset;
    const leaderEnd = this.host.logEndOffset;
    // Caught up now if it holds everything; caught up as of its previous fetch if it holds what
    // the leader held then (Kafka's rule, so a follower of a busy leader still counts).
    if (fetchOffset >= leaderEnd) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, nowMs);
    else if (fetchOffset >= f.lastFetchLeaderLogEndOffset) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
    f.logEndOffset = fetchOffset;
    f.lastFetchLeaderLogEndOffset = leaderEnd;
    f.lastFetchTimeMs = nowMs;
    this.maybeExpand(replicaId, f);
    return { logStartMoved };
  }

  /**
   * Kafka's lowWatermarkIfLeader: the lowest log start offset among this leader and its
   * followers on live brokers (-1 while a live follower has not reported one).
   */
  lowWatermark(isAlive: (brokerId: number) => boolean): number {
    let low = this.host.logStartOffset;
    for (const [id, f] of this.followers) if (f.logStartOffset < low && isAlive(id)) low = f.logStartOffset;
    return low;
  }

  /** The ISR the high watermark waits for: the committed one plus members of a change being written. */
  private maximal(): readonly number[] {
    if (!this.pending) return this.isr;
    return [...new Set([...this.isr, ...this.pending])];
  }

  private logEndOffsetOf(id: number): number {
    if (id === this.host.leaderId) return this.host.logEndOffset;
    return this.followers.get(id)?.logEndOffset ?? -1;
  }

  /** The lowest log end offset in the (maximal) ISR: where the high watermark may go. */
  replicatedOffset(): number {
    let hw = this.host.logEndOffset;
    for (const id of this.maximal()) hw = Math.min(hw, this.logEndOffsetOf(id));
    return hw;
  }

  /** The leader is alone in the ISR and no change is being written: its appends are committed at once. */
  get leaderAlone(): boolean {
    return this.pending === undefined && this.isr.length <= 1;
  }

  /** Whether an ISR change is being written. */
  get updateInFlight(): boolean {
    return this.pending !== undefined;
  }

  /** A follower out of the ISR rejoins once it holds the HW and this epoch's start (Kafka's isFollowerInSync). */
  private maybeExpand(replicaId: number, f: FollowerState): void {
    if (!this.writer || this.pending || this.isr.includes(replicaId)) return;
    if (f.logEndOffset < this.host.highWatermark || f.logEndOffset < this.host.leaderEpochStartOffset) return;
    this.submit([...this.isr, replicaId]);
  }

  /**
   * Kafka's maybeShrinkIsr: followers in the ISR that have not been caught up for more than
   * `maxLagMs` (and are not at the log end) leave it. Returns the replicas dropped.
   */
  maybeShrink(nowMs: number, maxLagMs: number): number[] {
    if (!this.host.isLeader || !this.writer || this.pending) return [];
    const leaderEnd = this.host.logEndOffset;
    const out = this.isr.filter((id) => {
      if (id === this.host.leaderId) return false;
      const f = this.followers.get(id);
      if (!f) return true;
      return f.logEndOffset !== leaderEnd && nowMs - f.lastCaughtUpTimeMs > maxLagMs;
    });
    if (out.length === 0) return [];
    this.submit(this.isr.filter((id) => !out.includes(id)));
    return out;
  }

  /**
   * Writes a new ISR (one change in flight at a time). While it is written the high watermark
   * waits for the larger of the two ISRs; once accepted the ISR and partition epoch move on; a
   * BAD_VERSION gives the change up. Either way the partition hears of it (onIsrSettled).
   */
  private submit(newIsr: number[]): void {
    const writer = this.writer!;
    this.pending = newIsr;
    const epoch = this.host.leaderEpoch;
    const change: IsrChange = {
      topic: this.host.topic,
      partition: this.host.partition,
      leader: this.host.leaderId,
      leaderEpoch: epoch,
      isr: newIsr,
      controllerEpoch: this.controllerEpoch,
      partitionEpoch: this.partitionEpoch,
    };
    const settle = (result: number | 'BAD_VERSION' | undefined): void => {
      // LeaderAndIsr moved the partition on meanwhile: its state wins.
      if (this.pending !== newIsr || !this.host.isLeader || this.host.leaderEpoch !== epoch) return;
      this.pending = undefined;
      // The followers' last caught-up times stay as they are: an ISR change is not a reason to
      // restart anyone's lag window (only a leader change is, resetFollowers, as Kafka's
      // resetReplicaState), else a second lagging follower stays a whole window longer.
      if (typeof result === 'number') {
        if (writer.counts) {
          if (newIsr.length < this.isr.length) writer.counts.shrinks++;
          else if (newIsr.length > this.isr.length) writer.counts.expands++;
        }
        this.isr = newIsr;
        this.partitionEpoch = result;
      }
      this.onIsrSettled();
    };
    writer.writeIsr(change, this.isr).then(settle, () => settle(undefined));
  }
}
