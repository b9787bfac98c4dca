/**
 * Committed offsets of the groups of one `__consumer_offsets` partition:
 * group → topic → partition → offset and metadata.
 */

export interface CommittedOffset {
  offset: bigint;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
  /** Absolute expiry carried by old commits (v1 timestamp, v2–v4 retention); -1 when none. */
  expireTimestamp: number;
}

export class OffsetStore {
  private readonly byGroup = new Map<string, Map<string, Map<number, CommittedOffset>>>();

  get(group: string, topic: string, partition: number): CommittedOffset | undefined {
    return this.byGroup.get(group)?.get(topic)?.get(partition);
  }

  /** Sets (or, with undefined, removes) one offset; returns what was there before. */
  set(group: string, topic: string, partition: number, value: CommittedOffset | undefined): CommittedOffset | undefined {
    let topics = this.byGroup.get(group);
    const before = topics?.get(topic)?.get(partition);
    if (value === undefined) {
      if (!topics) return before;
      const parts = topics.get(topic);
      parts?.delete(partition);
      if (parts && parts.size === 0) topics.delete(topic);
      if (topics.size === 0) this.byGroup.delete(group);
      return before;
    }
    if (!topics) this.byGroup.set(group, (topics = new Map()));
    let parts = topics.get(topic);
    if (!parts) topics.set(topic, (parts = new Map()));
    parts.set(partition, value);
    return before;
  }

  hasOffsets(group: string): boolean {
    return this.byGroup.has(group);
  }

  /** topic → partition → offset of one group (a live view; do not mutate). */
  groupOffsets(group: string): ReadonlyMap<string, ReadonlyMap<number, CommittedOffset>> {
    return this.byGroup.get(group) ?? new Map();
  }

  /** Every (topic, partition) of a group, as a list that is safe to iterate while deleting. */
  list(group: string): { topic: string; partition: number; value: CommittedOffset }[] {
    const out: { topic: string; partition: number; value: CommittedOffset }[] = [];
    for (const [topic, parts] of this.groupOffsets(group)) {
      for (const [partition, value] of parts) out.push({ topic, partition, value });
    }
    return out;
  }

  groupIds(): IterableIterator<string> {
    return this.byGroup.keys();
  }

  count(): number {
    let n = 0;
    for (const topics of this.byGroup.values()) for (const parts of topics.values()) n += parts.size;
    return n;
  }
}
