#!/usr/bin/env node
/**
 * kafka-topics.sh: create, list, describe, alter (partitions, configs) and delete topics, with
 * Kafka's flags and output (`Created topic X.`, the Topic/Partition describe layout). Like
 * Kafka, --topic is a regular expression for list/describe/alter/delete. --describe asks with
 * DescribeTopicPartitions (paged, --partition-size-limit-per-response) where the broker serves it,
 * as Kafka 4's tool, and with Metadata otherwise.
 */
import { Admin, ConfigResourceType, type TopicMetadata } from '../client/index.js';
import { collect, createProgram, parseArgs, requireOption, closeAtExit, runTool, CliError } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile, parseKeyValues } from './common/config.js';
import { topicsWithZk } from './common/topics-zk.js';
import { topicFilter } from './common/topic-filter.js';
import { listReassignments, type OngoingReassignment, type TopicPartition } from './common/reassign.js';

const TOOL = 'kafka-topics.sh';

interface Opts {
  bootstrapServer?: string;
  zookeeper?: string;
  disableRackAware?: boolean;
  commandConfig?: string;
  create?: boolean;
  list?: boolean;
  describe?: boolean;
  delete?: boolean;
  alter?: boolean;
  topic?: string;
  partitions?: string;
  replicationFactor?: string;
  replicaAssignment?: string;
  config?: string[];
  deleteConfig?: string[];
  ifExists?: boolean;
  ifNotExists?: boolean;
  topicsWithOverrides?: boolean;
  underReplicatedPartitions?: boolean;
  unavailablePartitions?: boolean;
  excludeInternal?: boolean;
  partitionSizeLimitPerResponse?: string;
}

/** "0:1,1:2" → [[0,1],[1,2]]: partitions separated by commas, replicas by colons. */
export function parseReplicaAssignment(s: string): number[][] {
  return s.split(',').map((part) => {
    const ids = part.split(':').map((x) => Number(x.trim()));
    if (ids.some((n) => !Number.isInteger(n) || n < 0)) throw new CliError(`invalid --replica-assignment "${s}" (expected e.g. 0:1,1:2)`);
    if (new Set(ids).size !== ids.length) throw new CliError(`--replica-assignment lists a broker twice for one partition: "${part}"`);
    return ids;
  });
}

