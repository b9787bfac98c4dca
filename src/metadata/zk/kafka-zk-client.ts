/**
 * `KafkaZkApi` over a `ZkSession`: Kafka's KafkaZkClient in TypeScript. Reads and writes the
 * znodes of `zk-data.ts`; controller writes are fenced (each is a multi whose first op checks
 * `/controller_epoch`'s znode version, so a deposed controller's write fails as a whole and
 * surfaces as ControllerMovedError); ZooKeeper's errors become Kafka's where the interface says so.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { isZkError, ZkError, type ZkOp, type ZkSession, type ZkWatcher } from './zk-session.js';
import {
  BROKER_IDS_PATH,
  BrokerIdZNode,
  CONFIG_CHANGES_PATH,
  CONFIG_CHANGE_PREFIX,
  CONTROLLER_EPOCH_PATH,
  ConfigChangeNotificationZNode,
  ConfigEntityZNode,
  DELETE_TOPICS_PATH,
  FEATURE_PATH,
  FeatureZNode,
  ISR_CHANGE_NOTIFICATION_PATH,
  ISR_CHANGE_PREFIX,
  IsrChangeNotificationZNode,
  PREFERRED_REPLICA_ELECTION_PATH,
  PRODUCER_ID_BLOCK_PATH,
  PartitionStateZNode,
  PreferredReplicaElectionZNode,
  ProducerIdBlockZNode,
  REASSIGN_PARTITIONS_PATH,
  ReassignPartitionsZNode,
  TOPICS_PATH,
  TopicZNode,
  brokerIdPath,
  configEntityPath,
  configEntityTypePath,
  deleteTopicPath,
  partitionPath,
  partitionStatePath,
  sequenceNumber,
  topicPartitionsPath,
  topicPath,
  type BrokerRegistration,
} from './zk-data.js';
import {
  ControllerMovedError,
  type ConfigEntityType,
  type ControllerFence,
  type KafkaZkApi,
  type LeaderIsrState,
  type PartitionReassignment,
  type TopicAssignment,
  type TopicPartitionRef,
  type VersionedState,
} from './zk-client-types.js';

type BrokerWithEpoch = BrokerRegistration & { brokerEpoch: bigint };

/** Kafka's highest producer id; a block must end at or below it. */
const MAX_PRODUCER_ID = 0x7fffffffffffffffn;

export class KafkaZkClient implements KafkaZkApi {
  constructor(readonly session: ZkSession) {}

  // ---- helpers ----------------------------------------------------------------------------

  /** Children of `path`, [] when it does not exist (a cluster not yet initialised). */
  private async childrenOrEmpty(path: string, watch?: ZkWatcher): Promise<string[]> {
    try {
      return await this.session.children(path, watch);
    } catch (err) {
      if (isZkError(err, 'NO_NODE')) return [];
      throw err;
    }
  }

  /**
   * Runs `ops` atomically behind the controller fence. A failed check on `/controller_epoch`
   * (another controller bumped it, or it is gone) is ControllerMovedError; any other failure is
   * the failing op's ZkError.
   */
  private async fenced(ops: ZkOp[], fence: ControllerFence): Promise<void> {
    try {
      await this.session.multi([{ op: 'check', path: CONTROLLER_EPOCH_PATH, version: fence.epochZkVersion }, ...ops]);
    } catch (err) {
      if (err instanceof ZkError && err.path === CONTROLLER_EPOCH_PATH && (err.code === 'BAD_VERSION' || err.code === 'NO_NODE')) {
        throw new ControllerMovedError(
          `controller epoch ${fence.controllerEpoch} is no longer current (${CONTROLLER_EPOCH_PATH} znode version is not ${fence.epochZkVersion})`,
        );
      }
      throw err;
    }
  }

  /** A fenced delete that is fine with the node being gone already. */
  private async fencedDeleteIfExists(path: string, fence: ControllerFence): Promise<void> {
    try {
      await this.fenced([{ op: 'delete', path }], fence);
    } catch (err) {
      if (!isZkError(err, 'NO_NODE')) throw err;
    }
  }

