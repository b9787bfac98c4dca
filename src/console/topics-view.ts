/**
 * The topics pages: the list (search and paging on the server, so a cluster of many topics
 * sends one page), a topic's partitions a page at a time (leader, replicas, ISR, earliest and
 * latest offsets and size, asked only for the page's partitions), its configs, and the changes:
 * create, delete, add partitions, alter configs. A broker's refusal keeps the broker's message.
 */
import type { Admin } from '../client/index.js';
import { ConfigResourceType, EARLIEST_TIMESTAMP, type KafkaError, LATEST_TIMESTAMP } from '../client/index.js';
import { badRequest, notFound } from './console-error.js';

export const MAX_PAGE_SIZE = 500;

export interface Page {
  page: number;
  size: number;
}

export interface TopicRow {
  name: string;
  internal: boolean;
  partitions: number;
  replicationFactor: number;
  underReplicated: number;
}

export async function listTopics(admin: Admin, search: string, page: Page): Promise<{ total: number; page: number; size: number; topics: TopicRow[] }> {
  const md = await admin.cluster.refreshMetadata(null);
  const needle = search.toLowerCase();
  const names = [...md.topics.keys()].filter((n) => n.toLowerCase().includes(needle)).sort();
  const rows = names.slice(page.page * page.size, (page.page + 1) * page.size).map((name) => {
    const t = md.topics.get(name)!;
    return {
      name,
      internal: t.isInternal,
      partitions: t.partitions.length,
      replicationFactor: t.partitions[0]?.replicas.length ?? 0,
      underReplicated: t.partitions.filter((p) => p.isr.length < p.replicas.length).length,
    };
  });
  return { total: names.length, page: page.page, size: page.size, topics: rows };
}

export interface PartitionRow {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
  offline: number[];
  earliest: string;
  latest: string;
  /** Bytes on the leader's log dir; null when the broker did not say. */
  size: string | null;
}

export async function describeTopic(admin: Admin, name: string, page: Page) {
  const md = await admin.cluster.refreshMetadata([name]);
  const t = md.topics.get(name);
  if (!t || t.errorCode !== 0) throw notFound(`topic ${name} does not exist`);
  const all = [...t.partitions].sort((a, b) => a.partition - b.partition);
  const shown = all.slice(page.page * page.size, (page.page + 1) * page.size);
  const live = shown.filter((p) => p.leader >= 0);
  // Earliest and latest in two requests: ListOffsets answers a partition once per request.
  const ask = (timestamp: bigint) =>
    live.length > 0 ? admin.listOffsets(live.map((p) => ({ topic: name, partition: p.partition, timestamp }))).catch(() => []) : [];
  const [earliest, latest] = await Promise.all([ask(EARLIEST_TIMESTAMP), ask(LATEST_TIMESTAMP)]);
  const range = new Map(live.map((p, i) => [p.partition, [earliest[i]?.offset, latest[i]?.offset] as const]));
  const sizes = new Map<number, bigint>();
  const leaders = [...new Set(live.map((p) => p.leader))];
  if (leaders.length > 0) {
    // Only the page's partitions: a topic of 10,000 would otherwise send every size each time.
    const dirs = await admin.describeLogDirs(leaders, [{ topic: name, partitions: live.map((p) => p.partition) }]).catch(() => []);
    const leaderOf = new Map(live.map((p) => [p.partition, p.leader]));
    for (const d of dirs) for (const p of d.partitions) if (!p.isFuture && leaderOf.get(p.partition) === d.broker) sizes.set(p.partition, p.size);
  }
  const partitions: PartitionRow[] = shown.map((p) => ({
    partition: p.partition,
    leader: p.leader,
    replicas: p.replicas,
    isr: p.isr,
    offline: p.offlineReplicas,
    earliest: String(range.get(p.partition)?.[0] ?? ''),
    latest: String(range.get(p.partition)?.[1] ?? ''),
    size: sizes.has(p.partition) ? String(sizes.get(p.partition)) : null,
  }));
  return { name, topicId: t.topicId, internal: t.isInternal, partitionCount: all.length, page: page.page, size: page.size, partitions };
}

export async function topicConfigs(admin: Admin, name: string) {
  await ensureTopic(admin, name);
  const entries = await admin.describeConfigs(ConfigResourceType.Topic, name);
  return entries.map((e) => ({ name: e.name, value: e.isSensitive ? null : e.value, isDefault: e.isDefault, readOnly: e.readOnly, sensitive: e.isSensitive }));
}

async function ensureTopic(admin: Admin, name: string): Promise<void> {
  const t = (await admin.cluster.refreshMetadata([name])).topics.get(name);
  if (!t || t.errorCode !== 0) throw notFound(`topic ${name} does not exist`);
}

function throwFirst(results: Map<string, KafkaError | null>): void {
  for (const err of results.values()) if (err) throw err;
}

export interface CreateTopicRequest {
  name: string;
  partitions?: number;
  replicationFactor?: number;
  configs?: Record<string, string>;
}

export async function createTopic(admin: Admin, r: CreateTopicRequest): Promise<void> {
  if (typeof r.name !== 'string' || r.name === '') throw badRequest('a topic needs a name');
  throwFirst(
    await admin.createTopics([{ name: r.name, numPartitions: r.partitions ?? -1, replicationFactor: r.replicationFactor ?? -1, configs: r.configs ?? {} }]),
  );
}

export async function deleteTopic(admin: Admin, name: string): Promise<void> {
  throwFirst(await admin.deleteTopics([name]));
}

export async function addPartitions(admin: Admin, name: string, count: number): Promise<void> {
  if (!Number.isInteger(count) || count < 1) throw badRequest('the new partition count must be a positive integer');
  await ensureTopic(admin, name);
  throwFirst(await admin.createPartitions([{ name, count }]));
}

/** Incremental changes: keys to set, keys to put back to their default. */
export async function alterTopicConfigs(admin: Admin, name: string, change: { set?: Record<string, string>; delete?: string[] }): Promise<void> {
  await ensureTopic(admin, name);
  const ops = [
    ...Object.entries(change.set ?? {}).map(([key, value]) => ({ name: key, op: 'set' as const, value: String(value) })),
    ...(change.delete ?? []).map((key) => ({ name: key, op: 'delete' as const })),
  ];
  if (ops.length === 0) throw badRequest('no config change given');
  await admin.alterConfigs(ConfigResourceType.Topic, name, ops);
}
