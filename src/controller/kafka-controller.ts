/**
 * The ZooKeeper-mode controller as a broker hosts it (Kafka's KafkaController). Every broker runs
 * one; it acts only while its broker holds `/controller` (ZkMembership's election). All work is
 * done by events on one queue; ZooKeeper watches of the current term, broker answers, the
 * rebalance timer and the API entries (ControlledShutdown, ElectLeaders) become events. A fenced
 * write that finds `/controller_epoch` moved (ControllerMovedError) makes it resign at once.
 */
import type { Logger } from 'pino';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { ControllerMovedError, type ControllerFence, type KafkaZkApi } from '../metadata/zk/zk-client-types.js';
import type { ZkWatcher } from '../metadata/zk/zk-session.js';
import { ControllerContext, type TopicPartition } from './context.js';
import type { ControllerConfig } from './config.js';
import { ControllerBrokerRequestBatch, type ControllerRequestSink } from './request-batch.js';
import { ControllerChannelManager } from './channel-manager.js';
import type { InterBrokerInterceptor } from '../client/inter-broker-interceptor.js';
import { ControllerEventManager, type ControllerEvent, type Reply } from './events.js';
import type { ControllerRuntime, ZkWatchers } from './env.js';
import { onControllerFailover } from './failover.js';
import { processBrokerChange, processControlledShutdown } from './broker-events.js';
import { processIsrChangeNotification, processPartitionModifications, processTopicChange } from './topic-events.js';
import { enqueueTopicsForDeletion, onStopReplicaDeleteResponse } from './topic-deletion.js';
import {
  checkAndTriggerAutoLeaderRebalance,
  onReplicaElection,
  processPreferredReplicaElectionZNode,
  processTopicUncleanLeaderElectionEnable,
} from './leader-balance.js';
import { processPartitionReassignmentIsrChange } from './reassignment.js';
import { listPartitionReassignments, processApiPartitionReassignment, processZkPartitionReassignment } from './reassignment-requests.js';
import type { ApiResult, ListedReassignment } from './reassignment-state.js';
import { messageOf } from '../common/errors.js';
import { StateChangeLog, type StateChangeCause } from '../common/state-change-log.js';

/** Why an event changes partition states, as the state-change log names it. */
function causeOf(e: ControllerEvent): StateChangeCause {
  switch (e.type) {
    case 'BrokerChange':
      return 'broker failure'; // broker-events.ts tells failure from startup
    case 'TopicChange':
      return 'new partition';
    case 'PartitionModifications':
      return 'partition modification';
    case 'TopicDeletion':
    case 'TopicDeletionStopReplicaResponseReceived':
      return 'topic deletion';
    case 'IsrChangeNotification':
      return 'isr change notification';
    case 'TopicUncleanLeaderElectionEnable':
      return 'unclean election';
    case 'ReplicaLeaderElection':
      return e.electionType === 1 ? 'unclean election' : 'preferred election';
    case 'ControlledShutdown':
      return 'controlled shutdown';
    case 'AutoPreferredReplicaLeaderElection':
      return 'auto leader rebalance';
    case 'PreferredReplicaElectionZNode':
      return 'preferred election';
    case 'PartitionReassignment':
    case 'PartitionReassignmentIsrChange':
    case 'ApiPartitionReassignment':
    case 'ListPartitionReassignments':
      return 'reassignment';
    case 'ControllerChange':
      return 'controller failover';
  }
}
import { countControllerState, type ControllerStateCounts, type ControllerStats } from './controller-stats.js';

/** What the controller needs of ZkMembership (tests pass a fake). */
export interface ControllerMembership {
  readonly isController: boolean;
  controllerFence(): ControllerFence | undefined;
  resign(): Promise<void>;
  on(event: 'controllerChange', listener: (controllerId: number) => void): unknown;
  off(event: 'controllerChange', listener: (controllerId: number) => void): unknown;
}

export interface ControllerHost {
  brokerId: number;
  zk: KafkaZkApi;
  membership: ControllerMembership;
  config: ControllerConfig;
  logger: Logger;
  /** Where requests go; the default is a ControllerChannelManager (tests capture instead). */
  sink?: ControllerRequestSink & { removeBroker?(id: number): void; shutdown?(): void };
  /** Test seam on the default channel manager's sends (see InterBrokerInterceptor). */
  interBrokerInterceptor?: InterBrokerInterceptor;
}

