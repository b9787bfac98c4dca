/**
 * Appends offset history entries to `__consumer_offsets_history`. Entries are queued per history
 * partition and written in order, one batch per turn (what one operation submitted, plus whatever
 * queued during the linger or while the previous batch was in flight), never awaited by the commit that caused them: a
 * commit is answered as soon as its `__consumer_offsets` record is durable, however the history
 * write goes. A batch that cannot be written within `appendDeadlineMs` (no leader yet, a full
 * disk) is dropped, logged (at most once per interval) and counted; so is an entry that finds its
 * partition's queue full (a bound on memory while the topic is unavailable).
 *
 * The topic is created on first use, as `__consumer_offsets` is, with the same partition count
 * and replica assignment, so the broker coordinating a group usually leads its history partition
 * too: the batch is appended locally then. When another broker leads it (leaderships diverged
 * after a failover), the batch is sent to that leader as a Produce (acks=all) over the broker's
 * inter-broker connections; a leader that moves mid-write answers NOT_LEADER_OR_FOLLOWER, and
 * the batch is retried against the new leader until the deadline.
 */
import type { Logger } from 'pino';
import { FailureLog } from '../../../common/failure-log.js';
import { messageOf } from '../../../common/errors.js';
import type { BrokerConnections } from '../../../client/broker-connections.js';
import { Api } from '../../../client/apis.js';
import type { MetadataStore } from '../../../metadata/metadata-store.js';
import { ADMIN_CLIENT_ID } from '../../../metadata/cluster-model.js';
import { ErrorCode, KafkaError } from '../../../protocol/errors.js';
import {
  OFFSET_HISTORY_TOPIC,
  encodeHistoryKey,
  encodeHistoryValue,
  historyPartitionFor,
  historyTopicConfigs,
  type HistoryValue,
} from '../../../protocol/offset-history/history-record.js';
import { encodeBatch, type KafkaRecord } from '../../../protocol/records/index.js';
import { internalTopicMinIsr, type CoordinatorReplicas } from '../../runtime/coordinator-shell.js';
import type { HistorySink, OffsetHistoryStats } from './history-tracker.js';

export type { OffsetHistoryStats };

export interface OffsetHistoryWriterOptions {
  brokerId: number;
  metadata: MetadataStore;
  replicaManager: CoordinatorReplicas;
  logger: Logger;
  /** The offsets topic, whose partitions and replicas the history topic copies. */
  offsetsTopic: string;
  /** Creates the offsets topic when it does not exist yet, as FindCoordinator does (ZooKeeper-stored groups may never have made it). */
  ensureOffsetsTopic: () => Promise<unknown>;
  /** Its partition count when it does not exist yet (offsets.topic.num.partitions). */
  numPartitions: number;
  retentionMs: number;
  segmentBytes: number;
  /** Cluster mode: connections to the other brokers (history partitions led elsewhere). */
  connections?: () => BrokerConnections | undefined;
  /** How long a batch is retried before it is dropped. */
  appendDeadlineMs?: number;
  /** Entries a partition's queue holds at most. */
  maxQueued?: number;
  /**
   * How long the first entry of an idle partition waits for others to join its batch (50 ms):
   * under load, a group committing every millisecond costs one append per tens of commits
   * instead of one per commit; the commits themselves never wait for it.
   */
  lingerMs?: number;
}

interface Queued {
  key: Buffer;
  value: Buffer;
  timestamp: number;
}

interface PartitionQueue {
  entries: Queued[];
  /** A drain is scheduled (lingering) or running. */
  writing: boolean;
  linger: NodeJS.Timeout | undefined;
}

const RETRY_BACKOFF_MS = 100;
const MAX_BATCH_RECORDS = 1000;

