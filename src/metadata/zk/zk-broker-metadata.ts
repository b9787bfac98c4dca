/**
 * A cluster-mode broker's metadata image (Kafka's MetadataCache): live brokers with their
 * endpoints per listener, topics with ids and partition states, the controller. It is fed only by
 * the controller's requests (UpdateMetadata, plus the leadership LeaderAndIsr carries for
 * partitions it already knows); topic configs are read from `/config/topics/<t>`. Writes go to
 * ZooKeeper as intents (Kafka's AdminZkClient); the controller acts on them and tells every
 * broker, so each write then waits, bounded, until the image shows its result.
 *
 * Kafka's UpdateMetadata is incremental: a topic missing from one is not dropped. Partitions go
 * when the controller sends leader -2 (LeaderDuringDelete) or StopReplica with delete.
 */
import type { Logger } from 'pino';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { randomUuid, ZERO_UUID } from '../../protocol/primitives/index.js';
import type { BrokerInfo, NewTopic, PartitionState, TopicInfo } from '../cluster-model.js';
import { INTERNAL_TOPICS } from '../cluster-model.js';
import type { MetadataStore } from '../metadata-store.js';
import { checkNewTopicName, collisionIndex, collisionKey } from '../topic-names.js';
import { Semaphore } from '../../common/mutex.js';
import type { KafkaZkApi } from './zk-client-types.js';

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

/** The assignment functions of src/metadata/replica-assignment.ts (contract 2), injected. */
export interface ReplicaAssigner {
  assignReplicas(brokers: readonly { id: number; rack: string | null }[], numPartitions: number, replicationFactor: number): Map<number, number[]>;
  assignAddedPartitions(brokers: readonly { id: number; rack: string | null }[], existing: Map<number, number[]>, newTotal: number): Map<number, number[]>;
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

/** ZooKeeper topic writes one createTopics has in flight at once. */
const ZK_TOPIC_WRITES = 16;

interface PlannedTopic {
  name: string;
  topicId: string;
  assignment: Map<number, number[]>;
  configs: Record<string, string>;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

interface Waiter {
  check: () => boolean;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class ZkBrokerMetadata implements MetadataStore {
  private readonly liveBrokers = new Map<number, LiveBroker>();
  private readonly byName = new Map<string, TopicInfo>();
  private readonly byId = new Map<string, TopicInfo>();
  /** Configs read from ZooKeeper, kept even before the topic shows in the image. */
  private readonly configCache = new Map<string, Record<string, string>>();
  private readonly listeners: ((topic: string) => void)[] = [];
  private waiters: Waiter[] = [];
  private controllerIdValue = -1;
  /** The highest controller epoch seen in any request: lower ones come from a deposed controller. */
  private controllerEpochValue = -1;
  private updateMetadataSeen = false;
  private firstUpdate: { promise: Promise<void>; resolve: () => void };

  constructor(private readonly opts: ZkBrokerMetadataOptions) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.firstUpdate = { promise, resolve };
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
      this.opts.logger.warn({ topic, err: err instanceof Error ? err.message : String(err) }, 'cannot read topic configs from ZooKeeper; using none');
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
    if (this.waiters.length > 0) {
      const done = this.waiters.filter((w) => w.check());
      this.waiters = this.waiters.filter((w) => !done.includes(w));
      for (const w of done) w.resolve();
    }
  }

