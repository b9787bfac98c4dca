/**
 * In-memory stand-ins for the controller's collaborators: a KafkaZkApi with ZooKeeper's
 * semantics that matter here (conditional state writes, the controller fence, one-shot watches),
 * a membership that can be made to win or lose, and a request sink that records every request and
 * can answer StopReplica.
 */
import { EventEmitter } from 'node:events';
import pino from 'pino';
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
} from '../../src/metadata/zk/zk-client-types.js';
import type { BrokerRegistration } from '../../src/metadata/zk/zk-data.js';
import type { ZkWatcher } from '../../src/metadata/zk/zk-session.js';
import type { ControllerRequest, ControllerRequestSink } from '../../src/controller/request-batch.js';
import type { ControllerConfig } from '../../src/controller/config.js';
import { KafkaController } from '../../src/controller/kafka-controller.js';

type Broker = BrokerRegistration & { brokerEpoch: bigint };

export class FakeZk implements KafkaZkApi {
  brokers = new Map<number, Broker>();
  topics = new Map<string, TopicAssignment>();
  states = new Map<string, VersionedState>();
  deletions = new Set<string>();
  configs = new Map<string, Record<string, string>>();
  reassignment: PartitionReassignment[] | undefined;
  preferred: TopicPartitionRef[] | undefined;
  isrChanges = new Map<string, TopicPartitionRef[]>();
  featureEnsured = false;
  /** The current `/controller_epoch` and its znode version. */
  epoch: ControllerFence = { controllerEpoch: 1, epochZkVersion: 0 };
  private nextCzxid = 100n;
  private seq = 0;
  private watchers = new Map<string, ZkWatcher[]>();

  // --- test controls ---
  registerBroker(id: number, rack: string | null = null): void {
    this.brokers.set(id, {
      id,
      rack,
      timestampMs: Date.now(),
      endpoints: [{ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + id }],
      brokerEpoch: this.nextCzxid++,
    });
    this.fire('brokers');
  }
  killBroker(id: number): void {
    this.brokers.delete(id);
    this.fire('brokers');
  }
  /** What any broker or the --zookeeper tool writes to create a topic. */
  async createTopic(topic: string, topicId: string, assignment: Map<number, number[]>, _configs: Record<string, string> = {}): Promise<void> {
    this.topics.set(topic, { topic, topicId, partitions: new Map(assignment), addingReplicas: new Map(), removingReplicas: new Map(), zkVersion: 0 });
    this.fire('topics');
  }
  /** A state written by an earlier controller. */
  writeState(topic: string, partition: number, state: LeaderIsrState): void {
    const prev = this.states.get(`${topic}-${partition}`);
    this.states.set(`${topic}-${partition}`, { state, zkVersion: prev ? prev.zkVersion + 1 : 0 });
    this.fire(`state:${topic}-${partition}`);
  }
  /**
   * What a partition leader does when followers catch up (issue 12's ISR expansion): a conditional
   * write of the state znode with the version it knows. Returns false on BAD_VERSION.
   */
  expandIsr(topic: string, partition: number, isr: number[], expectedZkVersion?: number): boolean {
    const cur = this.states.get(`${topic}-${partition}`);
    if (!cur || (expectedZkVersion !== undefined && cur.zkVersion !== expectedZkVersion)) return false;
    this.writeState(topic, partition, { ...cur.state, isr });
    return true;
  }
  state(topic: string, partition: number): LeaderIsrState | undefined {
    return this.states.get(`${topic}-${partition}`)?.state;
  }
  /** Another controller was elected: the old fence no longer matches. */
  bumpEpoch(): void {
    this.epoch = { controllerEpoch: this.epoch.controllerEpoch + 1, epochZkVersion: this.epoch.epochZkVersion + 1 };
  }

  private watch(key: string, w?: ZkWatcher): void {
    if (w) (this.watchers.get(key) ?? this.watchers.set(key, []).get(key)!).push(w);
  }
  private fire(key: string): void {
    const ws = this.watchers.get(key) ?? [];
    this.watchers.delete(key);
    for (const w of ws) w({ type: 'childrenChanged', path: key });
  }
  private checkFence(f: ControllerFence): void {
    if (f.controllerEpoch !== this.epoch.controllerEpoch || f.epochZkVersion !== this.epoch.epochZkVersion)
      throw new ControllerMovedError('controller epoch moved');
  }

