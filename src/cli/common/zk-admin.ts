/**
 * The `--zookeeper` tools' side of cluster mode: Kafka's AdminZkClient. The tools write
 * ZooKeeper directly, exactly as Kafka's did (the controller and brokers pick the changes up from
 * there): a topic is its config znode then its assignment znode, the assignment computed here
 * over the brokers registered in /brokers/ids; a deletion is a marker; configs are a znode plus
 * a change notification.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { randomUuid } from '../../protocol/primitives/index.js';
import { KafkaZkClient } from '../../metadata/zk/kafka-zk-client.js';
import { ZkSession, isZkError } from '../../metadata/zk/zk-session.js';
import { assignAddedPartitions, assignReplicas, type AssignableBroker, type RackAwareMode } from '../../metadata/replica-assignment.js';
import { collisionKey, topicNameError } from '../../metadata/topic-names.js';
import { validateTopicConfigs } from '../../config/topic-configs.js';
import { CliError, closeAtExit } from './tool.js';
import { ensureZooKeeperAnswers, zkUnreachableTimeoutMs } from './zk-reachable.js';

/** Kafka's tools used 30 s for both (TopicCommand, ConfigCommand); a --command-config file may override them. */
const DEFAULT_TIMEOUT_MS = 30_000;

function timeout(props: Map<string, string>, key: string): number {
  const v = props.get(key);
  if (v === undefined) return DEFAULT_TIMEOUT_MS;
  const n = Number(v.trim());
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`${key} must be a positive integer, got "${v}"`);
  return n;
}

/**
 * Connects to `host:port[,host:port][/chroot]`; the session is closed however the tool ends.
 * When no server answers at all, fails in a few seconds instead of the 30 s connection timeout.
 */
export async function openZk(connect: string, props: Map<string, string>): Promise<KafkaZkClient> {
  if (!/^[^/,\s]+:\d+(,[^/,\s]+:\d+)*(\/[^\s]*)?$/.test(connect)) {
    throw new CliError(`--zookeeper expects host:port[,host:port...][/chroot], got "${connect}"`);
  }
  await ensureZooKeeperAnswers(connect, zkUnreachableTimeoutMs(props), 'zookeeper.connection.timeout.ms');
  const session = await ZkSession.open({
    connect,
    sessionTimeoutMs: timeout(props, 'zookeeper.session.timeout.ms'),
    connectionTimeoutMs: timeout(props, 'zookeeper.connection.timeout.ms'),
  });
  closeAtExit(session);
  return new KafkaZkClient(session);
}

export const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state', '__consumer_offsets_history']);

export async function liveBrokers(zk: KafkaZkClient): Promise<AssignableBroker[]> {
  return (await zk.getAllBrokers()).map((b) => ({ id: b.id, rack: b.rack }));
}

export interface ZkTopicSpec {
  topic: string;
  partitions?: number;
  replicationFactor?: number;
  /** Manual assignment: replicas of partition 0, 1, ... */
  replicaAssignment?: number[][];
  configs: Record<string, string>;
  rackAware: RackAwareMode;
}

/** AdminZkClient.createTopic / createTopicWithAssignment with Kafka's validations and messages. */
export async function createTopicZk(zk: KafkaZkClient, spec: ZkTopicSpec): Promise<void> {
  const { topic } = spec;
  const nameError = topicNameError(topic);
  if (nameError) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
  const existing = await zk.getAllTopics();
  if (existing.includes(topic)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${topic}' already exists.`);
  const colliding = existing.filter((t) => t !== topic && collisionKey(t) === collisionKey(topic));
  if (colliding.length > 0) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${topic}' collides with existing topics: ${colliding.join(', ')}`);
  validateTopicConfigs(spec.configs);
  let assignment: Map<number, number[]>;
  if (spec.replicaAssignment) {
    const sizes = new Set(spec.replicaAssignment.map((r) => r.length));
    if (sizes.size !== 1) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'All partitions should have the same number of replicas');
    assignment = new Map(spec.replicaAssignment.map((r, p) => [p, r]));
  } else {
    if (spec.partitions === undefined) throw new CliError('Missing required argument "[partitions]"');
    if (spec.replicationFactor === undefined) throw new CliError('Missing required argument "[replication-factor]"');
    assignment = assignReplicas(await liveBrokers(zk), spec.partitions, spec.replicationFactor, { rackAware: spec.rackAware });
  }
  await zk.createTopic(topic, randomUuid(), assignment, spec.configs);
}

/**
 * AdminZkClient.addPartitions: the new partitions from a manual list (its entries past the
 * existing partitions) or continuing the assignment; one conditional write of the topic znode.
 */
export async function addPartitionsZk(zk: KafkaZkClient, topic: string, total: number, manual: number[][] | undefined): Promise<void> {
  const current = await zk.getTopicAssignment(topic);
  if (!current) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic ${topic} does not exist`);
  const brokers = await liveBrokers(zk);
  let added: Map<number, number[]>;
  if (manual) {
    if (total <= current.partitions.size) {
      throw new KafkaError(
        ErrorCode.INVALID_PARTITIONS,
        `The number of partitions for a topic can only be increased. Topic ${topic} currently has ${current.partitions.size} partitions, ${total} would not be an increase.`,
      );
    }
    const rf = current.partitions.get(0)?.length ?? 0;
    const live = new Set(brokers.map((b) => b.id));
    added = new Map(manual.slice(current.partitions.size, total).map((r, i) => [current.partitions.size + i, r]));
    if (added.size !== total - current.partitions.size) {
      throw new KafkaError(
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        `Increasing the number of partitions by ${total - current.partitions.size} but ${added.size} assignments provided.`,
      );
    }
    for (const [p, r] of added) {
      if (r.some((b) => !live.has(b))) {
        throw new KafkaError(
          ErrorCode.BROKER_NOT_AVAILABLE,
          `Some brokers specified for partition id ${p} are not available. Specified brokers: ${r.join(', ')}, available brokers: ${[...live].join(', ')}.`,
        );
      }
      if (r.length !== rf)
        throw new KafkaError(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `Inconsistent replication factor between partitions, partition 0 has ${rf} while partition ${p} has ${r.length}.`,
        );
    }
  } else {
    added = assignAddedPartitions(brokers, current.partitions, total, topic);
  }
  try {
    await zk.setTopicAssignment({ ...current, partitions: new Map([...current.partitions, ...added]) }, current.zkVersion);
  } catch (err) {
    if (isZkError(err, 'BAD_VERSION')) throw new CliError(`Topic ${topic} was changed by someone else meanwhile; try again`);
    throw err;
  }
}
