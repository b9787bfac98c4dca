/**
 * A cluster-mode broker's metadata image (Kafka's MetadataCache): live brokers with their
 * endpoints per listener, topics with ids and partition states, the controller. It is fed only by
 * the controller's requests (UpdateMetadata, plus the leadership LeaderAndIsr carries for
 * partitions it already knows); topic configs are read from `/config/topics/<t>`. Writes go to
 * ZooKeeper as intents (Kafka's AdminZkClient, zk-topic-writes.ts); the controller acts on them
 * and tells every broker, so each write then waits, bounded, until the image shows its result
 * (image-waits.ts).
 *
 * Kafka's UpdateMetadata is incremental: a topic missing from one is not dropped. Partitions go
 * when the controller sends leader -2 (LeaderDuringDelete) or StopReplica with delete.
 */
import type { Logger } from 'pino';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/primitives/index.js';
import type { BrokerInfo, NewTopic, PartitionState, TopicInfo } from '../cluster-model.js';
import { INTERNAL_TOPICS } from '../cluster-model.js';
import type { MetadataStore } from '../metadata-store.js';
import type { KafkaZkApi } from './zk-client-types.js';
import { ImageWaits } from './image-waits.js';
import { ZkTopicWrites, type ReplicaAssigner } from './zk-topic-writes.js';
import { messageOf } from '../../common/errors.js';

/** Kafka's LeaderAndIsr.LeaderDuringDelete: the partition's topic is being deleted. */
export const LEADER_DURING_DELETE = -2;

export interface ListenerEndpoint {
  host: string;
  port: number;
}

export interface LiveBroker {
  id: number;
  rack: string | null;
  /** listener name -> endpoint */
  endpoints: Map<string, ListenerEndpoint>;
}

/** One partition state as UpdateMetadata and LeaderAndIsr carry it (every version normalised). */
export interface ControlPartitionState {
  topic: string;
  partition: number;
  controllerEpoch: number;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  replicas: number[];
  /** UpdateMetadata v4+ only (replicas on dead brokers or offline log dirs); [] otherwise. */
  offlineReplicas: number[];
  zkVersion: number;
}

export interface UpdateMetadataInput {
  controllerId: number;
  controllerEpoch: number;
  liveBrokers: LiveBroker[];
  partitions: ControlPartitionState[];
  /** topic -> id, when the request carried ids (v7+). */
  topicIds: Map<string, string>;
}

export interface ZkBrokerMetadataOptions {
  brokerId: number;
  clusterId: string;
  zk: KafkaZkApi;
  assigner: ReplicaAssigner;
  logger: Logger;
  /** How long a write waits for the controller's answer to show in the image. */
  writeTimeoutMs: number;
  /** The elected controller as ZooKeeper says, used until an UpdateMetadata names one. */
  controllerIdHint?: () => number;
}

export class ZkBrokerMetadata implements MetadataStore {
  private readonly liveBrokers = new Map<number, LiveBroker>();
  private readonly byName = new Map<string, TopicInfo>();
  private readonly byId = new Map<string, TopicInfo>();
  /** Configs read from ZooKeeper, kept even before the topic shows in the image. */
  private readonly configCache = new Map<string, Record<string, string>>();
  private readonly listeners: ((topic: string) => void)[] = [];
  private readonly waits: ImageWaits;
  private readonly writes: ZkTopicWrites;
  private controllerIdValue = -1;
  /** The highest controller epoch seen in any request: lower ones come from a deposed controller. */
  private controllerEpochValue = -1;
  private updateMetadataSeen = false;
  private firstUpdate: { promise: Promise<void>; resolve: () => void };

