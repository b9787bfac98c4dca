/**
 * The admin client: topics, partitions, configs, records, log dirs and the cluster; the group
 * operations live in admin-groups.ts and are exposed here too. Topic-level failures are thrown
 * as KafkaError with Kafka's code and the broker's message.
 */
import { Api } from './apis.js';
import { Cluster, type BrokerNode, type ClientOptions, type TopicMetadata } from './cluster.js';
import { KafkaError, throwIfError } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';
import { listOffsets, type OffsetAnswer, type OffsetQuery } from './list-offsets.js';
import * as groups from './admin-groups.js';
import * as txns from './admin-transactions.js';
import * as acls from './admin-acls.js';
import type { AclBinding, AclBindingFilter } from '../security/authorizer/acl-model.js';
import * as quotas from './admin-quotas.js';
import * as topicPartitions from './admin-topic-partitions.js';
import { startClientTelemetry, type ClientTelemetry } from './telemetry/client-telemetry.js';

export type { OffsetAnswer, OffsetQuery, TopicMetadata, BrokerNode };
export type { GroupListing, GroupDescription, GroupMemberDescription, ListGroupsOptions } from './admin-groups.js';
export type { ProducerStateDescription, AbortTransactionSpec } from './admin-transactions.js';
export type { TopicPartitionsDescription, TopicPartitionDescription } from './admin-topic-partitions.js';
export type { QuotaEntityComponent, QuotaFilterComponent, ClientQuotaEntry, ClientQuotaAlteration } from './admin-quotas.js';

export interface NewTopic {
  name: string;
  /** -1 = broker default (num.partitions). */
  numPartitions?: number;
  /** -1 = broker default (default.replication.factor). */
  replicationFactor?: number;
  /** partition → broker ids; replaces numPartitions/replicationFactor. */
  replicaAssignment?: number[][];
  configs?: Record<string, string>;
}

export enum ConfigResourceType {
  Topic = 2,
  Broker = 4,
  BrokerLogger = 8,
  /** KIP-714 client metrics subscriptions (kafka-client-metrics.sh). */
  ClientMetrics = 16,
  /** Kafka 4's per-group configs (kafka-configs.sh --entity-type groups). */
  Group = 32,
}

export interface ConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  isDefault: boolean;
  source: number;
  isSensitive: boolean;
  synonyms: { name: string; value: string | null; source: number }[];
}

export type ConfigOp = { name: string; op: 'set'; value: string } | { name: string; op: 'delete' | 'append' | 'subtract'; value?: string };

const CONFIG_OP = { set: 0, delete: 1, append: 2, subtract: 3 } as const;

export interface LogDirDescription {
  broker: number;
  logDir: string;
  errorCode: number;
  totalBytes: bigint;
  usableBytes: bigint;
  partitions: { topic: string; partition: number; size: bigint; offsetLag: bigint; isFuture: boolean }[];
}

export class Admin {
  readonly cluster: Cluster;
  /** KIP-714 telemetry (null with enable.metrics.push=false). */
  readonly telemetry: ClientTelemetry | null;

  constructor(options: ClientOptions) {
    this.cluster = new Cluster(options);
    this.telemetry = startClientTelemetry('admin', this.cluster, options);
  }

  async close(): Promise<void> {
    await this.telemetry?.close();
    await this.cluster.close();
  }