  /** Names of sequential children with `prefix`, in sequence order. */
  private async sequentialChildren(path: string, prefix: string, watch?: ZkWatcher): Promise<string[]> {
    const names = await this.childrenOrEmpty(path, watch);
    return names.filter((n) => n.startsWith(prefix)).sort((a, b) => sequenceNumber(a) - sequenceNumber(b));
  }

  // ---- brokers ----------------------------------------------------------------------------

  async getBrokerIds(watch?: ZkWatcher): Promise<number[]> {
    const names = await this.childrenOrEmpty(BROKER_IDS_PATH, watch);
    return names.map(Number).filter((n) => Number.isInteger(n) && n >= 0).sort((a, b) => a - b);
  }

  async getBroker(id: number): Promise<BrokerWithEpoch | undefined> {
    const node = await this.session.getIfExists(brokerIdPath(id));
    if (!node) return undefined;
    return { ...BrokerIdZNode.decode(id, node.data), brokerEpoch: node.stat.czxid };
  }

  async getAllBrokers(watch?: ZkWatcher): Promise<BrokerWithEpoch[]> {
    const ids = await this.getBrokerIds(watch);
    const all = await Promise.all(ids.map((id) => this.getBroker(id)));
    return all.filter((b): b is BrokerWithEpoch => b !== undefined); // a broker may leave between the two reads
  }

  // ---- topics -----------------------------------------------------------------------------

  async getAllTopics(watch?: ZkWatcher): Promise<string[]> {
    return (await this.childrenOrEmpty(TOPICS_PATH, watch)).sort();
  }

  /** `topicId` is '' for a topic written before Kafka 2.8 (no topic_id): the controller assigns one. */
  async getTopicAssignment(topic: string, watch?: ZkWatcher): Promise<TopicAssignment | undefined> {
    const node = await this.session.getIfExists(topicPath(topic), watch);
    if (!node) return undefined;
    const t = TopicZNode.decode(topic, node.data);
    return { topic, topicId: t.topicId ?? '', partitions: t.partitions, addingReplicas: t.addingReplicas, removingReplicas: t.removingReplicas, zkVersion: node.stat.version };
  }

  async createTopic(topic: string, topicId: string, assignment: Map<number, number[]>, configs: Record<string, string>): Promise<void> {
    await this.session.ensurePath(TOPICS_PATH);
    await this.session.ensurePath(configEntityTypePath('topics'));
    if (await this.session.exists(deleteTopicPath(topic))) {
      throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${topic}' is marked for deletion.`);
    }
    const data = TopicZNode.encode({ topicId, partitions: assignment, addingReplicas: new Map(), removingReplicas: new Map() });
    const configPath = configEntityPath('topics', topic);
    // A config znode may be left from an earlier create that failed half-way (Kafka writes the
    // two separately); then it is overwritten. Retry once should it appear or vanish meanwhile.
    for (let attempt = 0; ; attempt++) {
      const configOp: ZkOp = (await this.session.exists(configPath))
        ? { op: 'set', path: configPath, data: ConfigEntityZNode.encode(configs) }
        : { op: 'create', path: configPath, data: ConfigEntityZNode.encode(configs) };
      try {
        await this.session.multi([configOp, { op: 'create', path: topicPath(topic), data }]);
        return;
      } catch (err) {
        if (err instanceof ZkError && err.path === topicPath(topic) && err.code === 'NODE_EXISTS') {
          throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${topic}' already exists.`);
        }
        if (attempt < 3 && err instanceof ZkError && err.path === configPath && (err.code === 'NODE_EXISTS' || err.code === 'NO_NODE')) continue;
        throw err;
      }
    }
  }

  async setTopicAssignment(a: Omit<TopicAssignment, 'zkVersion'>, expectedZkVersion: number, fence?: ControllerFence): Promise<number> {
    const data = TopicZNode.encode({ topicId: a.topicId === '' ? undefined : a.topicId, partitions: a.partitions, addingReplicas: a.addingReplicas, removingReplicas: a.removingReplicas });
    const op: ZkOp = { op: 'set', path: topicPath(a.topic), data, version: expectedZkVersion };
    if (!fence) return (await this.session.set(op.path, data, expectedZkVersion)).version;
    await this.fenced([op], fence);
    return expectedZkVersion + 1; // a conditional set succeeded, so the version moved by exactly one
  }

