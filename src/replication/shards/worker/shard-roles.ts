/**
 * Cluster mode on shards (docs/threads.md step 3): the controller's role changes split by owning
 * shard. The control thread (main) sends each shard its part of a LeaderAndIsr or StopReplica and
 * answers the controller once every shard answered, each partition with its own shard's error.
 *
 * A LeaderAndIsr part for a shard whose worker ended (or is opening its logs after a restart)
 * waits for it to serve again, up to HOLD_FOR_RESTART_MS; then it is applied and answered as
 * usual. A shard not back by then (or given up on) answers KAFKA_STORAGE_ERROR, which Kafka's
 * controller reads as "this replica is offline until the broker restarts": so the state is not
 * kept, and the partition's earlier state is forgotten too: a worker back later must not lead
 * or follow what the controller counts offline (it may have elected another leader meanwhile).
 * A StopReplica is held alike; one that deletes a partition on a shard still down after the hold
 * has its log deleted by the restarted worker before it serves (WorkerRestarts' stale partitions).
 *
 * The main thread keeps a ledger, per partition, of the last LeaderAndIsr state a shard applied,
 * with the ISR and zkVersion its leader wrote since: leader readiness
 * and /health/ready read it instead of a Partition on another thread, and a restarted worker is
 * sent its partitions' states again (as a restarted broker gets them from the controller), so it
 * leads and follows as before its crash without waiting for the controller.
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../../../protocol/errors.js';
import { tpKey } from '../../../common/partition-keys.js';
import type { LeaderAndIsrPartition, StopReplicaPartition } from '../../hosting/role-changes.js';
import type { IsrChange } from '../../partition/partition.js';
import type { BrokerEndpoint, FromShard } from './shard-protocol.js';
import { byShard } from './shard-parts.js';

/** How long a LeaderAndIsr part waits for its shard's restarted worker to serve (restart backoff and log recovery), at most. */
export const HOLD_FOR_RESTART_MS = 10_000;

/** What ShardRoles sends a shard (WorkerShards.callShard gives the id). */
export type RoleMessage =
  | { type: 'leaderAndIsr'; states: LeaderAndIsrPartition[]; configs: Record<string, Record<string, string>>; brokers: BrokerEndpoint[]; resumed?: boolean }
  | { type: 'stopReplica'; parts: StopReplicaPartition[] }
  | { type: 'brokers'; brokers: BrokerEndpoint[] };

/** The role changes ControlRequests applies: the ReplicaManager's on one thread, ShardRoles' across shards. */
export interface RoleChanges {
  becomeLeaderOrFollower(states: readonly LeaderAndIsrPartition[], configsOf: (topic: string) => Record<string, string>): Promise<Map<string, number>>;
  stopReplicas(parts: readonly StopReplicaPartition[]): Promise<Map<string, number>>;
}

/** What ShardRoles needs of WorkerShards. */
export interface RoleShards {
  readonly count: number;
  shardOf(topic: string, partition: number): number;
  isServing(shard: number): boolean;
  isHosting(shard: number): boolean;
  callShard(index: number, message: RoleMessage): Promise<FromShard | undefined>;
  /** A StopReplica deleting a partition is being sent to `shard`: its log is stale until the shard answers. */
  deletingPartition(shard: number, topic: string, partition: number): void;
  partitionDeleteAnswered(shard: number, topic: string, partition: number): void;
}

export interface ShardRolesOptions {
  brokerId: number;
  /** The live brokers' inter-broker endpoints, as the image has them now. */
  brokers: () => BrokerEndpoint[];
  logger: Logger;
  /** HOLD_FOR_RESTART_MS unless set (tests). */
  holdForRestartMs?: number;
}

export class ShardRoles implements RoleChanges {
  private readonly ledger = new Map<string, LeaderAndIsrPartition>();
  /** Each topic's configs as the last LeaderAndIsr that named it sent them (a restarted worker's logs open with them). */
  private readonly configs = new Map<string, Record<string, string>>();
  private shards: RoleShards | undefined;
  /** Per shard, the LeaderAndIsr parts waiting for its worker to serve again. */
  private readonly backOn = new Map<number, Set<() => void>>();