function positiveInt(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${flag} must be a positive integer, got "${v}"`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Create, delete, describe, or change a topic.')
    .option('--bootstrap-server <server>', 'REQUIRED (or --zookeeper): the Kafka server to connect to, host:port[,host:port]')
    .option('--command-config <file>', 'property file with configs for the admin client')
    .option('--create', 'create a new topic')
    .option('--list', 'list all available topics')
    .option('--describe', 'list details for the given topics')
    .option('--delete', 'delete a topic')
    .option('--alter', 'alter the number of partitions and replica assignment')
    .option('--topic <topic>', 'the topic to create, alter, describe or delete (a regular expression except with --create)')
    .option('--partitions <n>', 'number of partitions of the topic being created or altered')
    .option('--replication-factor <n>', 'replication factor of each partition of the topic being created')
    .option('--replica-assignment <list>', 'manual partition-to-broker assignment, e.g. 0:1,1:2')
    .option('--config <name=value>', 'a topic configuration override (repeatable)', collect)
    .option('--delete-config <name>', 'a topic configuration override to remove, with --alter (repeatable)', collect)
    .option('--if-exists', 'only alter or delete the topic if it exists')
    .option('--if-not-exists', 'only create the topic if it does not exist')
    .option('--topics-with-overrides', 'with --describe, only show topics that have configuration overrides')
    .option('--under-replicated-partitions', 'with --describe, only show partitions whose ISR is smaller than the replica set')
    .option('--unavailable-partitions', 'with --describe, only show partitions without a leader')
    .option('--exclude-internal', 'exclude internal topics from --list and --describe')
    .option('--partition-size-limit-per-response <n>', 'the maximum partition size to be included in one DescribeTopicPartitions response')
    .option('--disable-rack-aware', 'with --zookeeper --create: assign replicas without rack information');
  const raw = parseArgs(program, argv, { allowZookeeper: true });
  if (raw === null) return 0;
  const o = raw as Opts;
  const actions = (['create', 'list', 'describe', 'delete', 'alter'] as const).filter((a) => o[a]);
  if (actions.length !== 1) throw new CliError('exactly one of --create, --list, --describe, --delete or --alter must be given (see --help)');
  if (o.zookeeper !== undefined) {
    if (o.bootstrapServer !== undefined) throw new CliError('Only one of --bootstrap-server or --zookeeper must be specified');
    // Kafka's tool parses every argument before it connects: bad input fails without a connection.
    return topicsWithZk({
      ...o,
      zookeeper: o.zookeeper,
      props: loadPropertiesFile(o.commandConfig),
      action: actions[0]!,
      partitions: positiveInt(o.partitions, '--partitions'),
      replicationFactor: positiveInt(o.replicationFactor, '--replication-factor'),
      replicaAssignment: o.replicaAssignment ? parseReplicaAssignment(o.replicaAssignment) : undefined,
      configs: parseKeyValues(o.config, '--config'),
    });
  }
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), requireOption(o.bootstrapServer, '--bootstrap-server'))));
  try {
    switch (actions[0]) {
      case 'create':
        return await create(admin, o);
      case 'list':
        for (const name of (await admin.listTopics({ excludeInternal: o.excludeInternal })).filter(topicFilter(o.topic))) console.log(name);
        return 0;
      case 'describe':
        return await describe(admin, o);
      case 'delete':
        return await remove(admin, o);
      case 'alter':
        return await alter(admin, o);
    }
  } finally {
    await admin.close();
  }
  return 0;
}

async function create(admin: Admin, o: Opts): Promise<number> {
  const topic = requireOption(o.topic, '--topic');
  const assignment = o.replicaAssignment ? parseReplicaAssignment(o.replicaAssignment) : undefined;
  if (assignment && (o.partitions || o.replicationFactor))
    throw new CliError('--replica-assignment cannot be combined with --partitions or --replication-factor');
  const configs = Object.fromEntries(parseKeyValues(o.config, '--config'));
  if (/[._]/.test(topic)) {
    console.log(
      "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.",
    );
  }
  const result = await admin.createTopics([
    {
      name: topic,
      numPartitions: positiveInt(o.partitions, '--partitions'),
      replicationFactor: positiveInt(o.replicationFactor, '--replication-factor'),
      replicaAssignment: assignment,
      configs,
    },
  ]);
  const err = result.get(topic);
  if (err) {
    if (err.code === 36 && o.ifNotExists) return 0;
    if (err.code === 36) throw new CliError(`Topic '${topic}' already exists.`);
    throw err;
  }
  console.log(`Created topic ${topic}.`);
  return 0;
}

async function matchingTopics(admin: Admin, o: Opts, action: string): Promise<string[]> {
  const names = (await admin.listTopics({ excludeInternal: o.excludeInternal })).filter(topicFilter(o.topic));
  if (names.length === 0 && o.topic !== undefined && !o.ifExists) {
    throw new CliError(`Topic '${o.topic}' does not exist as expected${action ? ` (nothing to ${action})` : ''}`);
  }
  return names;
}

async function describe(admin: Admin, o: Opts): Promise<number> {
  const limit = positiveInt(o.partitionSizeLimitPerResponse, '--partition-size-limit-per-response');
  const names = await matchingTopics(admin, o, '');
  if (names.length === 0) return 0;
  // Kafka 4's tool: DescribeTopicPartitions, paged, where the broker serves it; Metadata before.
  const topics: TopicMetadata[] = (await admin.servesDescribeTopicPartitions())
    ? await admin.describeTopicPartitions(names, { partitionSizeLimitPerResponse: limit })
    : await admin.describeTopics(names);
  const moving = await reassignmentsIfSupported(
    admin,
    topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition }))),
  );
  const partitionFilter = o.underReplicatedPartitions || o.unavailablePartitions;
  for (const t of topics) {
    const overrides = await topicOverrides(admin, t.name);
    if (o.topicsWithOverrides && overrides.length === 0) continue;
    if (!partitionFilter) console.log(topicLine(t, overrides, moving));
    if (o.topicsWithOverrides) continue;
    for (const p of t.partitions) {
      const r = moving.get(`${t.name}-${p.partition}`);
      if (o.underReplicatedPartitions && p.isr.length >= replicationFactor(p.replicas, r)) continue;
      if (o.unavailablePartitions && p.leader >= 0) continue;
      const offline = p.offlineReplicas.length > 0 ? `\tOffline: ${p.offlineReplicas.join(',')}` : '';
      const reassigning = r ? `\tAdding Replicas: ${r.adding.join(',')}\tRemoving Replicas: ${r.removing.join(',')}` : '';
      console.log(
        `\tTopic: ${t.name}\tPartition: ${p.partition}\tLeader: ${p.leader >= 0 ? p.leader : 'none'}\tReplicas: ${p.replicas.join(',')}\tIsr: ${p.isr.join(',')}${offline}${reassigning}`,
      );
    }
  }
  return 0;
}

/**
 * Kafka 3.x's getReplicationFactor: while a partition is being reassigned (its adding or removing
 * replicas still listed), the replication factor is the original replicas', so a partition in
 * the middle of a move is not reported under-replicated.
 */
function replicationFactor(replicas: readonly number[], r: OngoingReassignment | undefined): number {
  if (r && replicas.some((b) => r.adding.includes(b) || r.removing.includes(b))) return r.replicas.filter((b) => !r.adding.includes(b)).length;
  return replicas.length;
}

/** Reassignments in progress (cluster mode: ListPartitionReassignments); none when the broker cannot say. */
async function reassignmentsIfSupported(admin: Admin, partitions: TopicPartition[]): Promise<Map<string, OngoingReassignment>> {
  try {
    const conn = await admin.cluster.controllerConnection();
    if (partitions.length === 0 || !conn.brokerApiVersions.has(46)) return new Map();
    return new Map((await listReassignments(admin, partitions)).map((r) => [`${r.topic}-${r.partition}`, r]));
  } catch {
    return new Map();
  }
}

function topicLine(t: TopicMetadata, overrides: string[], moving: Map<string, OngoingReassignment>): string {
  const p0 = t.partitions[0];
  const rf = p0 ? replicationFactor(p0.replicas, moving.get(`${t.name}-${p0.partition}`)) : 0;
  return `Topic: ${t.name}\tTopicId: ${t.topicId}\tPartitionCount: ${t.partitions.length}\tReplicationFactor: ${rf}\tConfigs: ${overrides.join(',')}`;
}

/** Non-default configs, as Kafka's describe shows them; empty when the broker cannot say. */
async function topicOverrides(admin: Admin, topic: string): Promise<string[]> {
  try {
    const entries = await admin.describeConfigs(ConfigResourceType.Topic, topic);
    return entries.filter((e) => !e.isDefault && e.value !== null).map((e) => `${e.name}=${e.isSensitive ? '******' : e.value}`);
  } catch {
    return [];
  }
}

async function remove(admin: Admin, o: Opts): Promise<number> {
  requireOption(o.topic, '--topic');
  const names = await matchingTopics(admin, o, 'delete');
  if (names.length === 0) return 0;
  const result = await admin.deleteTopics(names);
  for (const [, err] of result) if (err) throw err;
  return 0;
}

async function alter(admin: Admin, o: Opts): Promise<number> {
  requireOption(o.topic, '--topic');
  const names = await matchingTopics(admin, o, 'alter');
  if (names.length === 0) return 0;
  const count = positiveInt(o.partitions, '--partitions');
  const assignment = o.replicaAssignment ? parseReplicaAssignment(o.replicaAssignment) : undefined;
  const configs = parseKeyValues(o.config, '--config');
  if (count === undefined && configs.size === 0 && !o.deleteConfig?.length) throw new CliError('--alter needs --partitions, --config or --delete-config');
  if (count !== undefined) {
    const current = await admin.describeTopics(names);
    const requests = current.map((t) => {
      if (count < t.partitions.length) throw new CliError(`The number of partitions for topic ${t.name} can only be increased (it has ${t.partitions.length})`);
      return { name: t.name, count, assignments: assignment ? assignment.slice(t.partitions.length) : undefined };
    });
    const result = await admin.createPartitions(requests.filter((r, i) => r.count !== current[i]!.partitions.length));
    for (const [, err] of result) if (err) throw err;
  }
  if (configs.size > 0 || o.deleteConfig?.length) {
    for (const name of names) {
      await admin.alterConfigs(ConfigResourceType.Topic, name, [
        ...[...configs].map(([k, v]) => ({ name: k, op: 'set' as const, value: v })),
        ...(o.deleteConfig ?? []).map((k) => ({ name: k, op: 'delete' as const })),
      ]);
    }
  }
  return 0;
}

runTool(TOOL, main);