  // ---- partition states ---------------------------------------------------------------------

  async getPartitionStates(topic: string, partitions?: number[]): Promise<Map<number, VersionedState>> {
    const ids = partitions ?? (await this.childrenOrEmpty(topicPartitionsPath(topic))).map(Number).filter(Number.isInteger);
    const nodes = await Promise.all(ids.map((p) => this.session.getIfExists(partitionStatePath(topic, p))));
    const out = new Map<number, VersionedState>();
    [...ids].forEach((p, i) => {
      const node = nodes[i];
      if (!node) return;
      const { leaderRecoveryState: _ignored, ...state } = PartitionStateZNode.decode(node.data, partitionStatePath(topic, p));
      out.set(p, { state, zkVersion: node.stat.version });
    });
    return new Map([...out].sort((x, y) => x[0] - y[0]));
  }

  async watchPartitionState(topic: string, partition: number, watch: ZkWatcher): Promise<VersionedState | undefined> {
    const path = partitionStatePath(topic, partition);
    if (!(await this.session.exists(path, watch))) return undefined;
    const node = await this.session.getIfExists(path);
    if (!node) return undefined;
    const { leaderRecoveryState: _ignored, ...state } = PartitionStateZNode.decode(node.data, path);
    return { state, zkVersion: node.stat.version };
  }

  async createPartitionStates(topic: string, states: Map<number, LeaderIsrState>, fence: ControllerFence): Promise<Map<number, 'ok' | 'exists'>> {
    // Parents first, each fenced as Kafka does; an existing parent is fine.
    const parents = [topicPartitionsPath(topic), ...[...states.keys()].map((p) => partitionPath(topic, p))];
    for (const path of parents) {
      try {
        await this.fenced([{ op: 'create', path }], fence);
      } catch (err) {
        if (!isZkError(err, 'NODE_EXISTS')) throw err;
      }
    }
    const entries = [...states];
    const results = await Promise.allSettled(
      entries.map(([p, s]) => this.fenced([{ op: 'create', path: partitionStatePath(topic, p), data: PartitionStateZNode.encode(s) }], fence)),
    );
    const out = new Map<number, 'ok' | 'exists'>();
    results.forEach((r, i) => {
      const p = entries[i]![0];
      if (r.status === 'fulfilled') out.set(p, 'ok');
      else if (isZkError(r.reason, 'NODE_EXISTS')) out.set(p, 'exists');
      else throw r.reason; // ControllerMovedError first among equals: every write failed the same fence
    });
    return out;
  }

  /** 'BAD_VERSION' also when the state znode is gone (the topic was deleted): either way, re-read. */
  async updatePartitionStates(
    topic: string,
    updates: { partition: number; state: LeaderIsrState; expectedZkVersion: number }[],
    fence: ControllerFence,
  ): Promise<Map<number, number | 'BAD_VERSION'>> {
    // One multi per partition, sent together (the client pipelines them), as Kafka does.
    const results = await Promise.allSettled(
      updates.map((u) =>
        this.fenced([{ op: 'set', path: partitionStatePath(topic, u.partition), data: PartitionStateZNode.encode(u.state), version: u.expectedZkVersion }], fence),
      ),
    );
    const moved = results.find((r) => r.status === 'rejected' && r.reason instanceof ControllerMovedError);
    if (moved) throw (moved as PromiseRejectedResult).reason;
    const out = new Map<number, number | 'BAD_VERSION'>();
    results.forEach((r, i) => {
      const u = updates[i]!;
      if (r.status === 'fulfilled') out.set(u.partition, u.expectedZkVersion + 1);
      else if (isZkError(r.reason, 'BAD_VERSION') || isZkError(r.reason, 'NO_NODE')) out.set(u.partition, 'BAD_VERSION');
      else throw r.reason;
    });
    return out;
  }

