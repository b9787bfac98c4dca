/**
 * The broker's group coordinator, wired from its configuration: with offsets.history.enable, its
 * offset history writer (coordinator/group/history/) over this broker's replica manager, and, in
 * cluster mode, its inter-broker connections for history partitions led by another broker.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { BrokerConnections } from '../client/broker-connections.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import { GroupCoordinator, OFFSETS_TOPIC, type GroupCoordinatorReplicas } from '../coordinator/group/group-coordinator.js';
import type { GroupConfigLookup } from '../coordinator/group/consumer/settings.js';
import { OffsetHistoryWriter } from '../coordinator/group/history/history-writer.js';

export type { GroupCoordinator };

export function openGroupCoordinator(
  cfg: BrokerConfig,
  metadata: MetadataStore,
  replicaManager: GroupCoordinatorReplicas,
  logger: Logger,
  connections: () => BrokerConnections | undefined,
  configsOf?: GroupConfigLookup,
): GroupCoordinator {
  // The writer creates the offsets topic through the coordinator when it must (made below).
  let coordinator: GroupCoordinator | undefined;
  const history = cfg.offsetsHistoryEnable
    ? {
        aliveIntervalMs: cfg.offsetsHistoryAliveIntervalMs,
        sink: new OffsetHistoryWriter({
          brokerId: cfg.brokerId,
          metadata,
          replicaManager,
          logger: logger.child({ component: 'offset-history' }),
          offsetsTopic: OFFSETS_TOPIC,
          ensureOffsetsTopic: () => coordinator!.ensureOffsetsTopic(),
          numPartitions: cfg.offsetsTopicNumPartitions,
          retentionMs: cfg.offsetsHistoryRetentionMs,
          segmentBytes: cfg.offsetsTopicSegmentBytes,
          connections,
        }),
      }
    : undefined;
  coordinator = new GroupCoordinator({
    ...(configsOf ? { configsOf } : {}),
    config: cfg,
    metadata,
    replicaManager,
    logger: logger.child({ component: 'group-coordinator' }),
    ...(history ? { history } : {}),
  });
  return coordinator;
}
