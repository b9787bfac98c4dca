/**
 * One consumption stream of kafka-mirror-maker.sh (a MirrorMakerThread of Kafka's classic
 * MirrorMaker): a consumer in the mirror's group polls the source cluster and hands every record
 * to the shared producer unchanged (key, value, headers, timestamp; the partition chosen by the
 * producer's partitioner, as Kafka's default message handler leaves it). The offsets of records
 * handed over are committed only after `producer.flush()` has seen every one of them
 * acknowledged: every offset.commit.interval.ms, before a rebalance takes partitions away, and
 * when the stream stops. A send failure with abort.on.send.failure stops every stream without
 * committing, so a restart mirrors those records again (at least once, never lost).
 */
import { ErrorCode, KafkaError, type Consumer, type ConsumerRecord, type Producer, type ProducerRecord, type TopicPartition } from '../../client/index.js';
import { describeError } from '../common/tool.js';

/** What every stream shares: the shutdown flags and the send-failure outcome. */
export interface MirrorState {
  abortOnSendFailure: boolean;
  /** Producer sends are synchronous (producer.type=sync): each waits for its acknowledgement. */
  syncSends: boolean;
  offsetCommitIntervalMs: number;
  shuttingDown: boolean;
  /** Set by the first failed send when abort.on.send.failure is true: stop, commit nothing. */
  sendFailure: Error | null;
  droppedMessages: number;
  warn(line: string): void;
}

/** Commit errors that mean the group moved on (Kafka's CommitFailedException): skipped, not fatal. */
const REBALANCED = new Set<number>([ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID]);
/** How long a commit that keeps failing for other (retriable) reasons is retried before the stream fails. */
const COMMIT_RETRY_MS = 30000;

/** Kafka's default message handler: the same topic, no partition, the record's own timestamp. */
export function mirroredRecord(r: ConsumerRecord): ProducerRecord {
  return {
    topic: r.topic,
    key: r.key,
    value: r.value,
    headers: r.headers,
    ...(r.timestamp >= 0n ? { timestamp: r.timestamp } : {}),
  };
}

/** Kafka's ErrorLoggingCallback names a key or value by its size. */
const sizeOf = (b: Buffer | null): string => (b === null ? 'null' : `${b.length} bytes`);

export class MirrorStream {
  /** Per partition, the offset after the last record handed to the producer and not yet committed. */
  private readonly offsets = new Map<string, { tp: TopicPartition; offset: bigint }>();
  private lastCommitAt = Date.now();

  constructor(
    private readonly consumer: Consumer,
    private readonly producer: Producer,
    private readonly state: MirrorState,
    private readonly include: RegExp,
  ) {}

  /** Mirrors until shutdown or a send failure; flushes and commits on the way out. */
  async run(): Promise<void> {
    this.consumer.subscribe(this.include, { onPartitionsRevoked: () => this.flushAndCommit() });
    try {
      while (!this.stopping) {
        const records = await this.consumer.poll(1000);
        for (const r of records) {
          if (this.state.sendFailure) break;
          await this.send(r);
          this.offsets.set(`${r.topic}\u0000${r.partition}`, { tp: { topic: r.topic, partition: r.partition }, offset: r.offset + 1n });
        }
        if (Date.now() - this.lastCommitAt > this.state.offsetCommitIntervalMs) await this.flushAndCommit();
      }
    } finally {
      // A flush that fails (or a send failure) leaves the offsets uncommitted: nothing is lost.
      await this.flushAndCommit().catch((err: unknown) => this.state.warn(`Failed to commit offsets on exit: ${describeError(err)}`));
      await this.consumer.close().catch(() => undefined);
    }
  }

  private get stopping(): boolean {
    return this.state.shuttingDown || this.state.sendFailure !== null;
  }

  private send(r: ConsumerRecord): Promise<void> | undefined {
    const record = mirroredRecord(r);
    const done = (err: Error | null): void => {
      if (!err) return;
      this.state.warn(
        `Error when sending message to topic ${record.topic} with key: ${sizeOf(r.key)}, value: ${sizeOf(r.value)} with error: ${describeError(err)}`,
      );
      this.state.droppedMessages++;
      if (this.state.abortOnSendFailure) this.state.sendFailure ??= err;
    };
    if (this.state.syncSends) {
      return this.producer.send(record).then(
        () => undefined,
        (err: Error) => done(err),
      );
    }
    this.producer.produce(record, (err) => done(err));
    return undefined;
  }

  /** Waits for every record handed over to be acknowledged, then commits their offsets. */
  private async flushAndCommit(): Promise<void> {
    await this.producer.flush();
    this.lastCommitAt = Date.now();
    if (this.state.sendFailure) return; // Kafka: "Exiting on send failure, skip committing offsets."
    if (this.offsets.size === 0) return;
    const entries: [TopicPartition, { offset: bigint; metadata: string }][] = [...this.offsets.values()].map(({ tp, offset }) => [
      tp,
      { offset, metadata: '' },
    ]);
    const deadline = Date.now() + COMMIT_RETRY_MS;
    for (;;) {
      try {
        await this.consumer.commitSync(entries);
        for (const [tp, { offset }] of entries) {
          const key = `${tp.topic}\u0000${tp.partition}`;
          if (this.offsets.get(key)?.offset === offset) this.offsets.delete(key);
        }
        return;
      } catch (err) {
        if (err instanceof KafkaError && REBALANCED.has(err.code)) {
          this.state.warn(
            "Failed to commit offsets because the consumer group has rebalanced and assigned partitions to another instance. If you see this regularly, it could indicate that you need to either increase the consumer's session.timeout.ms or reduce the number of records handled on each iteration with max.poll.records",
          );
          return;
        }
        if (Date.now() > deadline) throw err;
        this.state.warn(`Failed to commit offsets (${describeError(err)}); retrying`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}