  async updateLeaderAndIsr(topic: string, partition: number, state: LeaderIsrState, expectedZkVersion: number): Promise<number | 'BAD_VERSION'> {
    const path = partitionStatePath(topic, partition);
    try {
      return (await this.session.set(path, PartitionStateZNode.encode(state), expectedZkVersion)).version;
    } catch (err) {
      if (!isZkError(err, 'BAD_VERSION') && !isZkError(err, 'NO_NODE')) throw err;
    }
    // Kafka's checkLeaderAndIsrZkData: a retried set whose first attempt landed finds its own data.
    const node = await this.session.getIfExists(path);
    if (!node) return 'BAD_VERSION';
    const cur = PartitionStateZNode.decode(node.data);
    const same = cur.leader === state.leader && cur.leaderEpoch === state.leaderEpoch && cur.controllerEpoch === state.controllerEpoch
      && cur.isr.length === state.isr.length && cur.isr.every((id, i) => id === state.isr[i]);
    return same ? node.stat.version : 'BAD_VERSION';
  }

  // ---- deletion ------------------------------------------------------------------------------

  /** Marking twice is fine (Kafka's admin path swallows TopicAlreadyMarkedForDeletion). */
  async markTopicForDeletion(topic: string): Promise<void> {
    if (!(await this.session.exists(topicPath(topic)))) {
      throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${topic}' does not exist`);
    }
    await this.session.ensurePath(DELETE_TOPICS_PATH);
    try {
      await this.session.create(deleteTopicPath(topic));
    } catch (err) {
      if (!isZkError(err, 'NODE_EXISTS')) throw err;
    }
  }

  async getTopicDeletions(watch?: ZkWatcher): Promise<string[]> {
    return (await this.childrenOrEmpty(DELETE_TOPICS_PATH, watch)).sort();
  }

  async deleteTopicDeletionMarker(topic: string, fence: ControllerFence): Promise<void> {
    await this.fencedDeleteIfExists(deleteTopicPath(topic), fence);
  }

  async deleteTopicZNodes(topic: string, fence: ControllerFence): Promise<void> {
    await this.deleteTreeFenced(topicPath(topic), fence);
    await this.deleteTreeFenced(configEntityPath('topics', topic), fence);
  }

