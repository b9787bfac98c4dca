/**
 * Keys and groupings of topic partitions shared by every layer: the `topic-partition` string a
 * partition is known by in maps and on disk, and the grouping by topic that requests and
 * responses nest their partitions in.
 */

/**
 * `<topic>-<partition>`, as Kafka's TopicPartition.toString and a log directory's name. The
 * partition is a number, so the last '-' separates the two even when the topic has dashes.
 */
export function tpKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/**
 * Items grouped by topic, topics in the order they first appear (a Map keeps insertion order,
 * so a response lists its topics as the request did). The topic of an item is its `topic`
 * field, or what `topicOf` says.
 */
export function groupByTopic<T extends { readonly topic: string }>(items: Iterable<T>): Map<string, T[]>;
export function groupByTopic<T>(items: Iterable<T>, topicOf: (item: T) => string): Map<string, T[]>;
export function groupByTopic<T>(items: Iterable<T>, topicOf?: (item: T) => string): Map<string, T[]> {
  const byTopic = new Map<string, T[]>();
  for (const item of items) {
    const topic = topicOf ? topicOf(item) : (item as { readonly topic: string }).topic;
    const list = byTopic.get(topic);
    if (list) list.push(item);
    else byTopic.set(topic, [item]);
  }
  return byTopic;
}