  // --- KafkaZkApi ---
  async getBrokerIds(watch?: ZkWatcher): Promise<number[]> {
    this.watch('brokers', watch);
    return [...this.brokers.keys()].sort((a, b) => a - b);
  }
  async getBroker(id: number): Promise<Broker | undefined> {
    return this.brokers.get(id);
  }
  async getAllBrokers(watch?: ZkWatcher): Promise<Broker[]> {
    this.watch('brokers', watch);
    return [...this.brokers.values()].sort((a, b) => a.id - b.id);
  }
  async getAllTopics(watch?: ZkWatcher): Promise<string[]> {
    this.watch('topics', watch);
    return [...this.topics.keys()].sort();
  }
  async getTopicAssignment(topic: string, watch?: ZkWatcher): Promise<TopicAssignment | undefined> {
    this.watch(`topic:${topic}`, watch);
    const t = this.topics.get(topic);
    return t && { ...t, partitions: new Map(t.partitions) };
  }
  async setTopicAssignment(a: Omit<TopicAssignment, 'zkVersion'>, expectedZkVersion: number, fence?: ControllerFence): Promise<number> {
    if (fence) this.checkFence(fence);
    const cur = this.topics.get(a.topic);
    if (!cur || cur.zkVersion !== expectedZkVersion) throw new Error('BAD_VERSION');
    this.topics.set(a.topic, { ...a, partitions: new Map(a.partitions), zkVersion: cur.zkVersion + 1 });
    this.fire(`topic:${a.topic}`);
    return cur.zkVersion + 1;
  }
  async getPartitionStates(topic: string, partitions?: number[]): Promise<Map<number, VersionedState>> {
    const out = new Map<number, VersionedState>();
    for (const [k, v] of this.states) {
      const i = k.lastIndexOf('-');
      const p = Number(k.slice(i + 1));
      if (k.slice(0, i) === topic && (!partitions || partitions.includes(p)))
        out.set(p, { state: { ...v.state, isr: [...v.state.isr] }, zkVersion: v.zkVersion });
    }
    return out;
  }
  async createPartitionStates(topic: string, states: Map<number, LeaderIsrState>, fence: ControllerFence): Promise<Map<number, 'ok' | 'exists'>> {
    this.checkFence(fence);
    const out = new Map<number, 'ok' | 'exists'>();
    for (const [p, s] of states) {
      if (this.states.has(`${topic}-${p}`)) out.set(p, 'exists');
      else {
        this.states.set(`${topic}-${p}`, { state: { ...s, isr: [...s.isr] }, zkVersion: 0 });
        out.set(p, 'ok');
        this.fire(`state:${topic}-${p}`);
      }
    }
    return out;
  }
  async updatePartitionStates(
    topic: string,
    updates: { partition: number; state: LeaderIsrState; expectedZkVersion: number }[],
    fence: ControllerFence,
  ): Promise<Map<number, number | 'BAD_VERSION'>> {
    this.checkFence(fence);
    const out = new Map<number, number | 'BAD_VERSION'>();
    for (const u of updates) {
      const k = `${topic}-${u.partition}`;
      const cur = this.states.get(k);
      if (!cur || cur.zkVersion !== u.expectedZkVersion) out.set(u.partition, 'BAD_VERSION');
      else {
        this.states.set(k, { state: { ...u.state, isr: [...u.state.isr] }, zkVersion: cur.zkVersion + 1 });
        out.set(u.partition, cur.zkVersion + 1);
        this.fire(`state:${k}`);
      }
    }
    return out;
  }
  async markTopicForDeletion(topic: string): Promise<void> {
    this.deletions.add(topic);
    this.fire('deletions');
  }
  async getTopicDeletions(watch?: ZkWatcher): Promise<string[]> {
    this.watch('deletions', watch);
    return [...this.deletions].sort();
  }
  async deleteTopicDeletionMarker(topic: string, fence: ControllerFence): Promise<void> {
    this.checkFence(fence);
    this.deletions.delete(topic);
    this.fire('deletions');
  }
  async deleteTopicZNodes(topic: string, fence: ControllerFence): Promise<void> {
    this.checkFence(fence);
    this.topics.delete(topic);
    for (const k of [...this.states.keys()]) if (k.slice(0, k.lastIndexOf('-')) === topic) this.states.delete(k);
    this.configs.delete(`topics/${topic}`);
    this.fire('topics');
    this.fire(`topic:${topic}`);
  }
  async getEntityConfigs(type: ConfigEntityType, name: string): Promise<Record<string, string>> {
    return { ...(this.configs.get(`${type}/${name}`) ?? {}) };
  }
  async setEntityConfigs(type: ConfigEntityType, name: string, configs: Record<string, string>): Promise<void> {
    this.configs.set(`${type}/${name}`, { ...configs });
  }
  async getConfigChangeNames(): Promise<string[]> {
    return [];
  }
  async getConfigChange(): Promise<undefined> {
    return undefined;
  }
  async getPartitionReassignment(watch?: ZkWatcher): Promise<PartitionReassignment[] | undefined> {
    this.watch('reassign', watch);
    return this.reassignment;
  }
  async setPartitionReassignment(r: PartitionReassignment[], fence: ControllerFence): Promise<void> {
    this.checkFence(fence);
    if (!this.reassignment) return;
    this.reassignment = r;
    this.fire('reassign');
  }
  async watchPartitionState(topic: string, partition: number, watch: ZkWatcher): Promise<VersionedState | undefined> {
    this.watch(`state:${topic}-${partition}`, watch);
    const v = this.states.get(`${topic}-${partition}`);
    return v && { state: { ...v.state, isr: [...v.state.isr] }, zkVersion: v.zkVersion };
  }
  async createPartitionReassignment(r: PartitionReassignment[]): Promise<void> {
    this.reassignment = r;
    this.fire('reassign');
  }
  async deletePartitionReassignment(fence: ControllerFence): Promise<void> {
    this.checkFence(fence);
    this.reassignment = undefined;
    this.fire('reassign');
  }
  async getPreferredReplicaElection(watch?: ZkWatcher): Promise<TopicPartitionRef[] | undefined> {
    this.watch('preferred', watch);
    return this.preferred;
  }
  async createPreferredReplicaElection(ps: TopicPartitionRef[]): Promise<void> {
    this.preferred = ps;
    this.fire('preferred');
  }
  async deletePreferredReplicaElection(fence: ControllerFence): Promise<void> {
    this.checkFence(fence);
    this.preferred = undefined;
    this.fire('preferred');
  }
  async getIsrChangeNotifications(watch?: ZkWatcher): Promise<string[]> {
    this.watch('isr', watch);
    return [...this.isrChanges.keys()].sort();
  }
  async getIsrChangeNotification(name: string): Promise<TopicPartitionRef[]> {
    return this.isrChanges.get(name) ?? [];
  }
  async createIsrChangeNotification(ps: TopicPartitionRef[]): Promise<void> {
    this.isrChanges.set(`isr_change_${String(this.seq++).padStart(10, '0')}`, ps);
    this.fire('isr');
  }
  async deleteIsrChangeNotifications(names: string[], fence: ControllerFence): Promise<void> {
    this.checkFence(fence);
    for (const n of names) this.isrChanges.delete(n);
  }
  async allocateProducerIdBlock(): Promise<{ start: bigint; end: bigint }> {
    return { start: 0n, end: 999n };
  }
  async ensureFeatureZNode(): Promise<void> {
    this.featureEnsured = true;
  }
}

