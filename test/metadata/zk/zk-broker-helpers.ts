/**
 * A cluster-mode broker's metadata side without ZooKeeper or a controller: the image over a fake
 * KafkaZkApi (an in-memory map of topics and configs), the replica manager over real logs in a
 * temp dir, and the control-request receiver in front of them, as Broker wires them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZkBrokerMetadata, type ControlPartitionState, type LiveBroker } from '../../../src/metadata/zk/zk-broker-metadata.js';
import type { ReplicaAssigner } from '../../../src/metadata/zk/zk-topic-writes.js';
import type { KafkaZkApi, TopicAssignment } from '../../../src/metadata/zk/zk-client-types.js';
import { KafkaError, ErrorCode } from '../../../src/protocol/errors.js';
import { LogManager } from '../../../src/storage/manager/log-manager.js';
import { ReplicaManager } from '../../../src/replication/replica-manager.js';
import { brokerLogDefaults } from '../../../src/replication/log-config.js';
import { buildBrokerConfig } from '../../../src/server/config/index.js';
import { silentLogger } from '../../../src/server/logger.js';
import { ControlRequests } from '../../../src/server/cluster/control-requests.js';

export interface FakeZk {
  api: KafkaZkApi;
  topics: Map<string, TopicAssignment>;
  configs: Map<string, Record<string, string>>;
  deletions: string[];
}

export function fakeZk(): FakeZk {
  const topics = new Map<string, TopicAssignment>();
  const configs = new Map<string, Record<string, string>>();
  const deletions: string[] = [];
  const impl: Partial<KafkaZkApi> = {
    getEntityConfigs: async (_type, name) => ({ ...(configs.get(name) ?? {}) }),
    setEntityConfigs: async (_type, name, c) => void configs.set(name, { ...c }),
    getTopicAssignment: async (t) => topics.get(t),
    createTopic: async (t, topicId, assignment, c) => {
      if (topics.has(t)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${t}' already exists.`);
      configs.set(t, { ...c });
      topics.set(t, { topic: t, topicId, partitions: new Map(assignment), addingReplicas: new Map(), removingReplicas: new Map(), zkVersion: 0 });
    },
    setTopicAssignment: async (a, expected) => {
      const cur = topics.get(a.topic);
      if (!cur || cur.zkVersion !== expected) throw Object.assign(new Error('bad version'), { code: 'BAD_VERSION' });
      topics.set(a.topic, { ...a, zkVersion: expected + 1 });
      return expected + 1;
    },
    markTopicForDeletion: async (t) => {
      if (!topics.has(t)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      deletions.push(t);
    },
  };
  const api = new Proxy(impl, {
    get(target, prop: string) {
      const f = (target as Record<string, unknown>)[prop];
      if (f === undefined) return () => Promise.reject(new Error(`fake KafkaZkApi: ${prop} not implemented`));
      return f;
    },
  }) as KafkaZkApi;
  return { api, topics, configs, deletions };
}

/** Round robin from broker 0 of the list, followers shifted by one: enough for these tests. */
export const simpleAssigner: ReplicaAssigner = {
  assignReplicas(brokers, n, rf) {
    const out = new Map<number, number[]>();
    for (let p = 0; p < n; p++)
      out.set(
        p,
        Array.from({ length: rf }, (_, i) => brokers[(p + i) % brokers.length]!.id),
      );
    return out;
  },
  assignAddedPartitions(brokers, existing, total) {
    const rf = existing.get(0)?.length ?? 1;
    const out = new Map<number, number[]>();
    for (let p = existing.size; p < total; p++)
      out.set(
        p,
        Array.from({ length: rf }, (_, i) => brokers[(p + i) % brokers.length]!.id),
      );
    return out;
  },
};

export function broker(id: number, port = 9092 + id, rack: string | null = null): LiveBroker {
  return {
    id,
    rack,
    endpoints: new Map([
      ['PLAINTEXT', { host: `host${id}`, port }],
      ['INTERNAL', { host: `int${id}`, port: port + 1000 }],
    ]),
  };
}

export function pstate(topic: string, partition: number, leader: number, leaderEpoch: number, replicas: number[], isr = replicas): ControlPartitionState {
  return { topic, partition, controllerEpoch: 1, leader, leaderEpoch, isr, replicas, offlineReplicas: [], zkVersion: 0 };
}

export interface Node {
  brokerId: number;
  zk: FakeZk;
  image: ZkBrokerMetadata;
  logManager: LogManager;
  replicaManager: ReplicaManager;
  control: ControlRequests;
  dir: string;
  close(): Promise<void>;
}

/** One broker's metadata side (no network). */
export async function startNode(brokerId: number, opts: { writeTimeoutMs?: number; zk?: FakeZk; brokerEpoch?: bigint } = {}): Promise<Node> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-zk-image-'));
  const config = buildBrokerConfig(
    new Map([
      ['broker.id', String(brokerId)],
      ['log.dirs', dir],
      ['zookeeper.connect', '127.0.0.1:1'],
    ]),
  );
  const zk = opts.zk ?? fakeZk();
  const logger = silentLogger();
  const image = new ZkBrokerMetadata({
    brokerId,
    clusterId: 'test-cluster',
    zk: zk.api,
    assigner: simpleAssigner,
    logger,
    writeTimeoutMs: opts.writeTimeoutMs ?? 2000,
  });
  const logManager = await LogManager.open({ logDirs: [dir], defaults: brokerLogDefaults(config), cleanerEnabled: false });
  const replicaManager = await ReplicaManager.start({ config, metadata: image, logManager, logger, controllerManaged: true });
  const control = new ControlRequests({ brokerId, image, roles: replicaManager, brokerEpoch: () => opts.brokerEpoch ?? -1n, logger });
  return {
    brokerId,
    zk,
    image,
    logManager,
    replicaManager,
    control,
    dir,
    async close() {
      await image.close();
      await replicaManager.shutdown();
      await logManager.shutdown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export const header = (controllerEpoch: number, controllerId = 0, brokerEpoch = -1n) => ({ controllerId, controllerEpoch, brokerEpoch });
