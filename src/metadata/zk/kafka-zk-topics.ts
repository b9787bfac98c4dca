/**
 * The cluster state KafkaZkClient (which extends this class) reads and writes under `/brokers`,
 * and the deletion of topics: broker registrations (`/brokers/ids`), topic assignments (`/brokers/topics/<t>`, created with
 * their `/config/topics/<t>`), partition states (`.../partitions/<p>/state`, controller writes
 * fenced, a leader's own ISR change not), and `/admin/delete_topics` with the recursive delete of
 * a deleted topic's znodes.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { isZkError, ZkError, type ZkOp, type ZkSession, type ZkWatcher } from './zk-session.js';
import { BrokerIdZNode, ConfigEntityZNode, PartitionStateZNode, TopicZNode, type BrokerRegistration } from './zk-data.js';
import {
  BROKER_IDS_PATH,
  DELETE_TOPICS_PATH,
  TOPICS_PATH,
  brokerIdPath,
  configEntityPath,
  configEntityTypePath,
  deleteTopicPath,
  partitionPath,
  partitionStatePath,
  topicPartitionsPath,
  topicPath,
} from './zk-paths.js';
import { ControllerMovedError, type ControllerFence, type LeaderIsrState, type TopicAssignment, type VersionedState } from './zk-client-types.js';
import { fenced, fencedDeleteIfExists } from './kafka-zk-ops.js';

export type BrokerWithEpoch = BrokerRegistration & { brokerEpoch: bigint };

export class KafkaZkTopics {
  constructor(readonly session: ZkSession) {}

  // ---- brokers ----------------------------------------------------------------------------

  async getBrokerIds(watch?: ZkWatcher): Promise<number[]> {
    const names = await this.session.childrenIfExists(BROKER_IDS_PATH, watch);
    return names
      .map(Number)
      .filter((n) => Number.isInteger(n) && n >= 0)
      .sort((a, b) => a - b);
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
    return (await this.session.childrenIfExists(TOPICS_PATH, watch)).sort();
  }

  /** `topicId` is '' for a topic written before Kafka 2.8 (no topic_id): the controller assigns one. */
  async getTopicAssignment(topic: string, watch?: ZkWatcher): Promise<TopicAssignment | undefined> {
    const node = await this.session.getIfExists(topicPath(topic), watch);
    if (!node) return undefined;
    const t = TopicZNode.decode(topic, node.data);
    return {
      topic,
      topicId: t.topicId ?? '',
      partitions: t.partitions,
      addingReplicas: t.addingReplicas,
      removingReplicas: t.removingReplicas,
      zkVersion: node.stat.version,
    };
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
    const data = TopicZNode.encode({
      topicId: a.topicId === '' ? undefined : a.topicId,
      partitions: a.partitions,
      addingReplicas: a.addingReplicas,
      removingReplicas: a.removingReplicas,
    });
    const op: ZkOp = { op: 'set', path: topicPath(a.topic), data, version: expectedZkVersion };
    if (!fence) return (await this.session.set(op.path, data, expectedZkVersion)).version;
    await fenced(this.session, [op], fence);
    return expectedZkVersion + 1; // a conditional set succeeded, so the version moved by exactly one
  }

  // ---- partition states ---------------------------------------------------------------------

  async getPartitionStates(topic: string, partitions?: number[]): Promise<Map<number, VersionedState>> {
    const ids = partitions ?? (await this.session.childrenIfExists(topicPartitionsPath(topic))).map(Number).filter(Number.isInteger);
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
        await fenced(this.session, [{ op: 'create', path }], fence);
      } catch (err) {
        if (!isZkError(err, 'NODE_EXISTS')) throw err;
      }
    }
    const entries = [...states];
    const results = await Promise.allSettled(
      entries.map(([p, s]) => fenced(this.session, [{ op: 'create', path: partitionStatePath(topic, p), data: PartitionStateZNode.encode(s) }], fence)),
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
        fenced(
          this.session,
          [{ op: 'set', path: partitionStatePath(topic, u.partition), data: PartitionStateZNode.encode(u.state), version: u.expectedZkVersion }],
          fence,
        ),
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
    const same =
      cur.leader === state.leader &&
      cur.leaderEpoch === state.leaderEpoch &&
      cur.controllerEpoch === state.controllerEpoch &&
      cur.isr.length === state.isr.length &&
      cur.isr.every((id, i) => id === state.isr[i]);
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
    return (await this.session.childrenIfExists(DELETE_TOPICS_PATH, watch)).sort();
  }

  async deleteTopicDeletionMarker(topic: string, fence: ControllerFence): Promise<void> {
    await fencedDeleteIfExists(this.session, deleteTopicPath(topic), fence);
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
        await fenced(
          this.session,
          paths.reverse().map((path) => ({ op: 'delete', path }) as ZkOp),
          fence,
        );
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
}
