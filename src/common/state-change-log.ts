/**
 * The state-change log, Kafka's `state-change.log` (its `state.change.logger`): one line per
 * leader election, ISR change, partition going offline or online, replica state move and
 * LeaderAndIsr applied by a broker, each naming the partition, old and new leader and ISR, the
 * leader epoch and the cause. Lines carry `"logger":"state.change.logger"` so they can be picked
 * out of the broker's stream (`jq 'select(.logger=="state.change.logger")'`).
 *
 * Its level is set on its own: FJORD_LOG_LEVEL_STATE_CHANGE (trace|debug|info|warn|error|fatal|
 * silent), else the level of the logger it derives from (FJORD_LOG_LEVEL, default info). A
 * silent parent (tools, tests) stays silent whatever the variable says.
 *
 * Here in common/ so every layer (controller, replication, server) can write it from the pino
 * logger it is already given: `new StateChangeLog(logger)` derives the child.
 */
import type { Logger } from 'pino';

export const STATE_CHANGE_LOGGER = 'state.change.logger';
export const STATE_CHANGE_LEVEL_ENV = 'FJORD_LOG_LEVEL_STATE_CHANGE';

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** Why a partition's state changed (Kafka's election strategies and ISR reasons, in words). */
export type StateChangeCause =
  | 'new partition'
  | 'broker failure'
  | 'broker startup'
  | 'controlled shutdown'
  | 'controller failover'
  | 'preferred election'
  | 'auto leader rebalance'
  | 'unclean election'
  | 'reassignment'
  | 'topic deletion'
  | 'partition modification'
  | 'isr change notification'
  | 'isr shrink by lag'
  | 'isr expand (caught up)'
  | 'no eligible leader';

export interface LeaderIsr {
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
}

/**
 * The level of a named logger (state changes, requests) derived from a parent at `parentLevel`:
 * the level `envVar` names, else the parent's; a silent parent keeps it silent.
 */
export function namedLoggerLevel(parentLevel: string, envVar: string, env: NodeJS.ProcessEnv = process.env): string {
  if (parentLevel === 'silent') return 'silent';
  const requested = (env[envVar] ?? '').trim().toLowerCase();
  return LEVELS.has(requested) ? requested : parentLevel;
}

const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** Writes state-change lines; counts them so a caller can log a summary of one event. */
export class StateChangeLog {
  readonly log: Logger;
  /** Totals since creation (a summary compares two snapshots). */
  readonly counts = { leaderChanges: 0, offline: 0, online: 0, isrChanges: 0 };

  constructor(parent: Logger, env: NodeJS.ProcessEnv = process.env) {
    this.log = parent.child({ logger: STATE_CHANGE_LOGGER }, { level: namedLoggerLevel(parent.level, STATE_CHANGE_LEVEL_ENV, env) });
  }

  /**
   * A partition's leader and ISR written (controller) or learned: one line naming what changed.
   * `from` undefined: the partition's first state.
   */
  leaderAndIsr(topic: string, partition: number, from: LeaderIsr | undefined, to: LeaderIsr, cause: StateChangeCause): void {
    const leaderMoved = from === undefined || from.leader !== to.leader;
    const isrChanged = from === undefined || !sameList(from.isr, to.isr);
    if (from !== undefined && leaderMoved && to.leader >= 0) this.counts.leaderChanges++;
    if (from !== undefined && isrChanged) this.counts.isrChanges++;
    if (!this.log.isLevelEnabled('info')) return;
    const msg =
      from === undefined
        ? 'initial leader and ISR'
        : leaderMoved
          ? to.leader < 0
            ? 'leader lost'
            : 'leader election'
          : isrChanged
            ? to.isr.length < from.isr.length
              ? 'ISR shrink'
              : 'ISR expand'
            : 'leader epoch bump';
    this.log.info(
      {
        topic,
        partition,
        oldLeader: from?.leader ?? -1,
        newLeader: to.leader,
        oldIsr: from?.isr ?? [],
        newIsr: to.isr,
        oldLeaderEpoch: from?.leaderEpoch ?? -1,
        leaderEpoch: to.leaderEpoch,
        cause,
      },
      msg,
    );
  }

