/**
 * The controller's metrics (Kafka's kafka.controller MBeans, named as the JMX exporter's Kafka
 * rules name them): KafkaController's gauges (ActiveControllerCount and the cluster counts an
 * active controller reports, 0 elsewhere, so each sums to the cluster's figure over brokers),
 * ControllerStats' per-state times and unclean elections, ControllerEventManager's queue.
 *
 * Embedded (single-broker) mode has no ZooKeeper controller: the broker is its own controller,
 * as a one-node KRaft combined mode reports, so ActiveControllerCount is 1, the global counts
 * are the metadata's, ActiveBrokerCount 1, the preferred-replica imbalance 0 (one replica), and
 * OfflinePartitionsCount counts partitions whose log directory is offline. The ControllerStats
 * and event-queue families are absent there: no controller events exist.
 */
import type { KafkaController } from '../../controller/index.js';
import { emptyControllerStateCounts, type ControllerStateCounts } from '../../controller/controller-stats.js';
import type { MetricsRegistry } from './registry.js';
import { statsCounter, statsGauge, one } from './stats-families.js';
import { statsQuantileTimer } from './timer-metrics.js';

/** Where the controller gauges come from: the hosted controller (cluster mode) or the broker itself (embedded). */
export type ControllerSource =
  | { kind: 'zookeeper'; controller: () => KafkaController | undefined }
  | {
      kind: 'embedded';
      counts: (out: ControllerStateCounts) => ControllerStateCounts;
      /** With shard workers: this scrape's count of partitions without a leader, asked of every shard (`counts` then leaves it stale). */
      offlinePartitions?: () => Promise<number>;
    };

/** Kafka's ControllerState names with a RateAndTimeMs timer that Fjord's controller events map to (controller-stats.ts). */
const TIMED_STATES = [
  'ControllerChange',
  'LeaderElection',
  'TopicChange',
  'TopicDeletion',
  'IsrChange',
  'ManualLeaderBalance',
  'AutoLeaderBalance',
  'ControlledShutdown',
  'TopicUncleanLeaderElectionEnable',
  'PartitionReassignment',
  'ListPartitionReassignment',
];

export function registerControllerMetrics(registry: MetricsRegistry, source: ControllerSource): void {
  const counts = emptyControllerStateCounts();
  let fresh = false;
  const current = (): ControllerStateCounts => {
    if (!fresh) {
      if (source.kind === 'embedded') source.counts(counts);
      else {
        const c = source.controller();
        if (c) c.stateCounts(counts);
        else Object.assign(counts, emptyControllerStateCounts());
      }
      fresh = true;
      setImmediate(() => {
        fresh = false;
      });
    }
    return counts;
  };
  const prefix = 'kafka_controller_kafkacontroller_';
  const active = (): number => (source.kind === 'embedded' || source.controller()?.isActive ? 1 : 0);
  statsGauge(registry, `${prefix}activecontrollercount`, '1 on the active controller, 0 elsewhere: the sum over brokers must be 1.', () => one(active()));
  const gauge = (name: string, help: string, pick: (c: ControllerStateCounts) => number): void =>
    statsGauge(registry, prefix + name, help, () => one(pick(current())));
  const offlineHelp = 'Partitions without a live leader (active controller only; topics being deleted excluded).';
  const offlineOfShards = source.kind === 'embedded' ? source.offlinePartitions : undefined;
  if (offlineOfShards) statsGauge(registry, `${prefix}offlinepartitionscount`, offlineHelp, async () => one(await offlineOfShards()));
  else gauge('offlinepartitionscount', offlineHelp, (c) => c.offlinePartitions);
  gauge('preferredreplicaimbalancecount', 'Partitions not led by their preferred replica (active controller only).', (c) => c.preferredReplicaImbalance);
  gauge('globaltopiccount', 'Topics in the cluster (active controller only).', (c) => c.globalTopics);
  gauge('globalpartitioncount', 'Partitions in the cluster (active controller only).', (c) => c.globalPartitions);
  gauge('activebrokercount', 'Registered brokers (active controller only).', (c) => c.activeBrokers);
  gauge('fencedbrokercount', 'Fenced brokers: always 0, ZooKeeper mode has no fencing (active controller only).', () => 0);
  if (source.kind === 'embedded') return;

  const controller = source.controller;
  for (const state of TIMED_STATES)
    statsQuantileTimer(
      registry,
      `kafka_controller_controllerstats_${state.toLowerCase()}rateandtimems`,
      `Controller events of state ${state}: processing time in ms, quantiles and count (ControllerStats ${state}RateAndTimeMs).`,
      () => controller()?.stats.stateTimes.get(state),
    );
  statsCounter(registry, 'kafka_controller_controllerstats_uncleanleaderelections_total', 'Leaders elected from outside the ISR by this controller.', () =>
    one(controller()?.stats.uncleanLeaderElections ?? 0),
  );
  statsGauge(registry, 'kafka_controller_controllereventmanager_eventqueuesize', 'Controller events waiting to be processed.', () =>
    one(controller()?.eventQueueSize ?? 0),
  );
  statsQuantileTimer(
    registry,
    'kafka_controller_controllereventmanager_eventqueuetimems',
    'Time controller events waited in the queue, ms: quantiles and count (EventQueueTimeMs).',
    () => controller()?.stats.queueTime,
  );
}
