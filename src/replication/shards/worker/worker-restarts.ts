/**
 * The restarts of WorkerShards' worker threads (docs/threads.md "A shard's failure stays in the
 * shard"): what happens when a worker ends (restarted as restart-policy.ts says, or left
 * offline, with one log line either way), which shards are opening their logs after a restart,
 * and which topics each shard never confirmed deleting (their logs a new worker must delete).
 * It keeps the bookkeeping; WorkerShards builds the new worker's channel (`start`) and decides
 * what a call to a shard in each state gets.
 */
import type { StorageLogger } from '../../../storage/logger.js';
import { messageOf } from '../../../common/errors.js';
import { RestartPolicy, type RestartTimings } from './restart-policy.js';
import type { ShardChannel } from './shard-channels.js';

/** Why a shard ended (an uncaught error's message, or its exit code). */
export interface ShardExit {
  shard: number;
  reason: string;
}

export interface WorkerRestartsOptions {
  count: number;
  logger: StorageLogger;
  timings?: RestartTimings;
  /** Starts a new worker for `index` that first deletes the logs of `deleteLogsOf` and `deletePartitions`; the caller puts its channel in place. */
  start: (index: number, deleteLogsOf: string[], deletePartitions: [string, number][]) => ShardChannel;
  /** Whether the shards are shutting down (nothing is restarted then). */
  closing: () => boolean;
  /** A restarted worker serves again (cluster mode: its partitions' roles are sent to it again). */
  restarted?: (index: number) => void;
}

export class WorkerRestarts {
  readonly exits: ShardExit[] = [];
  /** Workers started in place of one that ended (fjord_shard_worker_restarts_total). */
  count = 0;
  /** Set once every shard opened its logs: a worker that ends before is the start's failure, not restarted. */
  private opened = false;
  private readonly policies: RestartPolicy[];
  /** When each shard's current worker started, and whether it replaced one. */
  private readonly started: { at: number; restarted: boolean }[];
  /**
   * Per shard, the topics whose deletion it never confirmed (its worker had ended, or ended with
   * the call pending): their logs may still be on disk, and a restarted worker deletes them
   * before it serves (ShardInit.deleteLogsOf), even when the name was created again meanwhile
   * (log folders carry no topic id: the new topic's logs would open on the old records).
   */
  private readonly staleLogs: Set<string>[];
  /** Per shard, the partitions a StopReplica deleted that it never confirmed (cluster mode), as `staleLogs`, by "partition:topic". */
  private readonly staleParts: Map<string, [string, number]>[];
  /** Shards whose new worker is opening its logs: only metadata posts and shutdown go to it. */
  private readonly opening = new Set<number>();
  /** Shards left offline. */
  private readonly givenUp = new Set<number>();
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(private readonly opts: WorkerRestartsOptions) {
    const now = Date.now();
    this.policies = Array.from({ length: opts.count }, () => new RestartPolicy(opts.timings));
    this.started = Array.from({ length: opts.count }, () => ({ at: now, restarted: false }));
    this.staleLogs = Array.from({ length: opts.count }, () => new Set<string>());
    this.staleParts = Array.from({ length: opts.count }, () => new Map<string, [string, number]>());
  }

  /** Every shard opened its logs: from here a worker that ends is restarted. */
  markOpened(): void {
    this.opened = true;
  }

  isOpening(shard: number): boolean {
    return this.opening.has(shard);
  }

  /** Whether a shard's partitions are hosted here: serving, or to be served again once its worker restarts (not given up on). */
  isHosting(shard: number): boolean {
    return !this.givenUp.has(shard);
  }

  /** Restarts waiting for their backoff. */
  get waiting(): number {
    return this.timers.size;
  }

  /** A deletion of `topic` is being sent to `shard`: stale until it answers. */
  deleting(shard: number, topic: string): void {
    this.staleLogs[shard]!.add(topic);
  }

  /** The shard answered the deletion (deleted, or failed by a worker that runs on: never deleted by a later restart, which could take a new topic's records). */
  deleteAnswered(shard: number, topic: string): void {
    this.staleLogs[shard]!.delete(topic);
  }

  /** A StopReplica deleting `topic`-`partition` is being sent to `shard`: stale until it answers. */
  deletingPartition(shard: number, topic: string, partition: number): void {
    this.staleParts[shard]!.set(`${partition}:${topic}`, [topic, partition]);
  }

  /** The shard answered that deletion (as `deleteAnswered`). */
  partitionDeleteAnswered(shard: number, topic: string, partition: number): void {
    this.staleParts[shard]!.delete(`${partition}:${topic}`);
  }

  /** A worker ended (its pending calls are answered already, shard-channels.ts): restarted as its policy says, or left offline. */
  ended(index: number, reason: string): void {
    this.opening.delete(index);
    if (this.opts.closing()) return;
    this.exits.push({ shard: index, reason });
    const { logger } = this.opts;
    if (!this.opened) {
      // Before its logs were open the start fails (WorkerShards.open rejects); after, while the
      // others still opened theirs, the broker starts without it: offline, and said so.
      this.givenUp.add(index);
      logger.error(
        `shard worker ${index} ended while the shards opened their logs (${reason}) and is not restarted: its partitions stay offline until the broker restarts`,
      );
      return;
    }
    const { at, restarted } = this.started[index]!;
    const decision = this.policies[index]!.crashed(Date.now(), at, restarted);
    if ('giveUp' in decision) {
      this.givenUp.add(index);
      logger.error(`shard worker ${index} ended (${reason}) and is not restarted: ${decision.giveUp}; its partitions stay offline until the broker restarts`);
      return;
    }
    const when = decision.restartInMs > 0 ? `in ${decision.restartInMs} ms (it crashed again soon after its restart)` : 'now';
    logger.error(`shard worker ${index} ended (${reason}): its partitions are offline; restarting it ${when}`);
    const timer = setTimeout(() => {
      this.timers.delete(index);
      try {
        this.restart(index);
      } catch (err) {
        // Thrown from a timer it would end the broker: the shard stays offline instead, and says why.
        this.givenUp.add(index);
        logger.error(`shard worker ${index} could not be restarted (${messageOf(err)}): its partitions stay offline until the broker restarts`);
      }
    }, decision.restartInMs);
    this.timers.set(index, timer);
  }

  /** Shutdown: a restart waiting for its backoff is not started (one opening its logs gets the shutdown once they are open). */
  cancelWaiting(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /**
   * A new worker for shard `index`: it recovers its logs as after an unclean shutdown and deletes
   * the stale ones, then its partitions serve again.
   */
  private restart(index: number): void {
    if (this.opts.closing()) return;
    const deleteLogsOf = [...this.staleLogs[index]!];
    const deletePartitions = [...this.staleParts[index]!];
    const ch = this.opts.start(
      index,
      deleteLogsOf,
      deletePartitions.map(([, tp]) => tp),
    );
    this.started[index] = { at: Date.now(), restarted: true };
    this.opening.add(index);
    this.count++;
    ch.ready.then(
      () => {
        if (!ch.alive || !this.opening.has(index)) return;
        for (const topic of deleteLogsOf) this.staleLogs[index]!.delete(topic);
        for (const [key] of deletePartitions) this.staleParts[index]!.delete(key);
        this.opening.delete(index);
        this.opts.logger.warn(`shard worker ${index} restarted: its partitions serve again`);
        this.opts.restarted?.(index);
      },
      // Ended while opening: `ended` has it (and counts it as a crash).
      () => undefined,
    );
  }
}
