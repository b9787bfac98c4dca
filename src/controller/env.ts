/**
 * What the state-change code works with while one event runs: the context, ZooKeeper, the
 * event's request batch and the fence of the current controller term. One object so the
 * operations below stay plain functions.
 */
import type { Logger } from 'pino';
import type { StateChangeCause, StateChangeLog } from '../common/state-change-log.js';
import type { ControllerFence, KafkaZkApi } from '../metadata/zk/zk-client-types.js';
import type { ZkWatcher } from '../metadata/zk/zk-session.js';
import type { ControllerContext } from './context.js';
import type { ControllerConfig } from './config.js';
import type { ControllerBrokerRequestBatch } from './request-batch.js';
import type { ControllerStats } from './controller-stats.js';

export interface ControllerEnv {
  readonly ctx: ControllerContext;
  readonly zk: KafkaZkApi;
  readonly batch: ControllerBrokerRequestBatch;
  readonly log: Logger;
  /** The state-change log (per-partition lines) and why the current event changes states. */
  readonly stateChange: StateChangeLog;
  cause: StateChangeCause;
  /** Controller epoch + `/controller_epoch` znode version: every controller write checks it. */
  fence(): ControllerFence;
  /** Where unclean elections are counted (absent in unit tests' hand-made envs). */
  readonly stats?: ControllerStats;
  /** unclean.leader.election.enable for the topic (topic config over the broker default). */
  uncleanLeaderElectionEnabled(topic: string): Promise<boolean>;
}

/** Kafka error codes the controller answers with that the shared table lacks. */
export const ControllerErrors = {
  STALE_BROKER_EPOCH: 77,
  PREFERRED_LEADER_NOT_AVAILABLE: 80,
  ELIGIBLE_LEADERS_NOT_AVAILABLE: 83,
  ELECTION_NOT_NEEDED: 84,
  NO_REASSIGNMENT_IN_PROGRESS: 85,
} as const;

/** One-shot ZooKeeper watchers of the current controller term; each turns into an event. */
export interface ZkWatchers {
  brokers: ZkWatcher;
  topics: ZkWatcher;
  topic(topic: string): ZkWatcher;
  deletions: ZkWatcher;
  isrChanges: ZkWatcher;
  preferredElection: ZkWatcher;
  reassignment: ZkWatcher;
  /** The state znode of a partition being reassigned (Kafka's PartitionReassignmentIsrChangeHandler). */
  partitionState(tp: { topic: string; partition: number }): ZkWatcher;
}

/** The env of an event handler: state-change code plus watches, config and sending. */
export interface ControllerRuntime extends ControllerEnv {
  readonly config: ControllerConfig;
  readonly watch: ZkWatchers;
  /** Sends what the batch holds now (an event may send in steps, as Kafka does). */
  sendBatch(): void;
  /** A broker left (or restarted): drop its queue and connection. */
  removeBrokerChannel(brokerId: number): void;
}