export class KafkaController {
  private ctx = new ControllerContext();
  private active = false;
  /** Bumped on every failover and resignation: watches of an older term are ignored. */
  private term = 0;
  private fence: ControllerFence | undefined;
  private readonly events: ControllerEventManager;
  private readonly sink: NonNullable<ControllerHost['sink']>;
  private readonly log: Logger;
  private readonly stateChange: StateChangeLog;
  private rebalanceTimer: NodeJS.Timeout | undefined;
  private readonly onControllerChange = (): void => this.events.put({ type: 'ControllerChange' });

  constructor(private readonly host: ControllerHost) {
    this.log = host.logger.child({ component: 'controller' });
    this.stateChange = new StateChangeLog(this.log);
    this.events = new ControllerEventManager((e) => this.process(e), this.log);
    this.sink =
      host.sink ??
      new ControllerChannelManager({
        controllerId: host.brokerId,
        interBrokerListenerName: host.config.interBrokerListenerName,
        ...(host.config.interBrokerSecurity ? { security: host.config.interBrokerSecurity } : {}),
        requestTimeoutMs: host.config.requestTimeoutMs,
        logger: this.log,
        brokerInfo: (id) => this.ctx.liveBrokers.get(id),
        ...(host.interBrokerInterceptor ? { interceptor: host.interBrokerInterceptor } : {}),
      });
  }

  get isActive(): boolean {
    return this.active;
  }

  /** Event times, queue wait and unclean elections (controller-stats.ts), for the metrics. */
  get stats(): ControllerStats {
    return this.events.stats;
  }

  /** Events waiting in the queue (Kafka's EventQueueSize). */
  get eventQueueSize(): number {
    return this.events.size;
  }

  /** The cluster counts Kafka's controller gauges report: from the context while active, else all 0. */
  stateCounts(out: ControllerStateCounts): ControllerStateCounts {
    if (this.active) return countControllerState(this.ctx, out);
    out.offlinePartitions = out.preferredReplicaImbalance = out.globalTopics = out.globalPartitions = out.activeBrokers = 0;
    return out;
  }

  /** The controller's view, for tests and diagnostics (do not mutate). */
  get context(): ControllerContext {
    return this.ctx;
  }

  start(): void {
    this.host.membership.on('controllerChange', this.onControllerChange);
    this.events.put({ type: 'ControllerChange' });
  }

  async stop(): Promise<void> {
    this.host.membership.off('controllerChange', this.onControllerChange);
    await this.events.close();
    this.onControllerResignation();
    this.sink.shutdown?.();
  }

  /** Resolves once every queued event has been processed (tests). */
  idle(): Promise<void> {
    return this.events.idle();
  }

  controlledShutdown(brokerId: number, brokerEpoch: bigint): Promise<TopicPartition[]> {
    return this.ask<TopicPartition[]>((reply) => ({ type: 'ControlledShutdown', brokerId, brokerEpoch, reply }));
  }

  electLeaders(type: 0 | 1, partitions: TopicPartition[] | null): Promise<Map<string, number>> {
    return this.ask<Map<string, number>>((reply) => ({ type: 'ReplicaLeaderElection', electionType: type, partitions, reply }));
  }

  /**
   * A topic's configs changed (a /config/changes notification this broker processed): if the
   * topic now allows unclean elections, its offline partitions get leaders at once, as Kafka's
   * TopicUncleanLeaderElectionEnable event. Ignored while this broker is not the controller.
   */
  topicConfigChanged(topic: string): void {
    if (this.active) this.events.put({ type: 'TopicUncleanLeaderElectionEnable', topic });
  }

  /** AlterPartitionReassignments (key 45) entry: per partition (tpKey) an error code and message; replicas null cancels. */
  alterPartitionReassignments(reassignments: (TopicPartition & { replicas: number[] | null })[]): Promise<Map<string, ApiResult>> {
    return this.ask<Map<string, ApiResult>>((reply) => ({ type: 'ApiPartitionReassignment', reassignments, reply }));
  }

  /** ListPartitionReassignments (key 46) entry: the partitions asked for (null: all) being reassigned. */
  listPartitionReassignments(partitions: TopicPartition[] | null): Promise<ListedReassignment[]> {
    return this.ask<ListedReassignment[]>((reply) => ({ type: 'ListPartitionReassignments', partitions, reply }));
  }

  private ask<T>(make: (reply: Reply<T>) => ControllerEvent): Promise<T> {
    if (!this.active) return Promise.reject(new KafkaError(ErrorCode.NOT_CONTROLLER, 'this broker is not the controller'));
    return new Promise<T>((resolve, reject) => this.events.put(make({ resolve, reject })));
  }

