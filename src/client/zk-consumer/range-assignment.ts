/**
 * The range assignment of Kafka's old (ZooKeeper) consumer (kafka.consumer.RangeAssignor): for
 * each topic, the thread ids of every member subscribed to it, sorted as strings, take the
 * topic's partitions, sorted by number, in contiguous ranges; the first
 * (partitions % threads) threads get one more. Every member computes the same answer from the
 * same /consumers/<g>/ids and /brokers/topics reads, so no coordinator is needed.
 */

export interface ThreadAssignment {
  topic: string;
  partition: number;
  /** `<consumerId>-<n>`: what the owner znode holds. */
  threadId: string;
}

/** A member's thread ids per topic: `<consumerId>-0` .. `<consumerId>-(count-1)`. */
export function consumerThreadIds(consumerId: string, subscription: Readonly<Record<string, number>>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [topic, count] of Object.entries(subscription)) out[topic] = Array.from({ length: count }, (_, n) => `${consumerId}-${n}`);
  return out;
}

/**
 * The whole group's assignment, keyed `<topic>-<partition>`: `members` maps consumer id to its
 * subscription (topic → stream count), `partitions` topic → its partition numbers (a topic
 * missing there has none yet and is skipped).
 */
export function rangeAssign(
  members: ReadonlyMap<string, Readonly<Record<string, number>>>,
  partitions: ReadonlyMap<string, readonly number[]>,
): Map<string, ThreadAssignment> {
  const threadsByTopic = new Map<string, string[]>();
  for (const [consumerId, subscription] of members) {
    for (const [topic, ids] of Object.entries(consumerThreadIds(consumerId, subscription))) {
      threadsByTopic.set(topic, [...(threadsByTopic.get(topic) ?? []), ...ids]);
    }
  }
  const out = new Map<string, ThreadAssignment>();
  for (const [topic, threads] of [...threadsByTopic].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const parts = [...(partitions.get(topic) ?? [])].sort((a, b) => a - b);
    if (parts.length === 0 || threads.length === 0) continue;
    threads.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const per = Math.floor(parts.length / threads.length);
    const extra = parts.length % threads.length;
    threads.forEach((threadId, i) => {
      const start = per * i + Math.min(i, extra);
      const count = per + (i < extra ? 1 : 0);
      for (const partition of parts.slice(start, start + count)) out.set(`${topic}-${partition}`, { topic, partition, threadId });
    });
  }
  return out;
}