  /** Resolves when `check` holds (re-evaluated on every change), or throws REQUEST_TIMED_OUT. */
  private waitFor(check: () => boolean, what: string): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${what}: the controller did not confirm within ${this.opts.writeTimeoutMs} ms`));
      }, this.opts.writeTimeoutMs);
      const waiter: Waiter = {
        check,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private hasLeaders(name: string, count: number, topicId?: string): boolean {
    const t = this.byName.get(name);
    if (!t || (topicId !== undefined && t.topicId !== topicId) || t.partitions.length < count) return false;
    return t.partitions.every((p) => p.leader >= 0);
  }

  private assignable(): { id: number; rack: string | null }[] {
    return [...this.liveBrokers.values()].map((b) => ({ id: b.id, rack: b.rack })).sort((a, b) => a.id - b.id);
  }

  /** Explicit replicas must be non-empty, distinct and name live brokers (Kafka's AdminZkClient). */
  private checkExplicit(assignment: readonly number[][]): void {
    for (const replicas of assignment) {
      if (replicas.length === 0 || new Set(replicas).size !== replicas.length || replicas.some((b) => !this.liveBrokers.has(b))) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Replica assignment ${JSON.stringify(assignment)} names unknown or duplicate brokers`);
      }
    }
  }

  /** Writes the topic to ZooKeeper (any broker may), then waits until the controller gave it leaders. */
  async createTopic(spec: NewTopic): Promise<TopicInfo> {
    const [outcome] = await this.createTopics([spec]);
    if (outcome instanceof Error) throw outcome;
    return outcome!;
  }

  /**
   * Several topics, each answered on its own: written to ZooKeeper at most ZK_TOPIC_WRITES at a
   * time (a thousand at once would queue thousands of requests on the session), then one wait,
   * bounded by writeTimeoutMs, until the controller gave every written topic its leaders.
   */
  async createTopics(specs: readonly NewTopic[]): Promise<(TopicInfo | Error)[]> {
    const collisions = collisionIndex(this.byName.keys());
    const planned = specs.map((spec) => {
      try {
        checkNewTopicName(spec.name, this.byName, collisions);
        const p = this.plan(spec);
        collisions.set(collisionKey(spec.name), spec.name);
        return p;
      } catch (err) {
        return asError(err);
      }
    });
    const slots = new Semaphore(ZK_TOPIC_WRITES);
    const written = await Promise.all(planned.map((p) => (p instanceof Error ? p : slots.run(async () => {
      await this.opts.zk.createTopic(p.name, p.topicId, p.assignment, p.configs);
      this.configCache.set(p.name, p.configs);
      return p;
    }).catch(asError))));
    const ok = written.filter((w): w is PlannedTopic => !(w instanceof Error));
    const shown = (p: PlannedTopic): boolean => this.hasLeaders(p.name, p.assignment.size, p.topicId);
    let late: Error | undefined;
    if (ok.length > 0) {
      await this.waitFor(() => ok.every(shown), ok.length === 1 ? `creating topic ${ok[0]!.name}` : `creating ${ok.length} topics`).catch((err: unknown) => {
        late = asError(err);
      });
    }
    return written.map((w) => (w instanceof Error ? w : shown(w) ? this.byName.get(w.name)! : late!));
  }

  /** A new topic's id, replicas and configs, checked as Kafka's AdminZkClient does. */
  private plan(spec: NewTopic): PlannedTopic {
    let assignment: Map<number, number[]>;
    if (spec.assignment) {
      this.checkExplicit(spec.assignment);
      assignment = new Map(spec.assignment.map((r, p) => [p, [...r]]));
    } else {
      if (spec.numPartitions <= 0) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.');
      if (spec.replicationFactor < 1) throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.');
      const live = this.assignable();
      if (spec.replicationFactor > live.length) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICATION_FACTOR,
          `Unable to replicate the partition ${spec.replicationFactor} time(s): The target replication factor of ${spec.replicationFactor} cannot be reached because only ${live.length} broker(s) are registered.`,
        );
      }
      assignment = this.opts.assigner.assignReplicas(live, spec.numPartitions, spec.replicationFactor);
    }
    return { name: spec.name, topicId: randomUuid(), assignment, configs: { ...(spec.configs ?? {}) } };
  }

  /** Marks the topic for deletion (the controller deletes it), then waits until it left the image. */
  async deleteTopic(name: string): Promise<void> {
    const t = this.byName.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${name} does not exist`);
    const id = t.topicId;
    await this.opts.zk.markTopicForDeletion(name);
    await this.waitFor(() => this.byName.get(name)?.topicId !== id, `deleting topic ${name}`);
  }

  /** Adds partitions with a conditional set of `/brokers/topics/<t>`, then waits for their leaders. */
  async createPartitions(name: string, totalCount: number, explicit?: number[][]): Promise<TopicInfo> {
    if (!this.byName.has(name)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
    if (explicit) this.checkExplicit(explicit);
    // A concurrent writer (another broker, a tool) moved the znode: re-read and redo, a few times.
    for (let attempt = 0; ; attempt++) {
      const current = await this.opts.zk.getTopicAssignment(name);
      if (!current) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
      const have = current.partitions.size;
      if (totalCount <= have) {
        throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${have} partitions, which is higher than the requested ${totalCount}.`);
      }
      const added = explicit
        ? new Map(explicit.map((r, i) => [have + i, [...r]]))
        : this.opts.assigner.assignAddedPartitions(this.assignable(), current.partitions, totalCount);
      const partitions = new Map([...current.partitions, ...added]);
      try {
        await this.opts.zk.setTopicAssignment(
          { topic: name, topicId: current.topicId, partitions, addingReplicas: current.addingReplicas, removingReplicas: current.removingReplicas },
          current.zkVersion,
        );
        break;
      } catch (err) {
        const badVersion = typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'BAD_VERSION';
        if (!badVersion || attempt >= 2) throw err;
      }
    }
    await this.waitFor(() => this.hasLeaders(name, totalCount), `adding partitions to ${name}`);
    return this.byName.get(name)!;
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
    for (const w of this.waiters) w.reject(new KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, 'the broker is shutting down'));
    this.waiters = [];
    this.firstUpdate.resolve();
    return Promise.resolve();
  }
}
