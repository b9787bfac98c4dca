/**
 * Which shard owns a partition: (hash(topic name) + partition) mod N, docs/threads.md's rule
 * with the topic's name in place of its id. Consecutive partitions of a topic land on different
 * shards. The name, not the id, because a log directory is named by topic and partition: a
 * shard opening the logs it finds on disk, those of a topic the metadata no longer (or not yet)
 * knows included, decides from the directory name alone, and the layout after a restart is the
 * same function of the same names.
 */

/** FNV-1a over the name's UTF-16 code units: cheap, stable across threads and restarts. */
export function topicHash(topic: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < topic.length; i++) {
    h ^= topic.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The shard (0..shards-1) that owns `partition` of `topic`. */
export function shardOf(topic: string, partition: number, shards: number): number {
  return (topicHash(topic) + partition) % shards;
}