export class FakeMembership extends EventEmitter<{ controllerChange: [number] }> {
  isController = false;
  resignations = 0;
  constructor(
    private readonly zk: FakeZk,
    private readonly brokerId: number,
  ) {
    super();
  }
  controllerFence(): ControllerFence | undefined {
    return this.isController ? { ...this.zk.epoch } : undefined;
  }
  win(): void {
    this.isController = true;
    this.emit('controllerChange', this.brokerId);
  }
  async resign(): Promise<void> {
    this.resignations++;
    this.isController = false;
    this.emit('controllerChange', -1);
  }
}

export interface Sent {
  brokerId: number;
  request: ControllerRequest;
}

/** Records requests; StopReplica(delete) is answered only when the test says so. */
export class CaptureSink implements ControllerRequestSink {
  sent: Sent[] = [];
  removed: number[] = [];
  send(brokerId: number, request: ControllerRequest): void {
    this.sent.push({ brokerId, request });
  }
  removeBroker(id: number): void {
    this.removed.push(id);
  }
  take(): Sent[] {
    return this.sent.splice(0);
  }
  /** Answers every pending StopReplica(delete) to `brokerId` with `errorCode`. */
  answerStopReplicas(brokerId: number, errorCode = 0): number {
    let n = 0;
    for (const s of this.sent) {
      if (s.brokerId !== brokerId || s.request.api !== 'StopReplica' || !s.request.request.deletePartitions || !s.request.onResponse) continue;
      const cb = s.request.onResponse;
      s.request.onResponse = undefined;
      cb({
        errorCode: 0,
        partitionErrors: s.request.request.ungroupedPartitions.map((p) => ({ topicName: p.topicName, partitionIndex: p.partitionIndex, errorCode })),
      });
      n++;
    }
    return n;
  }
}

export function controllerConfig(over: Partial<ControllerConfig> = {}): ControllerConfig {
  return {
    brokerId: 1,
    interBrokerListenerName: 'PLAINTEXT',
    uncleanLeaderElectionEnable: false,
    autoLeaderRebalanceEnable: false,
    leaderImbalanceCheckIntervalSeconds: 300,
    leaderImbalancePerBrokerPercentage: 10,
    deleteTopicEnable: true,
    requestTimeoutMs: 5000,
    ...over,
  };
}

export interface Harness {
  zk: FakeZk;
  membership: FakeMembership;
  sink: CaptureSink;
  controller: KafkaController;
}

/** Brokers registered, the controller started and elected, start-up requests drained. */
export async function startController(
  brokers: number[],
  config: Partial<ControllerConfig> = {},
  before?: (zk: FakeZk) => Promise<void> | void,
): Promise<Harness> {
  const zk = new FakeZk();
  for (const b of brokers) zk.registerBroker(b);
  await before?.(zk);
  const membership = new FakeMembership(zk, 1);
  const sink = new CaptureSink();
  const controller = new KafkaController({ brokerId: 1, zk, membership, config: controllerConfig(config), logger: pino({ level: 'silent' }), sink });
  controller.start();
  membership.win();
  await controller.idle();
  return { zk, membership, sink, controller };
}