  private watcher(event: ControllerEvent): ZkWatcher {
    const term = this.term;
    return () => {
      if (this.active && this.term === term) this.events.put(event);
    };
  }

  private runtime(cause: StateChangeCause): ControllerRuntime {
    const ctx = this.ctx;
    const fence = this.fence!;
    const batch = new ControllerBrokerRequestBatch(ctx, this.host.brokerId, this.host.config.interBrokerListenerName, (brokerId, results) =>
      this.watcher({ type: 'TopicDeletionStopReplicaResponseReceived', brokerId, results })({ type: 'dataChanged', path: '' }),
    );
    const watch: ZkWatchers = {
      brokers: this.watcher({ type: 'BrokerChange' }),
      topics: this.watcher({ type: 'TopicChange' }),
      topic: (topic) => this.watcher({ type: 'PartitionModifications', topic }),
      deletions: this.watcher({ type: 'TopicDeletion' }),
      isrChanges: this.watcher({ type: 'IsrChangeNotification' }),
      preferredElection: this.watcher({ type: 'PreferredReplicaElectionZNode' }),
      reassignment: this.watcher({ type: 'PartitionReassignment' }),
      partitionState: (tp) => this.watcher({ type: 'PartitionReassignmentIsrChange', tp: { topic: tp.topic, partition: tp.partition } }),
    };
    const { zk, config } = this.host;
    return {
      ctx,
      zk,
      batch,
      log: this.log,
      stateChange: this.stateChange,
      cause,
      config,
      watch,
      fence: () => fence,
      stats: this.events.stats,
      uncleanLeaderElectionEnabled: async (topic) => {
        const v = (await zk.getEntityConfigs('topics', topic))['unclean.leader.election.enable'];
        return v === undefined ? config.uncleanLeaderElectionEnable : v === 'true';
      },
      sendBatch: () => batch.sendRequestsToBrokers(ctx.epoch, this.sink),
      removeBrokerChannel: (id) => this.sink.removeBroker?.(id),
    };
  }

  private async process(e: ControllerEvent): Promise<void> {
    if (e.type === 'ControllerChange') return this.processControllerChange();
    if (!this.active) {
      if ('reply' in e) e.reply.reject(new KafkaError(ErrorCode.NOT_CONTROLLER, 'this broker is not the controller'));
      return;
    }
    const rt = this.runtime(causeOf(e));
    const before = { ...this.stateChange.counts };
    try {
      await this.dispatch(rt, e);
      rt.sendBatch();
      this.logSummary(e.type, before);
    } catch (err) {
      rt.batch.clear();
      if (err instanceof ControllerMovedError) {
        this.log.warn({ event: e.type }, 'controller epoch moved on: resigning');
        if ('reply' in e) e.reply.reject(new KafkaError(ErrorCode.NOT_CONTROLLER, 'the controller moved'));
        this.onControllerResignation();
        await this.host.membership.resign();
        return;
      }
      throw err;
    }
  }

  private async dispatch(rt: ControllerRuntime, e: ControllerEvent): Promise<void> {
    switch (e.type) {
      case 'ControllerChange':
        return;
      case 'BrokerChange':
        return processBrokerChange(rt);
      case 'TopicChange':
        return processTopicChange(rt);
      case 'PartitionModifications':
        return processPartitionModifications(rt, e.topic);
      case 'TopicDeletion':
        return this.processTopicDeletion(rt);
      case 'TopicDeletionStopReplicaResponseReceived':
        return onStopReplicaDeleteResponse(rt, e.brokerId, e.results);
      case 'IsrChangeNotification':
        return processIsrChangeNotification(rt);
      case 'PreferredReplicaElectionZNode':
        return processPreferredReplicaElectionZNode(rt);
      case 'TopicUncleanLeaderElectionEnable':
        return processTopicUncleanLeaderElectionEnable(rt, e.topic);
      // Answers go out after the event's requests, so a caller sees their effects queued.
      case 'ReplicaLeaderElection': {
        const results = await onReplicaElection(rt, e.electionType, e.partitions);
        rt.sendBatch();
        e.reply.resolve(results);
        return;
      }
      case 'ControlledShutdown': {
        const remaining = await processControlledShutdown(rt, e.brokerId, e.brokerEpoch);
        rt.sendBatch();
        e.reply.resolve(remaining);
        return;
      }
      case 'AutoPreferredReplicaLeaderElection':
        return checkAndTriggerAutoLeaderRebalance(rt);
      case 'PartitionReassignment':
        await processZkPartitionReassignment(rt);
        return;
      case 'PartitionReassignmentIsrChange':
        return processPartitionReassignmentIsrChange(rt, e.tp);
      case 'ApiPartitionReassignment': {
        const results = await processApiPartitionReassignment(rt, e.reassignments);
        rt.sendBatch();
        e.reply.resolve(results);
        return;
      }
      case 'ListPartitionReassignments':
        e.reply.resolve(listPartitionReassignments(rt.ctx, e.partitions));
        return;
    }
  }

