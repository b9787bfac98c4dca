/**
 * Fixtures of the shard worker tests: a broker config over a temp dir, topics as the metadata
 * store describes them, record batches, and the in-thread path (today's ReplicaManager over the
 * same logs code, one shard owning everything) to compare the workers' answers with.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { encodeBatch, type KafkaRecord } from '../../../../src/protocol/records/index.js';
import type { TopicInfo } from '../../../../src/metadata/cluster-model.js';
import { buildBrokerConfig } from '../../../../src/server/config/index.js';
import type { ReplicationConfig } from '../../../../src/replication/replication-config.js';
import { LogManager } from '../../../../src/storage/manager/log-manager.js';
import { ReplicaManager } from '../../../../src/replication/replica-manager.js';
import { brokerLogDefaults } from '../../../../src/replication/log-config.js';
import { MetadataMirror } from '../../../../src/replication/shards/worker/metadata-mirror.js';
import type { FetchParams, FetchTarget } from '../../../../src/replication/fetch/fetch-reader.js';

export async function tempConfig(prefix: string): Promise<ReplicationConfig> {
  const dir = await mkdtemp(join(tmpdir(), `fjord-${prefix}-`));
  return buildBrokerConfig(
    new Map([
      ['broker.id', '1'],
      ['log.dirs', dir],
    ]),
  );
}

export function topic(name: string, partitions: number, id: string): TopicInfo {
  return {
    name,
    topicId: id,
    internal: false,
    configs: {},
    partitions: Array.from({ length: partitions }, (_, partition) => ({ partition, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1], offlineReplicas: [] })),
  };
}

export const TOPICS = [topic('alpha', 2, 'AAAAAAAAAAAAAAAAAAAAAQ'), topic('beta', 2, 'AAAAAAAAAAAAAAAAAAAAAg')];
export const PARTS = TOPICS.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition })));

export interface BatchOptions {
  count?: number;
  valueBytes?: number;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
}

/** One batch with CreateTime timestamps fixed by `tag`, so two logs given the same batches hold the same bytes. */
export function batch(tag: string, o: BatchOptions = {}): Buffer {
  const records: KafkaRecord[] = Array.from({ length: o.count ?? 3 }, (_, i) => ({
    attributes: 0,
    timestampDelta: i,
    offsetDelta: i,
    key: Buffer.from(`${tag}-${i}`),
    value: Buffer.alloc(o.valueBytes ?? 100, i % 251),
    headers: [],
  }));
  return encodeBatch({
    records,
    baseTimestamp: 1_700_000_000_000n,
    ...(o.producerId !== undefined ? { producerId: o.producerId, producerEpoch: o.producerEpoch ?? 0, baseSequence: o.baseSequence ?? 0 } : {}),
  });
}

export const FETCH_ALL: FetchParams = { maxWaitMs: 0, minBytes: 1, maxBytes: 16 << 20, readCommitted: false, hardMaxBytes: false };

export function fetchFrom(offset = 0): FetchTarget[] {
  return PARTS.map((p) => ({ ...p, fetchOffset: offset, partitionMaxBytes: 4 << 20, currentLeaderEpoch: -1 }));
}

/** Today's path in this thread: one LogManager and ReplicaManager owning every partition. */
export async function inThread(config: ReplicationConfig): Promise<{ rm: ReplicaManager; close(): Promise<void> }> {
  const mirror = new MetadataMirror(config.brokerId, 0, 1);
  mirror.apply(TOPICS);
  const logManager = await LogManager.open({
    logDirs: [...config.logDirs],
    defaults: brokerLogDefaults(config),
    highWatermarkSetByOwner: true,
    cleanerEnabled: false,
  });
  const rm = await ReplicaManager.start({ config, metadata: mirror, logManager, logger: pino({ level: 'silent' }) });
  for (const t of TOPICS) await rm.syncTopic(t.name);
  return {
    rm,
    close: async () => {
      await rm.shutdown();
      await logManager.shutdown();
    },
  };
}
