/**
 * Kafka's BrokerTopicMetrics as plain counters: one small TopicStats per topic (made on the
 * topic's first produce or fetch, dropped when the topic is deleted) and one for all topics.
 * The produce and fetch handlers count per partition, where Kafka's ReplicaManager counts:
 * messages and bytes in are what the leader appended for clients (not replication), bytes out
 * what consumers were answered (followers' fetches count as replication bytes out), and failed
 * requests are the unexpected failures only (Kafka leaves out unknown partitions, not-leader,
 * too-large or corrupt records, storage errors: the client's or the cluster's state, not the
 * broker failing). topic-metrics.ts reads them when scraped.
 */
import { ErrorCode } from '../../protocol/errors.js';
import { MAGIC, RECORD_BATCH_OVERHEAD, batchSize, magicOf, recordsCountOf } from '../../protocol/records/batch-header.js';
import type { FetchedPartition } from '../../replication/fetch/fetch-service.js';

export class TopicStats {
  messagesIn = 0;
  bytesIn = 0;
  bytesOut = 0;
  bytesRejected = 0;
  failedProduceRequests = 0;
  failedFetchRequests = 0;
  totalProduceRequests = 0;
  totalFetchRequests = 0;
  replicationBytesOut = 0;
}

/** Produce errors Kafka's appendToLocalLog does not count as failed produce requests. */
const EXPECTED_PRODUCE_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.MESSAGE_TOO_LARGE,
  ErrorCode.RECORD_LIST_TOO_LARGE,
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.KAFKA_STORAGE_ERROR,
]);
/** Produce errors whose bytes Kafka counts as rejected (the records failed the log's size or validity checks). */
const REJECTED_PRODUCE_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.MESSAGE_TOO_LARGE,
  ErrorCode.RECORD_LIST_TOO_LARGE,
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.INVALID_RECORD,
]);
/** Fetch errors Kafka's readFromLocalLog does not count as failed fetch requests. */
const EXPECTED_FETCH_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.OFFSET_OUT_OF_RANGE,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INCONSISTENT_TOPIC_ID,
]);

export class BrokerTopicStats {
  readonly all = new TopicStats();
  private readonly topics = new Map<string, TopicStats>();

  topic(name: string): TopicStats {
    let s = this.topics.get(name);
    if (s === undefined) this.topics.set(name, (s = new TopicStats()));
    return s;
  }

  /** The topic was deleted: its series go (Kafka removes the topic's meters). */
  remove(name: string): void {
    this.topics.delete(name);
  }

  entries(): IterableIterator<[string, TopicStats]> {
    return this.topics.entries();
  }

  /**
   * A client's produce to one partition, once the leader answered it. Unknown topics and
   * partitions are not counted (Kafka answers them before the log): a client naming random
   * topics must not grow this map.
   */
  produced(topic: string, errorCode: number, records: Buffer | null): void {
    if (errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return;
    const t = this.topic(topic);
    const a = this.all;
    t.totalProduceRequests++;
    a.totalProduceRequests++;
    const bytes = records?.length ?? 0;
    if (errorCode === ErrorCode.NONE) {
      const messages = records ? countRecords(records) : 0;
      t.messagesIn += messages;
      a.messagesIn += messages;
      t.bytesIn += bytes;
      a.bytesIn += bytes;
      return;
    }
    if (REJECTED_PRODUCE_ERRORS.has(errorCode)) {
      t.bytesRejected += bytes;
      a.bytesRejected += bytes;
    }
    if (!EXPECTED_PRODUCE_ERRORS.has(errorCode)) {
      t.failedProduceRequests++;
      a.failedProduceRequests++;
    }
  }

  /** A fetch's partitions as answered (denied and unknown ones never reached a log and are not counted, as in Kafka). */
  fetched(partitions: readonly FetchedPartition[], fromFollower: boolean): void {
    const a = this.all;
    for (const { requested, result } of partitions) {
      const code = result.errorCode;
      if (code === ErrorCode.TOPIC_AUTHORIZATION_FAILED || code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || code === ErrorCode.UNKNOWN_TOPIC_ID) continue;
      const t = this.topic(requested.topic);
      t.totalFetchRequests++;
      a.totalFetchRequests++;
      if (code !== ErrorCode.NONE && !EXPECTED_FETCH_ERRORS.has(code)) {
        t.failedFetchRequests++;
        a.failedFetchRequests++;
      }
      const bytes = result.records?.length ?? 0;
      if (fromFollower) {
        a.replicationBytesOut += bytes;
      } else {
        t.bytesOut += bytes;
        a.bytesOut += bytes;
      }
    }
  }
}

/**
 * Records in a produce's record set: v2 batches carry their count (at byte 57); older message
 * sets count one per entry (a compressed wrapper as one).
 */
export function countRecords(records: Buffer): number {
  let n = 0;
  for (let pos = 0; pos + MAGIC + 1 <= records.length; pos += batchSize(records, pos)) {
    n += magicOf(records, pos) >= 2 && pos + RECORD_BATCH_OVERHEAD <= records.length ? recordsCountOf(records, pos) : 1;
  }
  return n;
}
