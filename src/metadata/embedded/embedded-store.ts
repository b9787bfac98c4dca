/**
 * Metadata for a single broker with no other service: kept in memory and persisted as one JSON
 * file in the first log directory, replaced atomically (write, fsync, rename) after changes.
 * Changes made while a write is under way share the next write, and the file's text is built in
 * slices: a burst of creations costs a few writes of the whole state, not one each (issue 21).
 */
import { writeFileAtomically } from '../../storage/checkpoint/atomic-file.js';
import { readFile } from 'node:fs/promises';
import { ensureDirectory } from '../../storage/manager/log-dirs.js';
import { join } from 'node:path';
import { randomUuid } from '../../protocol/primitives/index.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { BrokerInfo, NewTopic, PartitionState, TopicInfo } from '../cluster-model.js';
import { INTERNAL_TOPICS } from '../cluster-model.js';
import type { MetadataStore } from '../metadata-store.js';
import { checkNewTopicName, collisionIndex, collisionKey } from '../topic-names.js';
import { LoopSlicer } from '../../common/slices.js';

interface PersistedState {
  version: 1;
  clusterId: string;
  topics: TopicInfo[];
}

export const METADATA_FILE = 'fjord-metadata.json';

export class EmbeddedMetadataStore implements MetadataStore {
  private readonly byName = new Map<string, TopicInfo>();
  private readonly byId = new Map<string, TopicInfo>();
  private readonly listeners: ((topic: string) => void)[] = [];
  /** The write under way (or settled); the next one starts after it. */
  private writing: Promise<void> = Promise.resolve();
  /** The next write, not started yet: changes made now are in it. */
  private nextWrite: Promise<void> | undefined;
  /** Whole-file writes done, for tests and figures. */
  writes = 0;

  private constructor(
    readonly clusterId: string,
    private readonly self: BrokerInfo,
    private readonly file: string,
  ) {}