  constructor(private readonly opts: ShardRolesOptions) {}

  /** The shards, once open (WorkerShards takes this object's `restarted` before it exists). */
  attach(shards: RoleShards): void {
    this.shards = shards;
  }

  private get on(): RoleShards {
    if (!this.shards) throw new Error('the shards are not open yet');
    return this.shards;
  }

  async becomeLeaderOrFollower(states: readonly LeaderAndIsrPartition[], configsOf: (topic: string) => Record<string, string>): Promise<Map<string, number>> {
    for (const t of new Set(states.map((s) => s.topic))) this.configs.set(t, configsOf(t));
    return this.send(
      states,
      (mine) => this.leaderAndIsr(mine),
      (s, code) => {
        const key = tpKey(s.topic, s.partition);
        if (code === ErrorCode.NONE) this.ledger.set(key, { ...s });
        // Offline until the broker restarts, for the controller: a restarted worker must not take it up again.
        else if (code === ErrorCode.KAFKA_STORAGE_ERROR) this.ledger.delete(key);
      },
      true,
    );
  }

  async stopReplicas(parts: readonly StopReplicaPartition[]): Promise<Map<string, number>> {
    for (const p of parts) if (p.deletePartition) this.on.deletingPartition(this.on.shardOf(p.topic, p.partition), p.topic, p.partition);
    return this.send(
      parts,
      (shardParts) => ({ type: 'stopReplica', parts: shardParts }),
      (p, code, answered) => {
        // Answered (deleted, or failed by a worker that runs on): a later restart must not delete a new topic's log of that name.
        if (p.deletePartition && answered) this.on.partitionDeleteAnswered(this.on.shardOf(p.topic, p.partition), p.topic, p.partition);
        const key = tpKey(p.topic, p.partition);
        const known = this.ledger.get(key);
        if (code === ErrorCode.FENCED_LEADER_EPOCH || !known) return;
        // Deleted: gone from here; stopped: a follower of no one until the next LeaderAndIsr (role-changes.ts).
        if (p.deletePartition) this.ledger.delete(key);
        else if (known.leader === this.opts.brokerId) this.ledger.set(key, { ...known, leader: -1 });
      },
      // Held too: a worker opening its logs meanwhile would serve the deleted partition's log (it was started without it).
      true,
    );
  }

  /** The live brokers changed (UpdateMetadata): every worker's fetchers learn the leaders' addresses, every shard's mirror the live brokers (DeleteRecords counts them). */
  brokersChanged(): void {
    const brokers = this.opts.brokers();
    for (let s = 0; s < (this.shards?.count ?? 0); s++) void this.on.callShard(s, { type: 'brokers', brokers });
  }

  /** Leader readiness: led here at `epoch` or later, by a shard that serves. */
  leadsHere(topic: string, partition: number, epoch: number): boolean {
    const s = this.ledger.get(tpKey(topic, partition));
    return s !== undefined && s.leader === this.opts.brokerId && s.leaderEpoch >= epoch && this.on.isServing(this.on.shardOf(topic, partition));
  }

  /** /health/ready: the leader epoch hosted here, if a shard hosts the partition (one waiting for its restart counts). */
  hostedEpoch(topic: string, partition: number): number | undefined {
    const s = this.ledger.get(tpKey(topic, partition));
    return s && this.on.isHosting(this.on.shardOf(topic, partition)) ? s.leaderEpoch : undefined;
  }

  /** A shard's leader wrote a new ISR (main-answers.ts): a re-sent state must carry it, or the leader's next write would meet a stale zkVersion. */
  isrWritten(change: IsrChange, zkVersion: number): void {
    const key = tpKey(change.topic, change.partition);
    const s = this.ledger.get(key);
    if (s && s.leaderEpoch === change.leaderEpoch) this.ledger.set(key, { ...s, isr: [...change.isr], partitionEpoch: zkVersion });
  }