  /** Names of the client-metrics subscriptions (KIP-714's ListClientMetricsResources). */
  async listClientMetricsResources(): Promise<string[]> {
    const resp = await (await this.cluster.anyConnection()).send(Api.ListClientMetricsResources, {});
    if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, 'ListClientMetricsResources failed');
    return resp.clientMetricsResources.map((r) => r.name);
  }

  /** Lists topic names (internal ones too unless `excludeInternal`). */
  async listTopics(opts: { excludeInternal?: boolean } = {}): Promise<string[]> {
    const md = await this.cluster.refreshMetadata(null);
    return [...md.topics.values()]
      .filter((t) => !(opts.excludeInternal && t.isInternal))
      .map((t) => t.name)
      .sort();
  }

  /** Metadata of the named topics (all when omitted); unknown names throw. */
  async describeTopics(names?: readonly string[]): Promise<TopicMetadata[]> {
    const md = await this.cluster.refreshMetadata(names ?? null);
    const list = names ? names.map((n) => md.topics.get(n)) : [...md.topics.values()];
    return list
      .map((t, i) => {
        if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${names![i]} does not exist`);
        throwIfError(t.errorCode, `topic ${t.name}`);
        return t;
      })
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** The named topics by DescribeTopicPartitions, paged (KIP-966); unknown names throw. */
  describeTopicPartitions(
    names: readonly string[],
    opts: { partitionSizeLimitPerResponse?: number } = {},
  ): Promise<topicPartitions.TopicPartitionsDescription[]> {
    return topicPartitions.describeTopicPartitions(this.cluster, names, opts.partitionSizeLimitPerResponse);
  }

  /** Whether the brokers serve DescribeTopicPartitions (Kafka 3.8+; the admin falls back to Metadata otherwise). */
  servesDescribeTopicPartitions(): Promise<boolean> {
    return topicPartitions.servesDescribeTopicPartitions(this.cluster);
  }

  async describeCluster(): Promise<{ clusterId: string | null; controllerId: number; brokers: BrokerNode[] }> {
    const md = await this.cluster.refreshMetadata([]);
    return { clusterId: md.clusterId, controllerId: md.controllerId, brokers: [...md.brokers.values()].sort((a, b) => a.nodeId - b.nodeId) };
  }

  /** Each broker's ApiVersions ranges, asked on a connection to that broker. */
  async brokerApiVersions(): Promise<{ node: BrokerNode; versions: ReadonlyMap<number, { min: number; max: number }> }[]> {
    const { brokers } = await this.describeCluster();
    const out: { node: BrokerNode; versions: ReadonlyMap<number, { min: number; max: number }> }[] = [];
    for (const node of brokers) out.push({ node, versions: (await this.cluster.brokerConnection(node.nodeId)).brokerApiVersions });
    return out;
  }

  /** Creates topics; resolves per topic with the error (null = created). */
  async createTopics(topics: readonly NewTopic[], opts: { validateOnly?: boolean; timeoutMs?: number } = {}): Promise<Map<string, KafkaError | null>> {
    const conn = await this.cluster.controllerConnection();
    const resp = await conn.send(Api.CreateTopics, {
      topics: topics.map((t) => ({
        name: t.name,
        numPartitions: t.replicaAssignment ? -1 : (t.numPartitions ?? -1),
        replicationFactor: t.replicaAssignment ? -1 : (t.replicationFactor ?? -1),
        assignments: (t.replicaAssignment ?? []).map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })),
        configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
      })),
      timeoutMs: opts.timeoutMs ?? this.cluster.requestTimeoutMs,
      validateOnly: opts.validateOnly ?? false,
    });
    this.cluster.invalidate();
    return new Map(resp.topics.map((t) => [t.name, t.errorCode === 0 ? null : new KafkaError(t.errorCode, t.errorMessage ?? undefined)]));
  }

  async deleteTopics(names: readonly string[], opts: { timeoutMs?: number } = {}): Promise<Map<string, KafkaError | null>> {
    const conn = await this.cluster.controllerConnection();
    const resp = await conn.send(Api.DeleteTopics, {
      topicNames: [...names],
      topics: names.map((name) => ({ name })),
      timeoutMs: opts.timeoutMs ?? this.cluster.requestTimeoutMs,
    });
    this.cluster.invalidate();
    return new Map(resp.responses.map((t) => [t.name ?? '', t.errorCode === 0 ? null : new KafkaError(t.errorCode, t.errorMessage ?? undefined)]));
  }

  /** Raises topics' partition counts to `count` (optionally with replica assignments for the new ones). */
  async createPartitions(
    topics: readonly { name: string; count: number; assignments?: number[][] }[],
    opts: { validateOnly?: boolean } = {},
  ): Promise<Map<string, KafkaError | null>> {
    const conn = await this.cluster.controllerConnection();
    const resp = await conn.send(Api.CreatePartitions, {
      topics: topics.map((t) => ({ name: t.name, count: t.count, assignments: t.assignments ? t.assignments.map((brokerIds) => ({ brokerIds })) : null })),
      timeoutMs: this.cluster.requestTimeoutMs,
      validateOnly: opts.validateOnly ?? false,
    });
    this.cluster.invalidate();
    return new Map(resp.results.map((r) => [r.name, r.errorCode === 0 ? null : new KafkaError(r.errorCode, r.errorMessage ?? undefined)]));
  }

  /** Configs of one resource (topic name, or broker id as a string). */
  async describeConfigs(type: ConfigResourceType, name: string, keys: string[] | null = null): Promise<ConfigEntry[]> {
    const conn = type === ConfigResourceType.Broker && name !== '' ? await this.cluster.brokerConnection(Number(name)) : await this.cluster.anyConnection();
    const resp = await conn.send(Api.DescribeConfigs, {
      resources: [{ resourceType: type, resourceName: name, configurationKeys: keys }],
      includeSynonyms: true,
      includeDocumentation: false,
    });
    const r = resp.results[0];
    if (!r) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'empty DescribeConfigs answer');
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? undefined);
    return r.configs.map((c) => ({
      name: c.name,
      value: c.value,
      readOnly: c.readOnly,
      isDefault: c.isDefault || c.configSource === 5,
      source: c.configSource,
      isSensitive: c.isSensitive,
      synonyms: c.synonyms,
    }));
  }

  /** Client quotas matching the filter (KIP-546). */
  describeClientQuotas(components: readonly quotas.QuotaFilterComponent[], strict = false): Promise<quotas.ClientQuotaEntry[]> {
    return quotas.describeClientQuotas(this.cluster, components, strict);
  }

  /** Sets (or, with value null, removes) client quota keys of entities. */
  alterClientQuotas(entries: readonly quotas.ClientQuotaAlteration[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    return quotas.alterClientQuotas(this.cluster, entries, opts.validateOnly ?? false);
  }

  /** IncrementalAlterConfigs on one resource. */
  async alterConfigs(type: ConfigResourceType, name: string, ops: readonly ConfigOp[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    const conn = type === ConfigResourceType.Broker && name !== '' ? await this.cluster.brokerConnection(Number(name)) : await this.cluster.anyConnection();
    const resp = await conn.send(Api.IncrementalAlterConfigs, {
      resources: [
        { resourceType: type, resourceName: name, configs: ops.map((o) => ({ name: o.name, configOperation: CONFIG_OP[o.op], value: o.value ?? null })) },
      ],
      validateOnly: opts.validateOnly ?? false,
    });
    for (const r of resp.responses) if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? undefined);
  }

  async listOffsets(queries: readonly OffsetQuery[], isolationLevel = 0): Promise<OffsetAnswer[]> {
    return listOffsets(this.cluster, queries, isolationLevel);
  }

  /** Deletes records before `offset` (-1 = high watermark); returns the new low watermarks. */
  async deleteRecords(
    entries: readonly { topic: string; partition: number; offset: bigint }[],
  ): Promise<{ topic: string; partition: number; lowWatermark: bigint; error: KafkaError | null }[]> {
    await this.cluster.topicsMetadata([...new Set(entries.map((e) => e.topic))]);
    const byLeader = new Map<number, (typeof entries)[number][]>();
    for (const e of entries) {
      const leader = this.cluster.leaderFor(e.topic, e.partition);
      if (leader < 0) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${e.topic}-${e.partition} does not exist`);
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), e]);
    }
    const out: { topic: string; partition: number; lowWatermark: bigint; error: KafkaError | null }[] = [];
    for (const [leader, list] of byLeader) {
      const conn = await this.cluster.brokerConnection(leader);
      const topics = new Map<string, { partitionIndex: number; offset: bigint }[]>();
      for (const e of list) topics.set(e.topic, [...(topics.get(e.topic) ?? []), { partitionIndex: e.partition, offset: e.offset }]);
      const resp = await conn.send(Api.DeleteRecords, {
        topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
        timeoutMs: this.cluster.requestTimeoutMs,
      });
      for (const t of resp.topics) {
        for (const p of t.partitions) {
          out.push({ topic: t.name, partition: p.partitionIndex, lowWatermark: p.lowWatermark, error: p.errorCode === 0 ? null : new KafkaError(p.errorCode) });
        }
      }
    }
    return out;
  }

  /**
   * Log dirs of every broker (or the given ones), optionally only for some topics, or only some
   * partitions of a topic ({topic, partitions}: what a page of a wide topic needs, not all of it).
   */
  async describeLogDirs(
    brokerIds?: readonly number[],
    topics?: readonly (string | { topic: string; partitions: readonly number[] })[],
  ): Promise<LogDirDescription[]> {
    const whole = topics?.filter((t) => typeof t === 'string');
    const md = brokerIds && whole?.length === 0 ? undefined : await this.cluster.refreshMetadata(whole ?? null);
    const ids = brokerIds ?? [...md!.brokers.keys()];
    const filter = topics
      ? topics.map((t) =>
          typeof t === 'string'
            ? { topic: t, partitions: (md!.topics.get(t)?.partitions ?? []).map((p) => p.partition) }
            : { topic: t.topic, partitions: [...t.partitions] },
        )
      : null;
    const out: LogDirDescription[] = [];
    for (const id of ids) {
      const conn = await this.cluster.brokerConnection(id);
      const resp = await conn.send(Api.DescribeLogDirs, { topics: filter });
      if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, `describing log dirs of broker ${id} failed`);
      for (const r of resp.results) {
        out.push({
          broker: id,
          logDir: r.logDir,
          errorCode: r.errorCode,
          totalBytes: r.totalBytes,
          usableBytes: r.usableBytes,
          partitions: r.topics.flatMap((t) =>
            t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, size: p.partitionSize, offsetLag: p.offsetLag, isFuture: p.isFutureKey })),
          ),
        });
      }
    }
    return out;
  }

  /** CreateAcls: one result per binding (null = created). */
  createAcls(bindings: readonly AclBinding[]): Promise<(KafkaError | null)[]> {
    return acls.createAcls(this.cluster, bindings);
  }

  describeAcls(filter: AclBindingFilter): Promise<AclBinding[]> {
    return acls.describeAcls(this.cluster, filter);
  }

  deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclBinding[][]> {
    return acls.deleteAcls(this.cluster, filters);
  }

  /** Every broker's groups, optionally only those in the given states and of the given types (Classic, Consumer, Share). */
  listGroups(options?: groups.ListGroupsOptions): Promise<groups.GroupListing[]> {
    return groups.listGroups(this.cluster, options);
  }

  /** The producers a partition's leader (or `brokerId`) tracks (DescribeProducers). */
  describeProducers(topic: string, partition: number, brokerId?: number): Promise<txns.ProducerStateDescription[]> {
    return txns.describeProducers(this.cluster, topic, partition, brokerId);
  }

  /** Aborts a transaction left open on one partition by writing its abort marker. */
  abortTransaction(spec: txns.AbortTransactionSpec): Promise<void> {
    return txns.abortTransaction(this.cluster, spec);
  }

  /** The producers of many partitions, batched per broker (find-hanging). */
  describeProducersOf(partitions: readonly txns.PartitionRef[], brokerId?: number): Promise<Map<txns.PartitionRef, txns.ProducerStateDescription[]>> {
    return txns.describeProducersOf(this.cluster, partitions, brokerId);
  }

  /** ListTransactions on every broker, by broker id. */
  listTransactions(opts?: txns.ListTransactionsOptions): Promise<Map<number, txns.TransactionListing[]>> {
    return txns.listTransactions(this.cluster, opts);
  }

  /** DescribeTransactions at the transactional id's coordinator. */
  describeTransaction(transactionalId: string): Promise<txns.TransactionDescription> {
    return txns.describeTransaction(this.cluster, transactionalId);
  }

  describeGroups(ids: readonly string[]): Promise<groups.GroupDescription[]> {
    return groups.describeGroups(this.cluster, ids);
  }

  /** Groups of either protocol: ConsumerGroupDescribe, DescribeGroups for classic groups. */
  describeConsumerGroups(ids: readonly string[]): Promise<groups.GroupDescription[]> {
    return groups.describeConsumerGroups(this.cluster, ids);
  }

  deleteGroups(ids: readonly string[]): Promise<Map<string, KafkaError | null>> {
    return groups.deleteGroups(this.cluster, ids);
  }

  listGroupOffsets(groupId: string, partitions: readonly { topic: string; partition: number }[] | null = null) {
    return groups.listGroupOffsets(this.cluster, groupId, partitions);
  }

  alterGroupOffsets(groupId: string, offsets: readonly { topic: string; partition: number; offset: bigint }[]): Promise<void> {
    return groups.alterGroupOffsets(this.cluster, groupId, offsets);
  }

  deleteGroupOffsets(groupId: string, partitions: readonly { topic: string; partition: number }[]) {
    return groups.deleteGroupOffsets(this.cluster, groupId, partitions);
  }
}