  constructor(private readonly opts: ZkBrokerMetadataOptions) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.firstUpdate = { promise, resolve };
    this.waits = new ImageWaits(opts.writeTimeoutMs);
    const image = { topics: this.byName, liveBrokers: this.liveBrokers, configCache: this.configCache };
    this.writes = new ZkTopicWrites(opts.zk, opts.assigner, image, this.waits);
  }

  get clusterId(): string {
    return this.opts.clusterId;
  }
  get controllerEpoch(): number {
    return this.controllerEpochValue;
  }
  /** Resolves once the first UpdateMetadata was applied. */
  get firstUpdateMetadata(): Promise<void> {
    return this.firstUpdate.promise;
  }
  get hasReceivedUpdateMetadata(): boolean {
    return this.updateMetadataSeen;
  }

  controllerId(): number {
    if (this.controllerIdValue >= 0) return this.controllerIdValue;
    return this.opts.controllerIdHint?.() ?? -1;
  }
  brokers(): BrokerInfo[] {
    return [...this.liveBrokers.values()].map((b) => {
      const first = b.endpoints.values().next().value as ListenerEndpoint | undefined;
      return { id: b.id, host: first?.host ?? '', port: first?.port ?? -1, rack: b.rack };
    });
  }
  isLive(brokerId: number): boolean {
    return this.liveBrokers.has(brokerId);
  }
  /** Where clients reach a live broker through a listener; undefined when it has none by that name. */
  endpoint(brokerId: number, listenerName: string): ListenerEndpoint | undefined {
    return this.liveBrokers.get(brokerId)?.endpoints.get(listenerName);
  }
  topics(): TopicInfo[] {
    return [...this.byName.values()];
  }
  topic(name: string): TopicInfo | undefined {
    return this.byName.get(name);
  }
  topicById(topicId: string): TopicInfo | undefined {
    return this.byId.get(topicId);
  }
  /** The topic's configs as read from ZooKeeper ({} when not read yet). */
  topicConfigs(name: string): Record<string, string> {
    return this.configCache.get(name) ?? this.byName.get(name)?.configs ?? {};
  }
  onChange(listener: (topic: string) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Seeds the broker list with this broker before the controller has spoken, so Metadata
   * answers with at least itself (the first UpdateMetadata replaces the list).
   */
  seedSelf(self: LiveBroker): void {
    if (!this.updateMetadataSeen) this.liveBrokers.set(self.id, self);
  }

  /** Whether a request from controller epoch `epoch` comes from a deposed controller. */
  isControllerEpochStale(epoch: number): boolean {
    return epoch < this.controllerEpochValue;
  }

  /** Records the epoch (and controller) of an accepted request. */
  noteController(controllerId: number, controllerEpoch: number): void {
    if (controllerEpoch > this.controllerEpochValue) this.controllerEpochValue = controllerEpoch;
    if (controllerId >= 0) this.controllerIdValue = controllerId;
  }

  /**
   * Applies an UpdateMetadata whose controller epoch was checked: replaces the live brokers,
   * applies the partition states (leader -2 drops the partition). Configs and ids of topics new
   * to the image are read from ZooKeeper first, so a topic never shows without them.
   */
  async applyUpdateMetadata(u: UpdateMetadataInput): Promise<string[]> {
    this.noteController(u.controllerId, u.controllerEpoch);
    const newTopics = new Set<string>();
    for (const ps of u.partitions) {
      if (ps.leader !== LEADER_DURING_DELETE && !this.byName.has(ps.topic)) newTopics.add(ps.topic);
    }
    const fromZk = await Promise.all([...newTopics].map((t) => this.readTopicExtras(t, u.topicIds.get(t))));
    const extras = new Map([...newTopics].map((t, i) => [t, fromZk[i]!]));

    this.liveBrokers.clear();
    for (const b of u.liveBrokers) this.liveBrokers.set(b.id, b);
    const touched = new Set<string>();
    for (const ps of u.partitions) {
      touched.add(ps.topic);
      if (ps.leader === LEADER_DURING_DELETE) {
        this.removePartition(ps.topic, ps.partition);
        continue;
      }
      const id = u.topicIds.get(ps.topic);
      const t = this.byName.get(ps.topic) ?? this.addTopic(ps.topic, id ?? extras.get(ps.topic)?.topicId ?? ZERO_UUID, extras.get(ps.topic)?.configs ?? {});
      if (id && id !== ZERO_UUID && t.topicId !== id) this.reindexId(t, id);
      this.setPartition(t, ps);
    }
    // Liveness changed for every partition: offline replicas are the ones not live now.
    for (const t of this.byName.values()) for (const p of t.partitions) p.offlineReplicas = this.offlineOf(p.replicas, p.offlineReplicas);
    const first = !this.updateMetadataSeen;
    this.updateMetadataSeen = true;
    this.emit([...touched]);
    if (first) this.firstUpdate.resolve();
    return [...touched];
  }

  /**
   * LeaderAndIsr's leadership for partitions the image already has (UpdateMetadata follows and
   * brings the rest): clients asking this broker see the new leader as early as possible.
   * Only newer-or-equal leader epochs are applied (the caller fenced lower ones already).
   */
  applyLeadership(states: readonly ControlPartitionState[]): string[] {
    const touched = new Set<string>();
    for (const ps of states) {
      const t = this.byName.get(ps.topic);
      const cur = t?.partitions.find((p) => p.partition === ps.partition);
      if (!t || !cur || ps.leaderEpoch < cur.leaderEpoch) continue;
      this.setPartition(t, { ...ps, offlineReplicas: cur.offlineReplicas });
      touched.add(ps.topic);
    }
    this.emit([...touched]);
    return [...touched];
  }

  /** Re-reads `/config/topics/<t>` (the config-change watcher calls this). */
  async refreshTopicConfigs(topic: string): Promise<void> {
    const configs = await this.opts.zk.getEntityConfigs('topics', topic);
    this.configCache.set(topic, configs);
    const t = this.byName.get(topic);
    if (t) {
      t.configs = { ...configs };
      this.emit([topic]);
    }
  }

  private async readTopicExtras(topic: string, knownId: string | undefined): Promise<{ topicId: string | undefined; configs: Record<string, string> }> {
    const configs = await this.opts.zk.getEntityConfigs('topics', topic).catch((err: unknown) => {
      this.opts.logger.warn({ topic, err: messageOf(err) }, 'cannot read topic configs from ZooKeeper; using none');
      return this.configCache.get(topic) ?? {};
    });
    this.configCache.set(topic, configs);
    let topicId = knownId && knownId !== ZERO_UUID ? knownId : undefined;
    if (!topicId) topicId = (await this.opts.zk.getTopicAssignment(topic).catch(() => undefined))?.topicId;
    return { topicId, configs };
  }

  private addTopic(name: string, topicId: string, configs: Record<string, string>): TopicInfo {
    const t: TopicInfo = { name, topicId, internal: INTERNAL_TOPICS.has(name), partitions: [], configs: { ...configs } };
    this.byName.set(name, t);
    if (topicId !== ZERO_UUID) this.byId.set(topicId, t);
    return t;
  }

  private reindexId(t: TopicInfo, id: string): void {
    if (this.byId.get(t.topicId) === t) this.byId.delete(t.topicId);
    t.topicId = id;
    this.byId.set(id, t);
  }

  /** Keeps `partitions` sorted by index (users index it by partition number once complete). */
  private setPartition(t: TopicInfo, ps: ControlPartitionState): void {
    const state: PartitionState = {
      partition: ps.partition,
      leader: ps.leader,
      leaderEpoch: ps.leaderEpoch,
      replicas: [...ps.replicas],
      isr: [...ps.isr],
      offlineReplicas: this.offlineOf(ps.replicas, ps.offlineReplicas),
    };
    const i = t.partitions.findIndex((p) => p.partition >= ps.partition);
    if (i < 0) t.partitions.push(state);
    else if (t.partitions[i]!.partition === ps.partition) t.partitions[i] = state;
    else t.partitions.splice(i, 0, state);
  }

  private removePartition(topic: string, partition: number): boolean {
    const t = this.byName.get(topic);
    if (!t) return false;
    const i = t.partitions.findIndex((p) => p.partition === partition);
    if (i >= 0) t.partitions.splice(i, 1);
    if (t.partitions.length === 0) {
      this.byName.delete(topic);
      if (this.byId.get(t.topicId) === t) this.byId.delete(t.topicId);
      this.configCache.delete(topic);
    }
    return true;
  }

  private offlineOf(replicas: readonly number[], reported: readonly number[]): number[] {
    return replicas.filter((r) => !this.liveBrokers.has(r) || reported.includes(r));
  }

  private emit(topics: readonly string[]): void {
    for (const topic of topics) for (const l of this.listeners) l(topic);
    this.waits.recheck();
  }

  /** Writes the topic to ZooKeeper (any broker may), then waits until the controller gave it leaders. */
  createTopic(spec: NewTopic): Promise<TopicInfo> {
    return this.writes.createTopic(spec);
  }

  /** Several topics, each answered on its own (see ZkTopicWrites.createTopics). */
  createTopics(specs: readonly NewTopic[]): Promise<(TopicInfo | Error)[]> {
    return this.writes.createTopics(specs);
  }

  /** Marks the topic for deletion (the controller deletes it), then waits until it left the image. */
  deleteTopic(name: string): Promise<void> {
    return this.writes.deleteTopic(name);
  }

  /** Adds partitions with a conditional set of `/brokers/topics/<t>`, then waits for their leaders. */
  createPartitions(name: string, totalCount: number, explicit?: number[][]): Promise<TopicInfo> {
    return this.writes.createPartitions(name, totalCount, explicit);
  }

  /** Kafka never removes partitions, and ZooKeeper-mode brokers cannot: refused. */
  truncatePartitions(name: string): Promise<TopicInfo> {
    return Promise.reject(new KafkaError(ErrorCode.INVALID_PARTITIONS, `Partitions of '${name}' cannot be removed in cluster mode`));
  }

  /** Writes `/config/topics/<t>` with a change notification; this broker applies it at once, others on the notification. */
  async setTopicConfigs(name: string, configs: Record<string, string>): Promise<void> {
    if (!this.byName.has(name)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${name} does not exist`);
    await this.opts.zk.setEntityConfigs('topics', name, configs);
    this.configCache.set(name, { ...configs });
    const t = this.byName.get(name);
    if (t) {
      t.configs = { ...configs };
      this.emit([name]);
    }
  }

  close(): Promise<void> {
    this.waits.rejectAll(() => new KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, 'the broker is shutting down'));
    this.firstUpdate.resolve();
    return Promise.resolve();
  }
}
