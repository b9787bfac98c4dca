#!/usr/bin/env node
/**
 * kafka-preferred-replica-election.sh (Kafka 2.x's PreferredReplicaLeaderElectionCommand, removed
 * in Kafka 3.0 in favour of kafka-leader-election.sh, still typed): moves the leadership of every
 * partition (or those of --path-to-json-file, `{"partitions":[{"topic":"t","partition":0}]}`)
 * back to its preferred replica, the first of its replicas.
 *
 *   --bootstrap-server: ElectLeaders (PREFERRED) through the controller, as
 *     kafka-leader-election.sh; prints Kafka's AdminClient lines ("Successfully completed
 *     preferred replica election for partitions t-0, t-1"), exit 1 when some partition failed.
 *   --zookeeper: writes the `/admin/preferred_replica_election` znode the controller watches and
 *     returns at once ("Successfully started preferred replica election for partitions Set(t-0)"),
 *     skipping the partitions ZooKeeper does not know, as Kafka's tool did.
 */
import { Admin } from '../client/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { isZkError } from '../metadata/zk/zk-session.js';
import type { KafkaZkClient } from '../metadata/zk/kafka-zk-client.js';
import { CliError, closeAtExit, createProgram, parseArgs, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';
import { javaExceptionName } from './common/java-names.js';
import { compareTopicPartitions, electLeaders, parseElectionJson, readJsonFile, tpString, type TopicPartition } from './common/reassign.js';
import { openZk } from './common/zk-admin.js';

const TOOL = 'kafka-preferred-replica-election.sh';
const ELECTION_NOT_NEEDED = 84;
const PREFERRED_LEADER_NOT_AVAILABLE = 80;

interface Opts {
  bootstrapServer?: string;
  zookeeper?: string;
  'admin.config'?: string;
  pathToJsonFile?: string;
}

/** Scala's Set(...) of TopicPartitions, as Kafka's tool printed it. */
const scalaSet = (ps: readonly TopicPartition[]): string => `Set(${ps.map(tpString).join(', ')})`;

/** The file's partitions, with the messages of Kafka's tool for an empty or repeated list. */
function partitionsFromFile(path: string): TopicPartition[] {
  const js = readJsonFile(path, '--path-to-json-file');
  if (typeof js !== 'object' || js === null || !('partitions' in js)) throw new CliError('Preferred replica election data is empty');
  try {
    return parseElectionJson(js);
  } catch (err) {
    if (err instanceof CliError) throw new CliError(err.message.replace(/^Replica election data/, 'Preferred replica election data'));
    throw err;
  }
}

/** Kafka 2.x's ZkCommand: checks the partitions against ZooKeeper, then writes the election znode. */
async function startThroughZooKeeper(zk: KafkaZkClient, fromUser: TopicPartition[] | null): Promise<void> {
  const topics = fromUser === null ? await zk.getAllTopics() : [...new Set(fromUser.map((p) => p.topic))];
  const known = new Set<string>();
  const all: TopicPartition[] = [];
  for (const topic of topics) {
    for (const partition of (await zk.getTopicAssignment(topic))?.partitions.keys() ?? []) {
      known.add(tpString({ topic, partition }));
      all.push({ topic, partition });
    }
  }
  const valid = (fromUser ?? all).filter((p) => known.has(tpString(p))).sort(compareTopicPartitions);
  const invalid = (fromUser ?? []).filter((p) => !known.has(tpString(p)));
  try {
    await zk.createPreferredReplicaElection(valid);
  } catch (err) {
    if (!isZkError(err, 'NODE_EXISTS')) throw err;
    const pending = (await zk.getPreferredReplicaElection()) ?? [];
    throw new CliError(`Preferred replica leader election currently in progress for ${scalaSet(pending)}. Aborting operation`);
  }
  console.log(`Created preferred replica election path with ${valid.map(tpString).join(',')}`);
  console.log(`Successfully started preferred replica election for partitions ${scalaSet(valid)}`);
  for (const p of invalid) console.log(`Skipping preferred replica leader election for partition ${tpString(p)} since it doesn't exist.`);
}

/** Kafka 2.x's AdminClientCommand: ElectLeaders, then one line per outcome. */
async function electThroughController(admin: Admin, fromUser: TopicPartition[] | null): Promise<number> {
  const results = await electLeaders(admin, 0, fromUser);
  const succeeded = results.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => tpString(r.tp));
  const noop = results.filter((r) => r.errorCode === ELECTION_NOT_NEEDED).map((r) => tpString(r.tp));
  const failed = results.filter((r) => r.errorCode !== ErrorCode.NONE && r.errorCode !== ELECTION_NOT_NEEDED);
  if (succeeded.length > 0) console.log(`Successfully completed preferred replica election for partitions ${succeeded.join(', ')}`);
  if (noop.length > 0) console.log(`Preferred replica already elected for partitions ${noop.join(', ')}`);
  if (failed.length === 0) return 0;
  for (const f of failed) {
    const message = f.errorCode === PREFERRED_LEADER_NOT_AVAILABLE ? 'The preferred leader was not available.' : (f.errorMessage ?? '');
    console.log(`Error completing preferred replica election for partition ${tpString(f.tp)}: ${javaExceptionName(f.errorCode)}: ${message}`);
  }
  throw new CliError(`${failed.length} preferred replica(s) could not be elected`);
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(
    TOOL,
    "This tool helps to cause leadership for each partition to be transferred back to the 'preferred replica', it can be used to balance leadership among the servers.",
  )
    .option('--bootstrap-server <host:port>', 'REQUIRED unless --zookeeper is given: the broker(s) to connect to, host:port[,host:port]')
    .option('--admin.config <file>', 'admin client config properties file (with --bootstrap-server)')
    .option(
      '--path-to-json-file <file>',
      'JSON file with the partitions to elect for: {"partitions": [{"topic": "foo", "partition": 1}]} (default every partition)',
    );
  const raw = parseArgs(program, argv, {
    allowZookeeper: true,
    zookeeperHelp: 'DEPRECATED, REQUIRED unless --bootstrap-server is given: ZooKeeper, host:port[,host:port][/chroot]',
  });
  if (raw === null) return 0;
  const o = raw as Opts;
  console.log('This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405');
  if ((o.bootstrapServer === undefined) === (o.zookeeper === undefined)) {
    throw new CliError("Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided");
  }
  if (o.zookeeper !== undefined && o['admin.config'] !== undefined) throw new CliError('Option admin.config is only allowed if bootstrap-server is used');
  const fromUser = o.pathToJsonFile === undefined ? null : partitionsFromFile(o.pathToJsonFile);
  if (o.zookeeper !== undefined) {
    console.log('Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.');
    console.log('Use --bootstrap-server instead to specify a broker to connect to.');
    await startThroughZooKeeper(await openZk(o.zookeeper, new Map()), fromUser);
    return 0;
  }
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o['admin.config']), o.bootstrapServer)));
  return electThroughController(admin, fromUser);
}

runTool(TOOL, main);