  /** A partition's state move (Kafka's PartitionStateMachine); only real moves are written. */
  partitionState(topic: string, partition: number, from: string, to: string, cause: StateChangeCause, leader?: LeaderIsr): void {
    if (from === to) return;
    if (to === 'OfflinePartition') this.counts.offline++;
    if (to === 'OnlinePartition' && from === 'OfflinePartition') this.counts.online++;
    // Offline and back online are what an operator looks for; the other moves are detail.
    const important = to === 'OfflinePartition' || from === 'OfflinePartition';
    const level = important ? 'info' : 'debug';
    if (!this.log.isLevelEnabled(level)) return;
    this.log[level](
      { topic, partition, from, to, leader: leader?.leader ?? -1, isr: leader?.isr ?? [], leaderEpoch: leader?.leaderEpoch ?? -1, cause },
      to === 'OfflinePartition' ? 'partition offline' : from === 'OfflinePartition' ? 'partition online' : 'partition state change',
    );
  }

  /** A replica's state move (Kafka's ReplicaStateMachine): offline and back at info, the rest at debug. */
  replicaState(topic: string, partition: number, replica: number, from: string, to: string, cause: StateChangeCause): void {
    if (from === to) return;
    const level = to === 'OfflineReplica' || from === 'OfflineReplica' ? 'info' : 'debug';
    if (!this.log.isLevelEnabled(level)) return;
    this.log[level]({ topic, partition, replica, from, to, cause }, 'replica state change');
  }

  /** A leader's own ISR change (shrink by lag, expand once caught up), written to ZooKeeper. */
  isrChange(
    topic: string,
    partition: number,
    leader: number,
    leaderEpoch: number,
    oldIsr: readonly number[],
    newIsr: readonly number[],
    partitionEpoch: number,
  ): void {
    this.counts.isrChanges++;
    if (!this.log.isLevelEnabled('info')) return;
    const shrink = newIsr.length < oldIsr.length;
    this.log.info(
      { topic, partition, leader, leaderEpoch, oldIsr, newIsr, partitionEpoch, cause: shrink ? 'isr shrink by lag' : 'isr expand (caught up)' },
      shrink ? 'ISR shrink' : 'ISR expand',
    );
  }

  /** A broker applied a LeaderAndIsr for a partition ("become leader" / "become follower"). */
  becomeLeaderOrFollower(
    topic: string,
    partition: number,
    brokerId: number,
    state: LeaderIsr & { readonly replicas: readonly number[]; readonly partitionEpoch: number },
    controllerId: number,
    controllerEpoch: number,
  ): void {
    if (!this.log.isLevelEnabled('info')) return;
    this.log.info(
      {
        topic,
        partition,
        leader: state.leader,
        leaderEpoch: state.leaderEpoch,
        isr: state.isr,
        replicas: state.replicas,
        partitionEpoch: state.partitionEpoch,
        controllerId,
        controllerEpoch,
      },
      state.leader === brokerId ? 'become leader' : 'become follower',
    );
  }

  /** A broker applied a StopReplica for a partition (its replica stops; deleted with `deletePartition`). */
  stopReplica(
    topic: string,
    partition: number,
    leaderEpoch: number,
    deletePartition: boolean,
    controllerId: number,
    controllerEpoch: number,
    errorCode: number,
  ): void {
    if (!this.log.isLevelEnabled('info')) return;
    this.log.info({ topic, partition, leaderEpoch, deletePartition, controllerId, controllerEpoch, errorCode }, 'stop replica');
  }

  /** A summary line's numbers since `before` (a snapshot of `counts`). */
  since(before: StateChangeLog['counts']): StateChangeLog['counts'] {
    return {
      leaderChanges: this.counts.leaderChanges - before.leaderChanges,
      offline: this.counts.offline - before.offline,
      online: this.counts.online - before.online,
      isrChanges: this.counts.isrChanges - before.isrChanges,
    };
  }
}
