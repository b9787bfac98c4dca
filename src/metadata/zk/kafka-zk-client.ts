/**
 * `KafkaZkApi` over a `ZkSession`: Kafka's KafkaZkClient in TypeScript. Reads and writes the
 * znodes of `zk-data.ts`; controller writes are fenced (each is a multi whose first op checks
 * `/controller_epoch`'s znode version, so a deposed controller's write fails as a whole and
 * surfaces as ControllerMovedError, kafka-zk-ops.ts); ZooKeeper's errors become Kafka's where the
 * interface says so.
 *
 * The state under `/brokers` (brokers, topic assignments, partition states) and topic deletion
 * are KafkaZkTopics' (kafka-zk-topics.ts), which this class extends; here are the znodes that
 * pass requests and notifications between brokers, tools and the controller, and the cluster-wide
 * counters: entity configs (`/config/<type>/<name>`) and their `/config/changes` notifications,
 * the admin intents (`/admin/reassign_partitions`, `/admin/preferred_replica_election`),
 * `/isr_change_notification`, the producer id block (`/latest_producer_id_block`) and `/feature`.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { isZkError, ZkError, type ZkWatcher } from './zk-session.js';
import {
  ConfigChangeNotificationZNode,
  ConfigEntityZNode,
  FeatureZNode,
  IsrChangeNotificationZNode,
  PreferredReplicaElectionZNode,
  ProducerIdBlockZNode,
  ReassignPartitionsZNode,
} from './zk-data.js';
import {
  CONFIG_CHANGES_PATH,
  CONFIG_CHANGE_PREFIX,
  FEATURE_PATH,
  ISR_CHANGE_NOTIFICATION_PATH,
  ISR_CHANGE_PREFIX,
  PREFERRED_REPLICA_ELECTION_PATH,
  PRODUCER_ID_BLOCK_PATH,
  REASSIGN_PARTITIONS_PATH,
  configEntityPath,
} from './zk-paths.js';
import type { ConfigEntityType, ControllerFence, KafkaZkApi, PartitionReassignment, TopicPartitionRef } from './zk-client-types.js';
import { KafkaZkTopics } from './kafka-zk-topics.js';
import { fenced, fencedDeleteIfExists, sequentialChildren } from './kafka-zk-ops.js';

/** Kafka's highest producer id; a block must end at or below it. */
const MAX_PRODUCER_ID = 0x7fffffffffffffffn;

export class KafkaZkClient extends KafkaZkTopics implements KafkaZkApi {
  // ---- configs -------------------------------------------------------------------------------

  async getEntityConfigs(type: ConfigEntityType, name: string): Promise<Record<string, string>> {
    const node = await this.session.getIfExists(configEntityPath(type, name));
    return node ? ConfigEntityZNode.decode(node.data, configEntityPath(type, name)) : {};
  }

  async setEntityConfigs(type: ConfigEntityType, name: string, configs: Record<string, string>): Promise<void> {
    // Kafka's setOrCreateEntityConfigs (parents too: a user's client-id entity lives under the user's own znode).
    await this.session.setOrCreate(configEntityPath(type, name), ConfigEntityZNode.encode(configs));
    await this.session.ensurePath(CONFIG_CHANGES_PATH);
    await this.session.create(`${CONFIG_CHANGES_PATH}/${CONFIG_CHANGE_PREFIX}`, ConfigChangeNotificationZNode.encode(type, name), 'persistent_sequential');
  }

  async getConfigChildren(subPath: string): Promise<string[]> {
    return this.session.childrenIfExists(`/config/${subPath}`);
  }

  async getConfigChangeNames(watch?: ZkWatcher): Promise<string[]> {
    return sequentialChildren(this.session, CONFIG_CHANGES_PATH, CONFIG_CHANGE_PREFIX, watch);
  }

  /** undefined when the notification is gone (purged); throws on one Kafka could not read either. */
  async getConfigChange(name: string): Promise<{ entityType: ConfigEntityType; entityName: string } | undefined> {
    const node = await this.session.getIfExists(`${CONFIG_CHANGES_PATH}/${name}`);
    return node ? ConfigChangeNotificationZNode.decode(node.data) : undefined;
  }

  async purgeConfigChanges(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let purged = 0;
    for (const name of await this.getConfigChangeNames()) {
      const path = `${CONFIG_CHANGES_PATH}/${name}`;
      const stat = await this.session.exists(path);
      if (!stat) continue; // another broker purged it
      // Sequence order is creation order: the first young one ends the purge.
      if (stat.ctimeMs >= cutoff) break;
      try {
        await this.session.delete(path, stat.version);
        purged++;
      } catch (err) {
        if (!isZkError(err, 'NO_NODE')) throw err;
      }
    }
    return purged;
  }

  // ---- admin intents ---------------------------------------------------------------------------

  /**
   * Reads an intent znode (undefined when absent); the watch fires on its creation too (an exists
   * watch). One Kafka could not parse either reads as [] (its controller ignores it and deletes it).
   */
  private async getIntent<T>(path: string, decode: (data: Buffer) => T[], watch?: ZkWatcher): Promise<T[] | undefined> {
    if (watch) {
      const stat = await this.session.exists(path, watch);
      if (!stat) return undefined;
    }
    const data = (await this.session.getIfExists(path))?.data;
    if (data === undefined) return undefined;
    try {
      return decode(data);
    } catch {
      return [];
    }
  }