  /** A restarted worker serves again: it gets its partitions' last states, as a restarted broker gets them from the controller. */
  restarted(index: number): void {
    const states = [...this.ledger.values()].filter((s) => this.on.shardOf(s.topic, s.partition) === index);
    if (states.length > 0) {
      void this.on.callShard(index, { ...this.leaderAndIsr(states), resumed: true }).then((answer) => {
        const refused = answer?.type === 'answered' ? (answer.result as [string, number][]).filter(([, code]) => code !== ErrorCode.NONE) : [];
        // Not taken up again (a recovered log below its checkpointed HW, resumed-leaders.ts): offline here, as for the controller's own errors.
        for (const [key, code] of refused) if (code === ErrorCode.KAFKA_STORAGE_ERROR) this.ledger.delete(key);
        const failed = answer?.type === 'answered' ? refused.length : states.length;
        const log = failed === 0 ? 'info' : 'warn';
        this.opts.logger[log](
          { shard: index, partitions: states.length, failed, refused: refused.map(([key]) => key) },
          "the restarted shard worker was sent its partitions' roles again (refused: a leader's recovered log below its checkpointed high watermark, not led again at the same epoch)",
        );
      });
    }
    // The held parts go after the ledger's states (the channel keeps the order): they are the controller's later word.
    const waiting = this.backOn.get(index);
    this.backOn.delete(index);
    for (const wake of waiting ?? []) wake();
  }

  /** Whether shard `s` serves, now or once its restarted worker does within the hold; false when given up on or not back in time. */
  private servingWithin(s: number): Promise<boolean> {
    if (this.on.isServing(s)) return Promise.resolve(true);
    if (!this.on.isHosting(s)) return Promise.resolve(false);
    return new Promise((resolve) => {
      let waiting = this.backOn.get(s);
      if (!waiting) this.backOn.set(s, (waiting = new Set()));
      const wake = (): void => {
        clearTimeout(timer);
        resolve(this.on.isServing(s));
      };
      const timer = setTimeout(() => {
        waiting.delete(wake);
        resolve(false);
      }, this.opts.holdForRestartMs ?? HOLD_FOR_RESTART_MS);
      waiting.add(wake);
    });
  }

  private leaderAndIsr(states: LeaderAndIsrPartition[]): Extract<RoleMessage, { type: 'leaderAndIsr' }> {
    const configs: Record<string, Record<string, string>> = {};
    for (const s of states) configs[s.topic] = this.configs.get(s.topic) ?? {};
    return { type: 'leaderAndIsr', states, configs, brokers: this.opts.brokers() };
  }

  /**
   * One message per shard with its parts (`hold`: a shard down or opening is waited for, within
   * the hold); the errors of every part, keyed by tpKey; `noted` sees each part's outcome and
   * whether its shard answered.
   */
  private async send<P extends { topic: string; partition: number }>(
    parts: readonly P[],
    message: (shardParts: P[]) => RoleMessage,
    noted: (part: P, code: number, answered: boolean) => void,
    hold = false,
  ): Promise<Map<string, number>> {
    const errors = new Map<string, number>();
    await Promise.all(
      [...byShard(parts, (p) => this.on.shardOf(p.topic, p.partition))].map(async ([s, indexes]) => {
        const mine = indexes.map((i) => parts[i]!);
        const answer = !hold || (await this.servingWithin(s)) ? await this.on.callShard(s, message(mine)) : undefined;
        if (answer?.type === 'failed') this.opts.logger.error({ shard: s, err: answer.message }, 'a shard failed its part of a role change');
        const codes = new Map(answer?.type === 'answered' ? (answer.result as [string, number][]) : []);
        for (const p of mine) {
          const key = tpKey(p.topic, p.partition);
          // No answer: the shard ended or is opening its logs; a failed one: its storage.
          const code = answer === undefined || answer.type === 'failed' ? ErrorCode.KAFKA_STORAGE_ERROR : codes.get(key);
          if (code !== undefined) errors.set(key, code);
          noted(p, code ?? -1, answer !== undefined);
        }
      }),
    );
    return errors;
  }
}
