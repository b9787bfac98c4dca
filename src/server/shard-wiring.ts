/**
 * Where the broker's partitions live (docs/threads.md "Step 1, wired" and step 3): with
 * num.io.threads = 1 on this thread (today's LogManager and ReplicaManager, the seam's in-thread
 * shards); with num.io.threads = N > 1, embedded or cluster mode, on WorkerShards: shard 0 on this thread
 * (the internal topics; its LogManager, in shard mode reporting to SharedDirFiles, and its
 * ReplicaManager are the broker's own, so the coordinators append without a hand-over) and N-1
 * shard worker threads for every other topic. Metadata changes reach the workers before topic and
 * config administration answers (PartitionAccess.syncTopic) and whenever the store changes.
 * Cluster mode adds the controller's role changes split by shard (ShardRoles), ISR writes and the
 * test interceptor done on this thread for the workers, and the live brokers' endpoints posted to them.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { AdminServices } from './admin/index.js';
import { partitionAccessOf, type PartitionAccess } from './admin/partition-access.js';
import { LogManager } from '../storage/manager/log-manager.js';
import { ReplicaManager } from '../replication/replica-manager.js';
import { logManagerOptions, logManagerSettings } from '../replication/shards/log-manager-options.js';
import { inThreadShardsOf } from '../replication/shards/in-thread-shards.js';
import type { PartitionShards } from '../replication/shards/partition-shards.js';
import { WorkerShards } from '../replication/shards/worker/worker-shards.js';
import type { RestartTimings } from '../replication/shards/worker/restart-policy.js';
import { sharedFrameBuffers } from './network/shared-frame-buffers.js';
import type { ZkMode } from '../metadata/zk/zk-mode.js';
import type { ZkBrokerMetadata } from '../metadata/zk/zk-broker-metadata.js';
import type { InterBrokerInterceptor } from '../client/inter-broker-interceptor.js';
import { ShardRoles } from '../replication/shards/worker/shard-roles.js';
import type { WorkerShardsCluster } from '../replication/shards/worker/worker-shards-options.js';
import type { BrokerEndpoint } from '../replication/shards/worker/shard-protocol.js';

export interface PartitionHosting {
  logManager: LogManager;
  replicaManager: ReplicaManager;
  /** The partitions' owners: services.shards, PartitionAccess.shards, the fetch service's reads. */
  shards: PartitionShards;
  /** What topic and config administration reach the partitions through. */
  access: PartitionAccess;
  /** The shard workers, when num.io.threads > 1: closing them closes shard 0's logs too. */
  workers?: WorkerShards;
  /** Cluster mode on shard workers: the controller's role changes split by shard, and the ledger leader readiness and health read. */
  roles?: ShardRoles;
}

export interface PartitionHostingOptions {
  config: BrokerConfig;
  metadata: MetadataStore;
  admin: AdminServices;
  logger: Logger;
  zk?: ZkMode | undefined;
  image?: ZkBrokerMetadata | undefined;
  interBrokerInterceptor?: InterBrokerInterceptor | undefined;
  /** When a shard worker that ended is started again (tests shorten or lengthen it; default: restart-policy.ts's). */
  shardRestart?: RestartTimings | undefined;
}

/** How many shard worker threads the configuration asks for: num.io.threads - 1, in embedded and cluster mode alike. */
export function shardWorkerCount(cfg: BrokerConfig): number {
  return cfg.numIoThreads <= 1 ? 0 : cfg.numIoThreads - 1;
}

/** Opens the logs and the partitions on them, on this thread or on shard workers as num.io.threads says. */
export async function openPartitionHosting(o: PartitionHostingOptions): Promise<PartitionHosting> {
  const workers = shardWorkerCount(o.config);
  return workers > 0 ? openOnWorkers(o, workers) : openInThread(o);
}

/** Cluster mode's part of the shards: the broker's ISR writer, interceptor and image serve the workers through the main thread. */
async function clusterPart(o: PartitionHostingOptions): Promise<{ cluster: WorkerShardsCluster; roles: ShardRoles } | undefined> {
  const { zk, image, config: cfg, logger } = o;
  if (!zk || !image) return undefined;
  const listener = cfg.interBrokerListenerName;
  const brokers = (): BrokerEndpoint[] =>
    image.brokers().flatMap((b) => {
      const e = image.endpoint(b.id, listener);
      return e ? [{ id: b.id, host: e.host, port: e.port }] : [];
    });
  const isrWriter = new (await import('../replication/partition/isr/zk-isr-writer.js')).ZkIsrWriter(await zk.zkClient(), logger.child({ component: 'isr' }));
  const roles = new ShardRoles({ brokerId: cfg.brokerId, brokers, logger: logger.child({ component: 'shard-roles' }) });
  const interceptor = o.interBrokerInterceptor;
  return {
    roles,
    cluster: {
      init: { brokers: brokers(), ...(cfg.interBrokerSecurity ? { security: cfg.interBrokerSecurity } : {}), intercepted: interceptor !== undefined },
      main: { isrWriter, ...(interceptor ? { interceptor } : {}), isrWritten: (change, zkVersion) => roles.isrWritten(change, zkVersion) },
      local: {
        isrWriter,
        ...(interceptor ? { interceptor } : {}),
        brokerEndpoint: (id) => image.endpoint(id, listener),
        metaProperties: zk.metaProperties(),
      },
      restarted: (index) => roles.restarted(index),
    },
  };
}

