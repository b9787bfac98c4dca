/**
 * A shard worker's copy of the metadata (docs/threads.md "Shared state"): the topics, their
 * partitions and topic configs, as the main thread posts them, with every partition this shard
 * does not own shown leaderless. Today's ReplicaManager runs on it unchanged: embedded mode's
 * sync opens exactly the shard's partitions (led here, ISR [self]) and the append path answers
 * NOT_LEADER_OR_FOLLOWER for the others. In cluster mode (step 3) the partitions are kept as the
 * broker's image has them (leaders, ISR, replicas: the controller's LeaderAndIsr, not the mirror,
 * opens logs there) and the live brokers are the controller's. Read-only: changes are the main
 * thread's to make.
 */
import type { BrokerInfo, NewTopic, TopicInfo } from '../../../metadata/cluster-model.js';
import type { MetadataStore } from '../../../metadata/metadata-store.js';
import { shardOf } from '../partition-shards.js';

export class MetadataMirror implements MetadataStore {
  readonly clusterId = 'shard';
  private readonly byName = new Map<string, TopicInfo>();
  private readonly byId = new Map<string, TopicInfo>();
  private readonly listeners: ((topic: string) => void)[] = [];
  /** Cluster mode: the live brokers, as last posted. */
  private live: BrokerInfo[] | undefined;

  constructor(
    private readonly brokerId: number,
    private readonly index: number,
    private readonly shards: number,
    /** Cluster mode: partitions as posted, unmasked. */
    private readonly cluster = false,
  ) {}

  /** Cluster mode: the live brokers after an UpdateMetadata. */
  setBrokers(list: readonly { id: number; host: string; port: number }[]): void {
    this.live = list.map((b) => ({ id: b.id, host: b.host, port: b.port, rack: null }));
  }

  /** Adds or replaces topics (their partitions masked to this shard's), then tells the listeners. */
  apply(topics: readonly TopicInfo[]): void {
    for (const t of topics) {
      const old = this.byName.get(t.name);
      if (old) this.byId.delete(old.topicId);
      const mine: TopicInfo = this.cluster
        ? t
        : {
            ...t,
            partitions: t.partitions.map((p) =>
              shardOf(t.name, p.partition, this.shards) === this.index
                ? { ...p, leader: this.brokerId, replicas: [this.brokerId], isr: [this.brokerId] }
                : { ...p, leader: -1 },
            ),
          };
      this.byName.set(t.name, mine);
      this.byId.set(t.topicId, mine);
    }
    for (const t of topics) for (const l of this.listeners) l(t.name);
  }

  remove(name: string): void {
    const old = this.byName.get(name);
    if (!old) return;
    this.byName.delete(name);
    this.byId.delete(old.topicId);
    for (const l of this.listeners) l(name);
  }

  controllerId(): number {
    return this.brokerId;
  }
  /** This broker alone (embedded mode), or the live brokers (cluster mode): DeleteRecords counts the live replicas from it. */
  brokers(): BrokerInfo[] {
    return this.live ?? [{ id: this.brokerId, host: '', port: 0, rack: null }];
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
  close(): Promise<void> {
    return Promise.resolve();
  }
  createTopic(_spec: NewTopic): Promise<TopicInfo> {
    return readOnly();
  }
  createTopics(_specs: readonly NewTopic[]): Promise<(TopicInfo | Error)[]> {
    return readOnly();
  }
  deleteTopic(_name: string): Promise<void> {
    return readOnly();
  }
  createPartitions(_name: string, _totalCount: number): Promise<TopicInfo> {
    return readOnly();
  }
  truncatePartitions(_name: string, _count: number): Promise<TopicInfo> {
    return readOnly();
  }
  setTopicConfigs(_name: string, _configs: Record<string, string>): Promise<void> {
    return readOnly();
  }
}

function readOnly(): Promise<never> {
  return Promise.reject(new Error("a shard's metadata mirror is read-only: the main thread changes metadata"));
}
