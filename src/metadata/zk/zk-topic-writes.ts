/**
 * A ZooKeeper-mode broker's topic writes (Kafka's AdminZkClient): create topics, add partitions,
 * mark topics for deletion. Each is checked as Kafka checks it, written to ZooKeeper as an intent
 * for the controller, and then waits (image-waits.ts) until the broker's metadata image shows
 * the controller's answer. Apart from the image itself (zk-broker-metadata.ts), which the
 * controller's requests feed and which these writes only read.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { randomUuid } from '../../protocol/primitives/index.js';
import type { NewTopic, TopicInfo } from '../cluster-model.js';
import { checkNewTopicName, collisionIndex, collisionKey } from '../topic-names.js';
import { Semaphore } from '../../common/mutex.js';
import type { KafkaZkApi } from './zk-client-types.js';
import type { ImageWaits } from './image-waits.js';

/** The assignment functions of src/metadata/replica-assignment.ts (contract 2), injected. */
export interface ReplicaAssigner {
  assignReplicas(brokers: readonly { id: number; rack: string | null }[], numPartitions: number, replicationFactor: number): Map<number, number[]>;
  assignAddedPartitions(brokers: readonly { id: number; rack: string | null }[], existing: Map<number, number[]>, newTotal: number): Map<number, number[]>;
}

/** What the writes read of the metadata image (and the topic configs they remember). */
export interface TopicWriteImage {
  readonly topics: ReadonlyMap<string, TopicInfo>;
  readonly liveBrokers: ReadonlyMap<number, { id: number; rack: string | null }>;
  /** Configs read from or written to ZooKeeper, kept even before the topic shows in the image. */
  readonly configCache: Map<string, Record<string, string>>;
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

export class ZkTopicWrites {
  constructor(
    private readonly zk: KafkaZkApi,
    private readonly assigner: ReplicaAssigner,
    private readonly image: TopicWriteImage,
    private readonly waits: ImageWaits,
  ) {}

  private hasLeaders(name: string, count: number, topicId?: string): boolean {
    const t = this.image.topics.get(name);
    if (!t || (topicId !== undefined && t.topicId !== topicId) || t.partitions.length < count) return false;
    return t.partitions.every((p) => p.leader >= 0);
  }

  private assignable(): { id: number; rack: string | null }[] {
    return [...this.image.liveBrokers.values()].map((b) => ({ id: b.id, rack: b.rack })).sort((a, b) => a.id - b.id);
  }

  /** Explicit replicas must be non-empty, distinct and name live brokers (Kafka's AdminZkClient). */
  private checkExplicit(assignment: readonly number[][]): void {
    for (const replicas of assignment) {
      if (replicas.length === 0 || new Set(replicas).size !== replicas.length || replicas.some((b) => !this.image.liveBrokers.has(b))) {
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
    const collisions = collisionIndex(this.image.topics.keys());
    const planned = specs.map((spec) => {
      try {
        checkNewTopicName(spec.name, this.image.topics, collisions);
        const p = this.plan(spec);
        collisions.set(collisionKey(spec.name), spec.name);
        return p;
      } catch (err) {
        return asError(err);
      }
    });
    const slots = new Semaphore(ZK_TOPIC_WRITES);
    const written = await Promise.all(
      planned.map((p) =>
        p instanceof Error
          ? p
          : slots
              .run(async () => {
                await this.zk.createTopic(p.name, p.topicId, p.assignment, p.configs);
                this.image.configCache.set(p.name, p.configs);
                return p;
              })
              .catch(asError),
      ),
    );
    const ok = written.filter((w): w is PlannedTopic => !(w instanceof Error));
    const shown = (p: PlannedTopic): boolean => this.hasLeaders(p.name, p.assignment.size, p.topicId);
    let late: Error | undefined;
    if (ok.length > 0) {
      await this.waits
        .waitFor(() => ok.every(shown), ok.length === 1 ? `creating topic ${ok[0]!.name}` : `creating ${ok.length} topics`)
        .catch((err: unknown) => {
          late = asError(err);
        });
    }
    return written.map((w) => (w instanceof Error ? w : shown(w) ? this.image.topics.get(w.name)! : late!));
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
      assignment = this.assigner.assignReplicas(live, spec.numPartitions, spec.replicationFactor);
    }
    return { name: spec.name, topicId: randomUuid(), assignment, configs: { ...(spec.configs ?? {}) } };
  }

  /** Marks the topic for deletion (the controller deletes it), then waits until it left the image. */
  async deleteTopic(name: string): Promise<void> {
    const t = this.image.topics.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${name} does not exist`);
    const id = t.topicId;
    await this.zk.markTopicForDeletion(name);
    await this.waits.waitFor(() => this.image.topics.get(name)?.topicId !== id, `deleting topic ${name}`);
  }

  /** Adds partitions with a conditional set of `/brokers/topics/<t>`, then waits for their leaders. */
  async createPartitions(name: string, totalCount: number, explicit?: number[][]): Promise<TopicInfo> {
    if (!this.image.topics.has(name)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
    if (explicit) this.checkExplicit(explicit);
    // A concurrent writer (another broker, a tool) moved the znode: re-read and redo, a few times.
    for (let attempt = 0; ; attempt++) {
      const current = await this.zk.getTopicAssignment(name);
      if (!current) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
      const have = current.partitions.size;
      if (totalCount <= have) {
        throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${have} partitions, which is higher than the requested ${totalCount}.`);
      }
      const added = explicit
        ? new Map(explicit.map((r, i) => [have + i, [...r]]))
        : this.assigner.assignAddedPartitions(this.assignable(), current.partitions, totalCount);
      const partitions = new Map([...current.partitions, ...added]);
      try {
        await this.zk.setTopicAssignment(
          { topic: name, topicId: current.topicId, partitions, addingReplicas: current.addingReplicas, removingReplicas: current.removingReplicas },
          current.zkVersion,
        );
        break;
      } catch (err) {
        const badVersion = typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'BAD_VERSION';
        if (!badVersion || attempt >= 2) throw err;
      }
    }
    await this.waits.waitFor(() => this.hasLeaders(name, totalCount), `adding partitions to ${name}`);
    return this.image.topics.get(name)!;
  }
}