async function openOnWorkers(o: PartitionHostingOptions, count: number): Promise<PartitionHosting> {
  const { config: cfg, metadata, logger } = o;
  const part = await clusterPart(o);
  const workers = await WorkerShards.open({
    config: cfg,
    workers: count,
    topics: metadata.topics(),
    logConfigFor: (topic) => o.admin.configs.logConfigFor(topic),
    logger: logger.child({ component: 'shards' }),
    // Every shard's LogManager, shard 0's included, takes the broker's log settings (log-manager-options.ts).
    logs: cfg,
    // Produce frames are in shared memory (the socket server's sharedProduceFrames): the workers
    // read them in place, holding each until they answer. Anything else is copied, never moved:
    // the network layer's other frame buffers are pooled and reused once answered.
    sharedRecords: sharedFrameBuffers,
    moveProduceBuffers: false,
    ...(o.shardRestart ? { restart: o.shardRestart } : {}),
    ...(part ? { cluster: part.cluster } : {}),
  });
  part?.roles.attach(workers);
  const { logManager, replicaManager } = workers.local;
  // Each store change is posted to every shard once, as it happens; whoever waits for a topic's
  // logs (topic and config administration, or services.replicaManager.syncTopic) waits for that post.
  const posted = new Map<string, Promise<void>>();
  const post = (topic: string): Promise<void> => {
    const info = metadata.topic(topic);
    const done = (info ? workers.topicsChanged([info]) : workers.topicDeleted(topic)).finally(() => {
      if (posted.get(topic) === done) posted.delete(topic);
    });
    posted.set(topic, done);
    return done;
  };
  metadata.onChange((topic) => void post(topic).catch((err: unknown) => logger.error({ err, topic }, 'posting a metadata change to the shard workers failed')));
  const syncTopic = (topic: string): Promise<void> => posted.get(topic) ?? post(topic);
  // Whoever waits on the broker's ReplicaManager (services.replicaManager.syncTopic) waits for the
  // workers' post too; shard 0's own handling of a post syncs its logs alone, so no post waits for itself.
  replicaManager.alsoAwaitOnSync((topic) => posted.get(topic));
  replicaManager.fetchService.readThrough(workers);
  logger.info(
    `partitions on ${workers.count} shards: shard 0 on the main thread (internal topics), ${count} shard worker threads${part ? ' (cluster mode)' : ''}`,
  );
  const local = partitionAccessOf(replicaManager, metadata);
  return {
    logManager,
    replicaManager,
    shards: workers,
    workers,
    ...(part ? { roles: part.roles } : {}),
    access: {
      shards: workers,
      // Shard 0's partitions; a worker's get the effective config with each post (syncTopic, reconfigure).
      localPartition: local.localPartition,
      logDirsState: local.logDirsState,
      syncTopic,
      reconfigure: (topic) => void post(topic).catch((err: unknown) => logger.error({ err, topic }, 'posting a config change to the shard workers failed')),
      onWorker: (topic, partition) => {
        const shard = workers.shardOf(topic, partition);
        // A worker waiting for its restart hosts them still: its new worker opens the logs of topics created meanwhile.
        return shard !== 0 && workers.isHosting(shard);
      },
    },
  };
}

/** Today's broker: every partition on this thread. */
async function openInThread(o: PartitionHostingOptions): Promise<PartitionHosting> {
  const { config: cfg, metadata, admin, logger: log, zk, image } = o;
  const logManager = await LogManager.open(
    logManagerOptions(cfg, logManagerSettings(cfg), {
      logger: log.child({ component: 'storage' }),
      ...(zk ? { metaProperties: zk.metaProperties() } : {}),
      // Logs found on disk start with their topic's config (compaction of __consumer_offsets,
      // retention) from the first moment, not only once the replica manager syncs them.
      topicConfig: (topic) => {
        try {
          return admin.configs.logConfigFor(topic);
        } catch {
          return undefined; // an invalid stored override: the replica manager logs it on sync
        }
      },
    }),
  );
  // Cluster mode: leaders write their ISR changes to ZooKeeper (embedded mode: ISR = [self], no writer).
  const isrWriter = zk
    ? new (await import('../replication/partition/isr/zk-isr-writer.js')).ZkIsrWriter(await zk.zkClient(), log.child({ component: 'isr' }))
    : undefined;
  const replicaManager = await ReplicaManager.start({
    config: cfg,
    metadata,
    logManager,
    logger: log.child({ component: 'replica-manager' }),
    logConfigFor: (topic) => admin.configs.logConfigFor(topic),
    controllerManaged: zk !== undefined,
    isrWriter,
    ...(o.interBrokerInterceptor ? { interBrokerInterceptor: o.interBrokerInterceptor } : {}),
    // Cluster mode: followers fetch from the leader's inter-broker listener, as the image knows it.
    ...(image ? { brokerEndpoint: (id: number) => image.endpoint(id, cfg.interBrokerListenerName) } : {}),
  });
  // The partitions' owners (docs/threads.md step 0): one shard, this thread, over the ReplicaManager.
  const shards = inThreadShardsOf(replicaManager, metadata);
  replicaManager.fetchService.readThrough(shards);
  return { logManager, replicaManager, shards, access: partitionAccessOf(replicaManager, metadata) };
}
