/**
 * kafka-topics.sh --zookeeper: the ZooKeeper mode of Kafka 1.x's TopicCommand (the seed's era),
 * with its output: `Created topic "bigdata".`, `Topic:t\tPartitionCount:2\t...` then one line per
 * partition from its state znode, deletion by marker, partition addition.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { KafkaZkClient } from '../../metadata/zk/kafka-zk-client.js';
import { validateTopicConfigs } from '../../config/topic-configs.js';
import { INTERNAL_TOPICS, addPartitionsZk, createTopicZk, openZk } from './zk-admin.js';
import { topicFilter } from './topic-filter.js';
import { CliError, requireOption } from './tool.js';

export interface ZkTopicOpts {
  zookeeper: string;
  props: Map<string, string>;
  action: 'create' | 'list' | 'describe' | 'delete' | 'alter';
  topic?: string;
  partitions?: number;
  replicationFactor?: number;
  replicaAssignment?: number[][];
  configs: Map<string, string>;
  deleteConfig?: string[];
  ifExists?: boolean;
  ifNotExists?: boolean;
  topicsWithOverrides?: boolean;
  underReplicatedPartitions?: boolean;
  unavailablePartitions?: boolean;
  excludeInternal?: boolean;
  disableRackAware?: boolean;
}

export async function topicsWithZk(o: ZkTopicOpts): Promise<number> {
  const zk = await openZk(o.zookeeper, o.props);
  switch (o.action) {
    case 'create':
      return create(zk, o);
    case 'list':
      return list(zk, o);
    case 'describe':
      return describe(zk, o);
    case 'delete':
      return remove(zk, o);
    case 'alter':
      return alter(zk, o);
  }
}

async function create(zk: KafkaZkClient, o: ZkTopicOpts): Promise<number> {
  const topic = requireOption(o.topic, '--topic');
  if (o.replicaAssignment && (o.partitions !== undefined || o.replicationFactor !== undefined)) {
    throw new CliError('--replica-assignment cannot be combined with --partitions or --replication-factor');
  }
  if (/[._]/.test(topic)) {
    console.log(
      "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.",
    );
  }
  try {
    await createTopicZk(zk, {
      topic,
      partitions: o.partitions,
      replicationFactor: o.replicationFactor,
      replicaAssignment: o.replicaAssignment,
      configs: Object.fromEntries(o.configs),
      rackAware: o.disableRackAware ? 'disabled' : 'enforced',
    });
  } catch (err) {
    if (err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS && o.ifNotExists) return 0;
    throw err;
  }
  console.log(`Created topic "${topic}".`);
  return 0;
}

/** The topics --topic selects, sorted; "does not exist" when it names none (unless --if-exists). */
async function matching(zk: KafkaZkClient, o: ZkTopicOpts): Promise<string[]> {
  const names = (await zk.getAllTopics()).filter(topicFilter(o.topic)).filter((t) => !(o.excludeInternal && INTERNAL_TOPICS.has(t)));
  if (names.length === 0 && o.topic !== undefined && !o.ifExists) throw new CliError(`Topic '${o.topic}' does not exist as expected`);
  return names;
}

async function list(zk: KafkaZkClient, o: ZkTopicOpts): Promise<number> {
  const marked = new Set(await zk.getTopicDeletions());
  for (const t of await matching(zk, { ...o, ifExists: true })) console.log(marked.has(t) ? `${t} - marked for deletion` : t);
  return 0;
}

async function describe(zk: KafkaZkClient, o: ZkTopicOpts): Promise<number> {
  const topics = await matching(zk, o);
  const live = new Set(await zk.getBrokerIds());
  const marked = new Set(await zk.getTopicDeletions());
  const describeConfigs = !o.underReplicatedPartitions && !o.unavailablePartitions;
  for (const topic of topics) {
    const a = await zk.getTopicAssignment(topic);
    if (!a) {
      console.log(`Topic ${topic} doesn't exist!`); // deleted while we looked
      continue;
    }
    if (describeConfigs) {
      const configs = Object.entries(await zk.getEntityConfigs('topics', topic));
      if (!o.topicsWithOverrides || configs.length > 0) {
        const rf = a.partitions.get(0)?.length ?? 0;
        const deletion = marked.has(topic) ? '\tMarkedForDeletion:true' : '';
        console.log(
          `Topic:${topic}\tPartitionCount:${a.partitions.size}\tReplicationFactor:${rf}\tConfigs:${configs.map(([k, v]) => `${k}=${v}`).join(',')}${deletion}`,
        );
      }
    }
    if (o.topicsWithOverrides) continue;
    const states = await zk.getPartitionStates(topic, [...a.partitions.keys()]);
    for (const [p, replicas] of a.partitions) {
      const state = states.get(p)?.state;
      const isr = state?.isr ?? [];
      const leader = state?.leader; // -1 (no leader) is printed as such, as Kafka's tool did
      const show =
        describeConfigs ||
        (o.underReplicatedPartitions && isr.length < replicas.length) ||
        (o.unavailablePartitions && (leader === undefined || !live.has(leader)));
      if (!show) continue;
      const deletion = marked.has(topic) && !describeConfigs ? '\tMarkedForDeletion: true' : '';
      console.log(`\tTopic: ${topic}\tPartition: ${p}\tLeader: ${leader ?? 'none'}\tReplicas: ${replicas.join(',')}\tIsr: ${isr.join(',')}${deletion}`);
    }
  }
  return 0;
}

async function remove(zk: KafkaZkClient, o: ZkTopicOpts): Promise<number> {
  requireOption(o.topic, '--topic');
  const marked = new Set(await zk.getTopicDeletions());
  for (const topic of await matching(zk, o)) {
    if (INTERNAL_TOPICS.has(topic)) throw new CliError(`Topic ${topic} is a kafka internal topic and is not allowed to be marked for deletion.`);
    if (marked.has(topic)) {
      console.log(`Topic ${topic} is already marked for deletion.`);
      continue;
    }
    await zk.markTopicForDeletion(topic);
    console.log(`Topic ${topic} is marked for deletion.`);
    console.log('Note: This will have no impact if delete.topic.enable is not set to true.');
  }
  return 0;
}

async function alter(zk: KafkaZkClient, o: ZkTopicOpts): Promise<number> {
  requireOption(o.topic, '--topic');
  if (o.partitions === undefined && o.configs.size === 0 && !o.deleteConfig?.length)
    throw new CliError('--alter needs --partitions, --config or --delete-config');
  for (const topic of await matching(zk, o)) {
    if (o.configs.size > 0 || o.deleteConfig?.length) {
      console.log('WARNING: Altering topic configuration from this script has been deprecated and may be removed in future releases.');
      console.log('         Going forward, please use kafka-configs.sh for this functionality');
      const configs = { ...(await zk.getEntityConfigs('topics', topic)), ...Object.fromEntries(o.configs) };
      for (const k of o.deleteConfig ?? []) delete configs[k];
      validateTopicConfigs(configs);
      await zk.setEntityConfigs('topics', topic, configs);
      console.log(`Updated config for topic "${topic}".`);
    }
    if (o.partitions !== undefined) {
      if (topic === '__consumer_offsets') throw new CliError('The number of partitions for the offsets topic cannot be changed.');
      console.log('WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected');
      await addPartitionsZk(zk, topic, o.partitions, o.replicaAssignment);
      console.log('Adding partitions succeeded!');
    }
  }
  return 0;
}
