/**
 * Everything the controller reacts to, as one tagged union (Kafka's ControllerEvent subclasses),
 * and the single queue that processes them one at a time (Kafka's ControllerEventManager): the
 * context is only ever touched by one event, so no locks are needed. ZooKeeper watches, broker
 * answers, timers and API calls all become events.
 */
import type { Logger } from 'pino';
import type { TopicPartition } from './context.js';
import type { ApiResult, ListedReassignment } from './reassignment-state.js';
import { messageOf } from '../common/errors.js';
import { ControllerStats } from './controller-stats.js';

export type ControllerEvent =
  | { type: 'ControllerChange' }
  | { type: 'BrokerChange' }
  | { type: 'TopicChange' }
  | { type: 'PartitionModifications'; topic: string }
  | { type: 'TopicDeletion' }
  | { type: 'TopicDeletionStopReplicaResponseReceived'; brokerId: number; results: { tp: TopicPartition; errorCode: number }[] }
  | { type: 'IsrChangeNotification' }
  | { type: 'PreferredReplicaElectionZNode' }
  | { type: 'TopicUncleanLeaderElectionEnable'; topic: string }
  | { type: 'ReplicaLeaderElection'; electionType: 0 | 1; partitions: TopicPartition[] | null; reply: Reply<Map<string, number>> }
  | { type: 'ControlledShutdown'; brokerId: number; brokerEpoch: bigint; reply: Reply<TopicPartition[]> }
  | { type: 'AutoPreferredReplicaLeaderElection' }
  | { type: 'PartitionReassignment' }
  | { type: 'PartitionReassignmentIsrChange'; tp: TopicPartition }
  | { type: 'ApiPartitionReassignment'; reassignments: (TopicPartition & { replicas: number[] | null })[]; reply: Reply<Map<string, ApiResult>> }
  | { type: 'ListPartitionReassignments'; partitions: TopicPartition[] | null; reply: Reply<ListedReassignment[]> };

export interface Reply<T> {
  resolve(value: T): void;
  reject(err: Error): void;
}

export class ControllerEventManager {
  private readonly queue: ControllerEvent[] = [];
  /** When each queued event was put (performance.now()), in queue order. */
  private readonly enqueuedAt: number[] = [];
  /** Queue wait and processing time per kind of event (the metrics read them). */
  readonly stats = new ControllerStats();
  private running = false;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly process: (e: ControllerEvent) => Promise<void>,
    private readonly log: Logger,
  ) {}

  put(e: ControllerEvent): void {
    if (this.closed) {
      if ('reply' in e) e.reply.reject(new Error('controller is shutting down'));
      return;
    }
    this.queue.push(e);
    this.enqueuedAt.push(performance.now());
    if (!this.running) void this.drain();
  }

  /** Events waiting (Kafka's EventQueueSize). */
  get size(): number {
    return this.queue.length;
  }

  /** Resolves once the queue is empty and no event runs (tests and shutdown wait on it). */
  idle(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.enqueuedAt.length = 0;
    for (const e of this.queue.splice(0)) if ('reply' in e) e.reply.reject(new Error('controller is shutting down'));
    await this.idle();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let e = this.queue.shift(); e; e = this.queue.shift()) {
        const started = performance.now();
        this.stats.eventDequeued(started - (this.enqueuedAt.shift() ?? started));
        try {
          await this.process(e);
          this.stats.eventProcessed(e.type, performance.now() - started);
        } catch (err) {
          this.log.error({ err: messageOf(err), event: e.type }, 'controller event failed');
          if ('reply' in e) e.reply.reject(err instanceof Error ? err : new Error(String(err)));
        }
      }
    } finally {
      this.running = false;
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }
}