export class OffsetHistoryWriter implements HistorySink {
  readonly stats: OffsetHistoryStats = { recordsWritten: 0, batchesWritten: 0, recordsDropped: 0, appendFailures: 0, recordsQueued: 0 };
  private readonly queues = new Map<number, PartitionQueue>();
  private readonly failures: FailureLog;
  private creating: Promise<void> | undefined;
  private closed = false;
  /** Resolves once every queue is empty (tests, benches: flush()). */
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly opts: OffsetHistoryWriterOptions) {
    this.failures = new FailureLog(opts.logger);
  }

  submit(group: string, entries: HistoryValue[], timestamp: number): void {
    if (this.closed || entries.length === 0) return;
    const partition = historyPartitionFor(group, this.partitionCount());
    let q = this.queues.get(partition);
    if (!q) this.queues.set(partition, (q = { entries: [], writing: false, linger: undefined }));
    const key = encodeHistoryKey({ group });
    for (const e of entries) {
      if (q.entries.length >= (this.opts.maxQueued ?? 10_000)) {
        this.stats.recordsDropped++;
        this.failures.failed(OFFSET_HISTORY_TOPIC, 'queued entries', 'warn', () => `offset history queue of partition ${partition} is full: entries dropped`);
        continue;
      }
      q.entries.push({ key, value: encodeHistoryValue(e), timestamp });
      this.stats.recordsQueued++;
    }
    if (q.writing || q.entries.length === 0) return;
    q.writing = true;
    const linger = this.opts.lingerMs ?? 50;
    if (linger <= 0) return void this.drain(partition, q);
    q.linger = setTimeout(() => {
      q.linger = undefined;
      void this.drain(partition, q);
    }, linger);
  }

  /** Resolves once everything submitted so far was written or dropped. */
  flush(): Promise<void> {
    if ([...this.queues.values()].every((q) => !q.writing && q.entries.length === 0)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking entries; what still lingers is written now, once, without retries (a broker
   * stopping: the appends race its replica manager's shutdown, best effort).
   */
  close(): void {
    this.closed = true;
    for (const [partition, q] of this.queues) {
      if (q.linger === undefined) continue;
      clearTimeout(q.linger);
      q.linger = undefined;
      void this.drain(partition, q);
    }
  }

  /** The history topic's partitions, or (before it exists) the offsets topic's. */
  private partitionCount(): number {
    const { metadata, offsetsTopic, numPartitions } = this.opts;
    return metadata.topic(OFFSET_HISTORY_TOPIC)?.partitions.length ?? metadata.topic(offsetsTopic)?.partitions.length ?? numPartitions;
  }

  private async drain(partition: number, q: PartitionQueue): Promise<void> {
    while (q.entries.length > 0) {
      const batch = q.entries.splice(0, MAX_BATCH_RECORDS);
      try {
        await this.appendWithRetries(partition, batch);
        this.stats.recordsWritten += batch.length;
        this.stats.batchesWritten++;
        if (this.failures.anyFailing) this.failures.succeeded(OFFSET_HISTORY_TOPIC, 'appends');
      } catch (err) {
        this.stats.appendFailures++;
        this.stats.recordsDropped += batch.length;
        this.failures.failed(
          OFFSET_HISTORY_TOPIC,
          'appends',
          'warn',
          () => `offset history: ${batch.length} entries of partition ${partition} dropped: ${messageOf(err)}`,
        );
      }
      this.stats.recordsQueued -= batch.length;
    }
    q.writing = false;
    if ([...this.queues.values()].every((x) => !x.writing && x.entries.length === 0)) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async appendWithRetries(partition: number, entries: Queued[]): Promise<void> {
    const base = entries[0]!.timestamp;
    const batch = encodeBatch({
      records: entries.map(
        (e, i): KafkaRecord => ({ attributes: 0, timestampDelta: e.timestamp - base, offsetDelta: i, key: e.key, value: e.value, headers: [] }),
      ),
      baseTimestamp: BigInt(base),
    });
    const deadline = Date.now() + (this.opts.appendDeadlineMs ?? 10_000);
    for (;;) {
      try {
        await this.ensureTopic();
        await this.appendOnce(partition, batch);
        return;
      } catch (err) {
        if (this.closed || Date.now() + RETRY_BACKOFF_MS > deadline) throw err;
        await new Promise((r) => setTimeout(r, RETRY_BACKOFF_MS));
      }
    }
  }

  private async appendOnce(partition: number, batch: Buffer): Promise<void> {
    const { metadata, brokerId, replicaManager } = this.opts;
    const leader = metadata.topic(OFFSET_HISTORY_TOPIC)?.partitions[partition]?.leader ?? -1;
    if (leader < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `${OFFSET_HISTORY_TOPIC}-${partition} has no leader`);
    if (leader === brokerId) {
      const res = await replicaManager.appendRecords(OFFSET_HISTORY_TOPIC, partition, batch, { requiredAcks: -1, origin: 'coordinator' });
      if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, res.errorMessage ?? undefined);
      return;
    }
    const conns = this.opts.connections?.();
    if (!conns) throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `${OFFSET_HISTORY_TOPIC}-${partition} is led by broker ${leader}`);
    const conn = await conns.connection(leader);
    const version = conn.versionFor(Api.Produce);
    if (version === null || version < 3) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `broker ${leader} cannot take the batch`);
    const res = await conns.send(
      leader,
      conn,
      Api.Produce,
      {
        transactionalId: null,
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: OFFSET_HISTORY_TOPIC, partitionData: [{ index: partition, records: batch }] }],
      },
      version,
      undefined,
      ADMIN_CLIENT_ID, // the id Kafka's brokers let write to an internal topic
    );
    const code = res.responses[0]?.partitionResponses[0]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    if (code !== ErrorCode.NONE) throw new KafkaError(code);
  }

  /**
   * Creates the topic on first use with the offsets topic's partitions and replicas (leaders
   * follow the first replica, so each history partition's preferred leader is its offsets
   * partition's). The offsets topic is created first when needed (in cluster mode it waits for
   * enough live brokers for its replication factor; entries are retried meanwhile).
   */
  private ensureTopic(): Promise<void> {
    const { metadata, offsetsTopic } = this.opts;
    if (metadata.topic(OFFSET_HISTORY_TOPIC)) return Promise.resolve();
    this.creating ??= (async () => {
      if (!metadata.topic(offsetsTopic)) await this.opts.ensureOffsetsTopic();
      const offsets = metadata.topic(offsetsTopic);
      if (!offsets) throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `${offsetsTopic} does not exist yet`);
      const assignment = offsets.partitions.map((p) => [...p.replicas]);
      const replicationFactor = assignment[0]?.length ?? 1;
      try {
        await metadata.createTopic({
          name: OFFSET_HISTORY_TOPIC,
          numPartitions: assignment.length,
          replicationFactor,
          assignment,
          // Metadata's isInternal (pattern subscriptions skip it; it cannot be deleted); clients'
          // Produce is refused (INTERNAL_TOPICS) but for Kafka's admin client id, which the forward uses.
          internal: true,
          configs: historyTopicConfigs(this.opts.retentionMs, internalTopicMinIsr(replicationFactor), this.opts.segmentBytes),
        });
      } catch (err) {
        if (!(err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) throw err;
      }
      await this.opts.replicaManager.syncTopic(OFFSET_HISTORY_TOPIC);
    })().finally(() => {
      this.creating = undefined;
    });
    return this.creating;
  }
}