  private async processTopicDeletion(rt: ControllerRuntime): Promise<void> {
    const marked = await rt.zk.getTopicDeletions(rt.watch.deletions);
    const unknown = marked.filter((t) => !rt.ctx.topics.has(t));
    for (const t of unknown) await rt.zk.deleteTopicDeletionMarker(t, rt.fence());
    const known = marked.filter((t) => rt.ctx.topics.has(t));
    // A topic with a reassignment in progress waits for it (Kafka marks it ineligible).
    for (const t of known)
      if (rt.ctx.partitionsForTopic(t).some((tp) => rt.ctx.pendingReassignments.has(`${tp.topic}-${tp.partition}`))) rt.ctx.topicsIneligibleForDeletion.add(t);
    if (!this.host.config.deleteTopicEnable) {
      this.log.warn({ topics: known }, 'delete.topic.enable is false: deletion markers removed, topics kept');
      for (const t of known) await rt.zk.deleteTopicDeletionMarker(t, rt.fence());
      return;
    }
    await enqueueTopicsForDeletion(rt, known);
  }

  private async processControllerChange(): Promise<void> {
    const fence = this.host.membership.controllerFence();
    const elected = this.host.membership.isController && fence !== undefined;
    if (this.active && (!elected || fence.controllerEpoch !== this.fence?.controllerEpoch)) this.onControllerResignation();
    if (!elected || this.active) return;
    this.active = true;
    this.term++;
    this.fence = fence;
    this.ctx = new ControllerContext();
    this.ctx.epoch = fence.controllerEpoch;
    this.ctx.epochZkVersion = fence.epochZkVersion;
    const rt = this.runtime('controller failover');
    const before = { ...this.stateChange.counts };
    try {
      await onControllerFailover(rt);
      rt.sendBatch();
      this.logSummary('ControllerChange', before);
      this.scheduleAutoRebalance();
    } catch (err) {
      rt.batch.clear();
      this.onControllerResignation();
      this.log.error({ err: messageOf(err) }, 'controller failover failed: resigning');
      await this.host.membership.resign();
    }
  }

  /** One info line per event that changed partitions: "N partitions moved leader, M offline". */
  private logSummary(event: ControllerEvent['type'], before: StateChangeLog['counts']): void {
    const d = this.stateChange.since(before);
    if (d.leaderChanges + d.offline + d.online + d.isrChanges === 0) return;
    let offline = 0;
    for (const state of this.ctx.partitionStates.values()) if (state === 'OfflinePartition') offline++;
    this.log.info(
      { event, leaderMoves: d.leaderChanges, isrChanges: d.isrChanges, wentOffline: d.offline, cameOnline: d.online, offlinePartitions: offline },
      `${d.leaderChanges} partitions moved leader, ${offline} offline`,
    );
  }

  private scheduleAutoRebalance(): void {
    if (!this.host.config.autoLeaderRebalanceEnable) return;
    const term = this.term;
    this.rebalanceTimer = setInterval(() => {
      if (this.active && this.term === term) this.events.put({ type: 'AutoPreferredReplicaLeaderElection' });
    }, this.host.config.leaderImbalanceCheckIntervalSeconds * 1000);
    this.rebalanceTimer.unref();
  }

  /** Kafka's onControllerResignation: stop acting; watches of this term fall silent. */
  private onControllerResignation(): void {
    if (!this.active) return;
    this.log.info({ controllerEpoch: this.fence?.controllerEpoch }, 'resigning as controller');
    this.active = false;
    this.term++;
    this.fence = undefined;
    clearInterval(this.rebalanceTimer);
    this.rebalanceTimer = undefined;
    for (const id of this.ctx.liveBrokers.keys()) this.sink.removeBroker?.(id);
  }
}
