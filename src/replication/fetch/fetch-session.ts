/**
 * Incremental fetch sessions (KIP-227). A full fetch with epoch 0 creates a session holding the
 * partitions the client fetches; later requests (same session id, expected epoch) carry only
 * changed partitions and forgotten ones, and the response only partitions with news (data, an
 * error, or a moved high watermark / last stable offset / log start offset).
 *
 * The cache has a slot limit (max.incremental.fetch.session.cache.slots, 1000 in Kafka). When
 * full, a session idle for longer than the eviction time goes first; failing that, a session
 * with fewer partitions than the new one (big sessions save the most bandwidth); otherwise the
 * new session is not created and the client keeps doing full fetches (session id 0).
 */

export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
export const DEFAULT_SESSION_SLOTS = 1000;
export const DEFAULT_EVICTION_MS = 120_000;

export interface SessionPartition {
  topic: string;
  topicId: string;
  partition: number;
  fetchOffset: number;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  /** Fetch v12+ (followers): the epoch of the fetcher's last batch; -1 = none. */
  lastFetchedEpoch?: number;
  /** Fetch v5+ (followers): the fetcher's log start offset; -1 = not given. */
  replicaLogStartOffset?: number;
  /** What the last response told the client; -2 = never sent. */
  sentHighWatermark: number;
  sentLastStableOffset: number;
  sentLogStartOffset: number;
}

export class FetchSession {
  /** The epoch the next incremental request must carry. */
  epoch = 1;
  lastUsedMs: number;
  readonly partitions = new Map<string, SessionPartition>();

  constructor(
    readonly id: number,
    readonly usesTopicIds: boolean,
    now: number,
  ) {
    this.lastUsedMs = now;
  }

  static key(topicOrId: string, partition: number): string {
    return `${topicOrId}\u0000${partition}`;
  }

  keyOf(p: { topic: string; topicId: string; partition: number }): string {
    return FetchSession.key(this.usesTopicIds ? p.topicId : p.topic, p.partition);
  }

  /** Adds or updates a partition the client (re)sent. */
  upsert(p: Omit<SessionPartition, 'sentHighWatermark' | 'sentLastStableOffset' | 'sentLogStartOffset'>): SessionPartition {
    const key = this.keyOf(p);
    const existing = this.partitions.get(key);
    if (existing) {
      existing.fetchOffset = p.fetchOffset;
      existing.partitionMaxBytes = p.partitionMaxBytes;
      existing.currentLeaderEpoch = p.currentLeaderEpoch;
      existing.lastFetchedEpoch = p.lastFetchedEpoch;
      existing.replicaLogStartOffset = p.replicaLogStartOffset;
      existing.topic = p.topic;
      return existing;
    }
    const fresh = { ...p, sentHighWatermark: -2, sentLastStableOffset: -2, sentLogStartOffset: -2 };
    this.partitions.set(key, fresh);
    return fresh;
  }

  forget(topicOrId: string, partition: number): void {
    this.partitions.delete(FetchSession.key(topicOrId, partition));
  }

  advanceEpoch(): void {
    this.epoch = this.epoch === 0x7fffffff ? 1 : this.epoch + 1;
  }

  /**
   * Records what is being sent for `p` and says whether an incremental response must include
   * it: always when there is an error or data, else only when one of its offsets moved.
   */
  noteResponse(
    p: SessionPartition,
    r: { errorCode: number; highWatermark: number; lastStableOffset: number; logStartOffset: number; bytes: number; divergingEpoch?: unknown },
  ): boolean {
    if (r.divergingEpoch !== undefined) {
      // The follower truncates and discards the rest of this answer (as Kafka's does): its
      // offsets are not delivered, so the next answer must carry them even if they did not move,
      // or an idle partition's follower keeps a stale high watermark.
      p.sentHighWatermark = p.sentLastStableOffset = p.sentLogStartOffset = -2;
      return true;
    }
    let include = r.errorCode !== 0 || r.bytes > 0;
    if (p.sentHighWatermark !== r.highWatermark) {
      p.sentHighWatermark = r.highWatermark;
      include = true;
    }
    if (p.sentLastStableOffset !== r.lastStableOffset) {
      p.sentLastStableOffset = r.lastStableOffset;
      include = true;
    }
    if (p.sentLogStartOffset !== r.logStartOffset) {
      p.sentLogStartOffset = r.logStartOffset;
      include = true;
    }
    return include;
  }
}

export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();

  constructor(
    readonly maxSlots: number = DEFAULT_SESSION_SLOTS,
    readonly evictionMs: number = DEFAULT_EVICTION_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** The session, marked as used now. */
  get(id: number): FetchSession | undefined {
    const s = this.sessions.get(id);
    if (s) s.lastUsedMs = this.clock();
    return s;
  }

  remove(id: number): boolean {
    return this.sessions.delete(id);
  }

  /** Creates a session for `partitionCount` partitions, or returns undefined when no slot can be freed. */
  create(usesTopicIds: boolean, partitionCount: number): FetchSession | undefined {
    const now = this.clock();
    if (this.maxSlots <= 0) return undefined;
    if (this.sessions.size >= this.maxSlots && !this.evictOne(now, partitionCount)) return undefined;
    let id: number;
    do id = 1 + Math.floor(Math.random() * 0x7ffffffe);
    while (this.sessions.has(id));
    const s = new FetchSession(id, usesTopicIds, now);
    this.sessions.set(id, s);
    return s;
  }

  private evictOne(now: number, newSize: number): boolean {
    let stale: FetchSession | undefined;
    let smaller: FetchSession | undefined;
    for (const s of this.sessions.values()) {
      if (now - s.lastUsedMs > this.evictionMs && (!stale || s.lastUsedMs < stale.lastUsedMs)) stale = s;
      if (s.partitions.size < newSize && (!smaller || s.partitions.size < smaller.partitions.size)) smaller = s;
    }
    const victim = stale ?? smaller;
    if (!victim) return false;
    this.sessions.delete(victim.id);
    return true;
  }
}