  static async open(dir: string, self: BrokerInfo, clusterId?: string | null): Promise<EmbeddedMetadataStore> {
    await ensureDirectory(dir);
    const file = join(dir, METADATA_FILE);
    let state: PersistedState | undefined;
    try {
      state = JSON.parse(await readFile(file, 'utf8')) as PersistedState;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new Error(`cannot read cluster metadata ${file}: ${(err as Error).message}`);
      }
    }
    const id = state?.clusterId ?? clusterId ?? randomUuid();
    if (clusterId && state && state.clusterId !== clusterId) {
      throw new Error(`cluster.id ${clusterId} does not match the id ${state.clusterId} stored in ${file}`);
    }
    const store = new EmbeddedMetadataStore(id, self, file);
    for (const t of state?.topics ?? []) store.index(t);
    if (!state) await store.persist();
    return store;
  }

  private index(t: TopicInfo): void {
    this.byName.set(t.name, t);
    this.byId.set(t.topicId, t);
  }

  controllerId(): number {
    return this.self.id;
  }
  brokers(): BrokerInfo[] {
    return [this.self];
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
  onChange(listener: (topic: string) => void): void {
    this.listeners.push(listener);
  }

  async createTopic(spec: NewTopic): Promise<TopicInfo> {
    const [outcome] = await this.createTopics([spec]);
    if (outcome instanceof Error) throw outcome;
    return outcome!;
  }

  /**
   * Creates several topics with one write of the file: each spec is checked in order (an earlier
   * one of the batch counts as existing for a later one) and answered on its own. When the write
   * fails none of them exists, in memory either (else it would vanish at the next start while
   * its logs stay on disk).
   */
  async createTopics(specs: readonly NewTopic[]): Promise<(TopicInfo | Error)[]> {
    const collisions = collisionIndex(this.byName.keys());
    const outcomes: (TopicInfo | Error)[] = [];
    const created: TopicInfo[] = [];
    for (const spec of specs) {
      try {
        checkNewTopicName(spec.name, this.byName, collisions);
        const partitions = this.assign(spec.name, 0, spec.numPartitions, spec.replicationFactor, spec.assignment);
        const topic: TopicInfo = {
          name: spec.name,
          topicId: randomUuid(),
          internal: spec.internal ?? INTERNAL_TOPICS.has(spec.name),
          partitions,
          configs: { ...(spec.configs ?? {}) },
        };
        this.index(topic);
        collisions.set(collisionKey(spec.name), spec.name);
        created.push(topic);
        outcomes.push(topic);
      } catch (err) {
        outcomes.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    if (created.length === 0) return outcomes;
    try {
      await this.persist();
    } catch (err) {
      for (const t of created) {
        this.byName.delete(t.name);
        this.byId.delete(t.topicId);
      }
      const failure = err instanceof Error ? err : new Error(String(err));
      return outcomes.map((o) => (o instanceof Error ? o : failure));
    }
    for (const t of created) this.emit(t.name);
    return outcomes;
  }

  private assign(name: string, from: number, to: number, rf: number, assignment?: number[][]): PartitionState[] {
    if (assignment) {
      for (const replicas of assignment) {
        if (replicas.length === 0 || replicas.some((b) => b !== this.self.id) || new Set(replicas).size !== replicas.length) {
          throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Replica assignment ${JSON.stringify(assignment)} names unknown or duplicate brokers`);
        }
      }
    } else {
      if (to <= from && from === 0) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.');
      if (rf < 1) throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.');
      if (rf > 1) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICATION_FACTOR,
          `Unable to replicate the partition ${rf} time(s): The target replication factor of ${rf} cannot be reached because only 1 broker(s) are registered.`,
        );
      }
    }
    const out: PartitionState[] = [];
    for (let p = from; p < to; p++) {
      const replicas = assignment?.[p - from] ?? [this.self.id];
      out.push({ partition: p, leader: replicas[0]!, leaderEpoch: 0, replicas, isr: [...replicas], offlineReplicas: [] });
    }
    void name;
    return out;
  }

  async deleteTopic(name: string): Promise<void> {
    const t = this.byName.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${name} does not exist`);
    this.byName.delete(name);
    this.byId.delete(t.topicId);
    await this.persist();
    this.emit(name);
  }

  async createPartitions(name: string, totalCount: number, assignment?: number[][]): Promise<TopicInfo> {
    const t = this.byName.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
    const current = t.partitions.length;
    if (totalCount <= current) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${current} partitions, which is higher than the requested ${totalCount}.`);
    }
    const rf = t.partitions[0]?.replicas.length ?? 1;
    t.partitions.push(...this.assign(name, current, totalCount, rf, assignment));
    try {
      await this.persist();
    } catch (err) {
      t.partitions.splice(current);
      throw err;
    }
    this.emit(name);
    return t;
  }

  async truncatePartitions(name: string, count: number): Promise<TopicInfo> {
    const t = this.byName.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
    if (count < t.partitions.length) {
      t.partitions.splice(count);
      await this.persist();
    }
    this.emit(name);
    return t;
  }

  async setTopicConfigs(name: string, configs: Record<string, string>): Promise<void> {
    const t = this.byName.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${name} does not exist`);
    t.configs = { ...configs };
    await this.persist();
    this.emit(name);
  }

  private emit(topic: string): void {
    for (const l of this.listeners) l(topic);
  }

  /**
   * Writes the state after every change made so far. Writes never overlap; every change made
   * before the next write starts shares it (and its outcome), so a burst of changes costs one
   * write once the one under way is done, not one each.
   */
  private persist(): Promise<void> {
    if (this.nextWrite) return this.nextWrite;
    const write = this.writing.then(() => {
      // From here on, changes wait for the write after this one.
      this.nextWrite = undefined;
      return this.writeState();
    });
    this.nextWrite = write;
    // A failed write must not poison the chain: the next change writes the whole state again.
    this.writing = write.catch(() => undefined);
    return write;
  }

  /** The file's text, built topic by topic in slices (10,000 topics are a few MB of JSON). */
  private async writeState(): Promise<void> {
    const slicer = new LoopSlicer();
    const parts: string[] = [];
    for (const t of [...this.byName.values()]) {
      // A topic deleted during a pause is left out; one changed is written as it is now.
      if (this.byName.get(t.name) !== t) continue;
      parts.push(JSON.stringify(t));
      const p = slicer.maybePause();
      if (p) await p;
    }
    const text = `{"version":1,"clusterId":${JSON.stringify(this.clusterId)},"topics":[\n${parts.join(',\n')}\n]}\n`;
    await writeFileAtomically(this.file, text);
    this.writes++;
  }

  async close(): Promise<void> {
    await this.writing;
  }
}
