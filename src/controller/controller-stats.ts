/**
 * The controller's plain stats for its metrics (Kafka's ControllerStats, ControllerEventManager
 * and the KafkaController gauges): how long each kind of event took (by Kafka's ControllerState
 * names), how long events waited in the queue, unclean elections, and the cluster counts a
 * scrape reads from the context. Numbers only: server/metrics/ turns them into Prometheus.
 */
import { LatencyHistogram } from '../common/latency-histogram.js';
import { tpKey } from '../common/partition-keys.js';
import type { ControllerContext } from './context.js';
import type { ControllerEvent } from './events.js';

/** Count and total milliseconds of something timed (a Kafka timer's count, without its reservoir). */
export interface TimeTotals {
  count: number;
  sumMs: number;
}

/**
 * Each event's Kafka ControllerState, by the name of its `<Name>RateAndTimeMs` timer
 * (BrokerChange's is LeaderElectionRateAndTimeMs in Kafka, so it is here).
 */
const STATE_OF_EVENT: Readonly<Record<ControllerEvent['type'], string>> = {
  ControllerChange: 'ControllerChange',
  BrokerChange: 'LeaderElection',
  TopicChange: 'TopicChange',
  PartitionModifications: 'TopicChange',
  TopicDeletion: 'TopicDeletion',
  TopicDeletionStopReplicaResponseReceived: 'TopicDeletion',
  IsrChangeNotification: 'IsrChange',
  PreferredReplicaElectionZNode: 'ManualLeaderBalance',
  ReplicaLeaderElection: 'ManualLeaderBalance',
  TopicUncleanLeaderElectionEnable: 'TopicUncleanLeaderElectionEnable',
  ControlledShutdown: 'ControlledShutdown',
  AutoPreferredReplicaLeaderElection: 'AutoLeaderBalance',
  PartitionReassignment: 'PartitionReassignment',
  PartitionReassignmentIsrChange: 'PartitionReassignment',
  ApiPartitionReassignment: 'PartitionReassignment',
  ListPartitionReassignments: 'ListPartitionReassignment',
};

export class ControllerStats {
  /** Per ControllerState name (the timer's name less `RateAndTimeMs`): events processed and their time. */
  readonly stateTimes = new Map<string, LatencyHistogram>();
  /** Time events waited between put and processing (Kafka's EventQueueTimeMs). */
  readonly queueTime = new LatencyHistogram();
  /** Leaders elected from outside the ISR (Kafka's UncleanLeaderElectionsPerSec). */
  uncleanLeaderElections = 0;

  constructor() {
    for (const state of new Set(Object.values(STATE_OF_EVENT))) this.stateTimes.set(state, new LatencyHistogram());
  }

  eventProcessed(type: ControllerEvent['type'], ms: number): void {
    const t = this.stateTimes.get(STATE_OF_EVENT[type]);
    t?.observe(ms);
  }

  eventDequeued(waitedMs: number): void {
    this.queueTime.observe(waitedMs);
  }
}

/** The KafkaController gauges an active controller reports (all 0 on the others, as Kafka's). */
export interface ControllerStateCounts {
  offlinePartitions: number;
  preferredReplicaImbalance: number;
  globalTopics: number;
  globalPartitions: number;
  activeBrokers: number;
}

export function emptyControllerStateCounts(): ControllerStateCounts {
  return { offlinePartitions: 0, preferredReplicaImbalance: 0, globalTopics: 0, globalPartitions: 0, activeBrokers: 0 };
}

/**
 * Counts from the controller's context, as Kafka's gauges: offline partitions and the preferred
 * replica imbalance leave out topics queued for deletion.
 */
export function countControllerState(ctx: ControllerContext, out: ControllerStateCounts): ControllerStateCounts {
  out.offlinePartitions = out.preferredReplicaImbalance = out.globalPartitions = 0;
  out.globalTopics = ctx.topics.size;
  out.activeBrokers = ctx.liveBrokers.size;
  for (const topic of ctx.topics.values()) {
    out.globalPartitions += topic.assignment.size;
    if (ctx.topicsToBeDeleted.has(topic.name)) continue;
    for (const [partition, replicas] of topic.assignment) {
      const key = tpKey(topic.name, partition);
      if (ctx.partitionStates.get(key) === 'OfflinePartition') out.offlinePartitions++;
      const leader = ctx.leadership.get(key)?.state.leader;
      if (leader !== undefined && leader !== replicas[0]) out.preferredReplicaImbalance++;
    }
  }
  return out;
}