  /** Deletes a subtree in one fenced multi (deepest first); re-lists if it changed meanwhile. */
  private async deleteTreeFenced(root: string, fence: ControllerFence): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const paths = await this.listTree(root);
      if (paths.length === 0) return;
      try {
        await this.fenced(paths.reverse().map((path) => ({ op: 'delete', path }) as ZkOp), fence);
        return;
      } catch (err) {
        if (attempt < 5 && (isZkError(err, 'NO_NODE') || isZkError(err, 'NOT_EMPTY'))) continue;
        throw err;
      }
    }
  }

  /** `root` and its descendants, parents before children; [] when `root` is absent. */
  private async listTree(root: string): Promise<string[]> {
    let children: string[];
    try {
      children = await this.session.children(root);
    } catch (err) {
      if (isZkError(err, 'NO_NODE')) return [];
      throw err;
    }
    const out = [root];
    for (const c of children) out.push(...(await this.listTree(`${root}/${c}`)));
    return out;
  }

  // ---- configs -------------------------------------------------------------------------------

  async getEntityConfigs(type: ConfigEntityType, name: string): Promise<Record<string, string>> {
    const node = await this.session.getIfExists(configEntityPath(type, name));
    return node ? ConfigEntityZNode.decode(node.data, configEntityPath(type, name)) : {};
  }

  async setEntityConfigs(type: ConfigEntityType, name: string, configs: Record<string, string>): Promise<void> {
    const path = configEntityPath(type, name);
    const data = ConfigEntityZNode.encode(configs);
    // Kafka's setOrCreateEntityConfigs: set; if absent, create (parents too); if created
    // meanwhile, set again. Last writer wins, as in Kafka.
    try {
      await this.session.set(path, data);
    } catch (err) {
      if (!isZkError(err, 'NO_NODE')) throw err;
      // Parents too: a user's client-id entity lives under the user's own znode.
      await this.session.ensurePath(path.slice(0, path.lastIndexOf('/')));
      try {
        await this.session.create(path, data);
      } catch (err2) {
        if (!isZkError(err2, 'NODE_EXISTS')) throw err2;
        await this.session.set(path, data);
      }
    }
    await this.session.ensurePath(CONFIG_CHANGES_PATH);
    await this.session.create(`${CONFIG_CHANGES_PATH}/${CONFIG_CHANGE_PREFIX}`, ConfigChangeNotificationZNode.encode(type, name), 'persistent_sequential');
  }

  async getConfigChildren(subPath: string): Promise<string[]> {
    try {
      return await this.session.children(`/config/${subPath}`);
    } catch (err) {
      if (isZkError(err, 'NO_NODE')) return [];
      throw err;
    }
  }

  async getConfigChangeNames(watch?: ZkWatcher): Promise<string[]> {
    return this.sequentialChildren(CONFIG_CHANGES_PATH, CONFIG_CHANGE_PREFIX, watch);
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

  /** Reads an intent znode; the watch fires on its creation too (an exists watch). */
  private async getIntent(path: string, watch?: ZkWatcher): Promise<Buffer | undefined> {
    if (watch) {
      const stat = await this.session.exists(path, watch);
      if (!stat) return undefined;
    }
    return (await this.session.getIfExists(path))?.data;
  }

  /** [] for a znode Kafka could not parse either (its controller ignores it and deletes it). */
  async getPartitionReassignment(watch?: ZkWatcher): Promise<PartitionReassignment[] | undefined> {
    const data = await this.getIntent(REASSIGN_PARTITIONS_PATH, watch);
    if (data === undefined) return undefined;
    try {
      return ReassignPartitionsZNode.decode(data);
    } catch {
      return [];
    }
  }

  async setPartitionReassignment(r: PartitionReassignment[], fence: ControllerFence): Promise<void> {
    try {
      await this.fenced([{ op: 'set', path: REASSIGN_PARTITIONS_PATH, data: ReassignPartitionsZNode.encode(r) }], fence);
    } catch (err) {
      if (!isZkError(err, 'NO_NODE')) throw err;
    }
  }

  async createPartitionReassignment(r: PartitionReassignment[]): Promise<void> {
    await this.createIntent(REASSIGN_PARTITIONS_PATH, ReassignPartitionsZNode.encode(r), () => new KafkaError(60 /* REASSIGNMENT_IN_PROGRESS */, 'A partition reassignment is in progress.'));
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
    await this.fencedDeleteIfExists(REASSIGN_PARTITIONS_PATH, fence);
  }

  async getPreferredReplicaElection(watch?: ZkWatcher): Promise<TopicPartitionRef[] | undefined> {
    const data = await this.getIntent(PREFERRED_REPLICA_ELECTION_PATH, watch);
    if (data === undefined) return undefined;
    try {
      return PreferredReplicaElectionZNode.decode(data);
    } catch {
      return [];
    }
  }

  /** ZkError NODE_EXISTS while an election is pending (Kafka's tool: "Preferred replica leader election currently in progress"). */
  async createPreferredReplicaElection(ps: TopicPartitionRef[]): Promise<void> {
    await this.createIntent(PREFERRED_REPLICA_ELECTION_PATH, PreferredReplicaElectionZNode.encode(ps), () =>
      new ZkError('NODE_EXISTS', 'Preferred replica leader election currently in progress', PREFERRED_REPLICA_ELECTION_PATH),
    );
  }

  async deletePreferredReplicaElection(fence: ControllerFence): Promise<void> {
    await this.fencedDeleteIfExists(PREFERRED_REPLICA_ELECTION_PATH, fence);
  }

  async getIsrChangeNotifications(watch?: ZkWatcher): Promise<string[]> {
    return this.sequentialChildren(ISR_CHANGE_NOTIFICATION_PATH, ISR_CHANGE_PREFIX, watch);
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
    await Promise.all(names.map((n) => this.fencedDeleteIfExists(`${ISR_CHANGE_NOTIFICATION_PATH}/${n}`, fence)));
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
        await this.session.multi([{ op: 'set', path: PRODUCER_ID_BLOCK_PATH, data: ProducerIdBlockZNode.encode({ brokerId, start, end }), version: node.stat.version }]);
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
