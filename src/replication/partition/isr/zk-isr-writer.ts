/**
 * Cluster mode's IsrWriter (Kafka 2.6's Partition.updateIsr over ZooKeeper): the leader writes
 * the partition's new state with a conditional set on the partition epoch (the state znode's
 * zkVersion) it knows, then announces the change with a sequential
 * `/isr_change_notification/isr_change_` node so the controller re-reads the state and tells
 * every broker (UpdateMetadata). A BAD_VERSION means the controller (or an earlier write) moved
 * the state on: the change is given up and the newer state arrives by LeaderAndIsr.
 *
 * Notifications are batched: changes recorded while one is being created go out together in
 * the next (Kafka batches per 2.5 s; here at once, so clients see a new ISR without delay).
 */
import type { Logger } from 'pino';
import { StateChangeLog } from '../../../common/state-change-log.js';
import type { KafkaZkApi, TopicPartitionRef } from '../../../metadata/zk/zk-client-types.js';
import type { IsrChange, IsrChangeCounts, IsrWriter } from '../partition.js';

/** After a failed notification, when to try again. */
const NOTIFY_RETRY_MS = 1000;

export class ZkIsrWriter implements IsrWriter {
  private readonly pending = new Map<string, TopicPartitionRef>();
  private flushing = false;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private readonly stateChange: StateChangeLog;
  readonly counts: IsrChangeCounts = { shrinks: 0, expands: 0 };

  constructor(
    private readonly zk: KafkaZkApi,
    private readonly logger: Logger,
  ) {
    this.stateChange = new StateChangeLog(logger);
  }

  async writeIsr(change: IsrChange, previousIsr?: readonly number[]): Promise<number | 'BAD_VERSION'> {
    if (!this.zk.updateLeaderAndIsr) throw new Error('this KafkaZkApi cannot write partition states for a leader');
    const state = { leader: change.leader, leaderEpoch: change.leaderEpoch, isr: change.isr, controllerEpoch: change.controllerEpoch };
    const result = await this.zk.updateLeaderAndIsr(change.topic, change.partition, state, change.partitionEpoch);
    if (result === 'BAD_VERSION') {
      this.logger.info(
        { topic: change.topic, partition: change.partition, isr: change.isr, zkVersion: change.partitionEpoch },
        'the partition state moved on in ZooKeeper (cached zkVersion is stale): ISR change given up',
      );
      return result;
    }
    this.logger.info({ topic: change.topic, partition: change.partition, isr: change.isr, zkVersion: result }, 'ISR updated');
    if (previousIsr) this.stateChange.isrChange(change.topic, change.partition, change.leader, change.leaderEpoch, previousIsr, change.isr, result);
    this.pending.set(`${change.topic}\u0000${change.partition}`, { topic: change.topic, partition: change.partition });
    this.flush();
    return result;
  }

  /** Resolves once every recorded change has been announced (or the writer is closed). */
  whenIdle(): Promise<void> {
    if (this.closed || (!this.flushing && this.pending.size === 0)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private flush(): void {
    if (!this.flushing && (this.closed || this.pending.size === 0)) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
    if (this.flushing || this.closed || this.pending.size === 0 || this.retry) return;
    this.flushing = true;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.zk.createIsrChangeNotification(batch).then(
      () => {
        this.flushing = false;
        this.flush();
      },
      (err: unknown) => {
        this.flushing = false;
        for (const tp of batch) this.pending.set(`${tp.topic}\u0000${tp.partition}`, tp);
        this.logger.warn({ err: String(err), partitions: batch.length }, 'cannot create an ISR change notification; retrying');
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.flush();
        }, NOTIFY_RETRY_MS);
        this.retry.unref();
      },
    );
  }

  /** Stops retrying notifications (broker shutdown). */
  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    this.flush();
  }
}