  async getPartitionReassignment(watch?: ZkWatcher): Promise<PartitionReassignment[] | undefined> {
    return this.getIntent(REASSIGN_PARTITIONS_PATH, (d) => ReassignPartitionsZNode.decode(d), watch);
  }

  async setPartitionReassignment(r: PartitionReassignment[], fence: ControllerFence): Promise<void> {
    try {
      await fenced(this.session, [{ op: 'set', path: REASSIGN_PARTITIONS_PATH, data: ReassignPartitionsZNode.encode(r) }], fence);
    } catch (err) {
      if (!isZkError(err, 'NO_NODE')) throw err;
    }
  }

  async createPartitionReassignment(r: PartitionReassignment[]): Promise<void> {
    await this.createIntent(
      REASSIGN_PARTITIONS_PATH,
      ReassignPartitionsZNode.encode(r),
      () => new KafkaError(60 /* REASSIGNMENT_IN_PROGRESS */, 'A partition reassignment is in progress.'),
    );
  }

  private async createIntent(path: string, data: Buffer, onExists: () => Error): Promise<void> {
    await this.session.ensurePath(path.slice(0, path.lastIndexOf('/')));
    try {
      await this.session.create(path, data);
    } catch (err) {
      if (isZkError(err, 'NODE_EXISTS')) throw onExists();
      throw err;
    }
  }

  async deletePartitionReassignment(fence: ControllerFence): Promise<void> {
    await fencedDeleteIfExists(this.session, REASSIGN_PARTITIONS_PATH, fence);
  }

  async getPreferredReplicaElection(watch?: ZkWatcher): Promise<TopicPartitionRef[] | undefined> {
    return this.getIntent(PREFERRED_REPLICA_ELECTION_PATH, (d) => PreferredReplicaElectionZNode.decode(d), watch);
  }

  /** ZkError NODE_EXISTS while an election is pending (Kafka's tool: "Preferred replica leader election currently in progress"). */
  async createPreferredReplicaElection(ps: TopicPartitionRef[]): Promise<void> {
    await this.createIntent(
      PREFERRED_REPLICA_ELECTION_PATH,
      PreferredReplicaElectionZNode.encode(ps),
      () => new ZkError('NODE_EXISTS', 'Preferred replica leader election currently in progress', PREFERRED_REPLICA_ELECTION_PATH),
    );
  }

  async deletePreferredReplicaElection(fence: ControllerFence): Promise<void> {
    await fencedDeleteIfExists(this.session, PREFERRED_REPLICA_ELECTION_PATH, fence);
  }

  async getIsrChangeNotifications(watch?: ZkWatcher): Promise<string[]> {
    return sequentialChildren(this.session, ISR_CHANGE_NOTIFICATION_PATH, ISR_CHANGE_PREFIX, watch);
  }

  async getIsrChangeNotification(name: string): Promise<TopicPartitionRef[]> {
    const node = await this.session.getIfExists(`${ISR_CHANGE_NOTIFICATION_PATH}/${name}`);
    return node ? IsrChangeNotificationZNode.decode(node.data) : [];
  }

  async createIsrChangeNotification(ps: TopicPartitionRef[]): Promise<void> {
    await this.session.ensurePath(ISR_CHANGE_NOTIFICATION_PATH);
    await this.session.create(`${ISR_CHANGE_NOTIFICATION_PATH}/${ISR_CHANGE_PREFIX}`, IsrChangeNotificationZNode.encode(ps), 'persistent_sequential');
  }

  async deleteIsrChangeNotifications(names: string[], fence: ControllerFence): Promise<void> {
    await Promise.all(names.map((n) => fencedDeleteIfExists(this.session, `${ISR_CHANGE_NOTIFICATION_PATH}/${n}`, fence)));
  }

  // ---- producer ids, features ----------------------------------------------------------------

  async allocateProducerIdBlock(brokerId: number, blockSize: number): Promise<{ start: bigint; end: bigint }> {
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new RangeError(`producer id block size must be a positive integer, got ${blockSize}`);
    await this.session.ensurePath(PRODUCER_ID_BLOCK_PATH);
    for (;;) {
      const node = await this.session.get(PRODUCER_ID_BLOCK_PATH);
      const prev = ProducerIdBlockZNode.decode(node.data);
      const start = prev ? prev.end + 1n : 0n;
      const end = start + BigInt(blockSize) - 1n;
      if (end > MAX_PRODUCER_ID) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'Have exhausted all producerIds.');
      try {
        await this.session.multi([
          { op: 'set', path: PRODUCER_ID_BLOCK_PATH, data: ProducerIdBlockZNode.encode({ brokerId, start, end }), version: node.stat.version },
        ]);
        return { start, end };
      } catch (err) {
        if (!isZkError(err, 'BAD_VERSION')) throw err; // another broker took the block: read again
      }
    }
  }

  /** Kafka 2.8's controller: create `/feature` enabled with no finalized features, or enable a disabled one. */
  async ensureFeatureZNode(): Promise<void> {
    const node = await this.session.getIfExists(FEATURE_PATH);
    if (!node) {
      try {
        await this.session.create(FEATURE_PATH, FeatureZNode.encode({ version: 1, status: 1, features: {} }));
      } catch (err) {
        if (!isZkError(err, 'NODE_EXISTS')) throw err;
      }
      return;
    }
    const f = FeatureZNode.decode(node.data);
    if (f.status === 0) await this.session.set(FEATURE_PATH, FeatureZNode.encode({ version: f.version, status: 1, features: {} }), node.stat.version);
  }
}
