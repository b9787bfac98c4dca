#!/usr/bin/env node
/**
 * kafka-leader-election.sh (Kafka 2.4+'s LeaderElectionCommand): asks the controller
 * (ElectLeaders) for a PREFERRED or UNCLEAN election on one partition (--topic --partition),
 * the partitions of a JSON file (--path-to-json-file, `{"partitions":[{"topic":"t","partition":0}]}`)
 * or every partition (--all-topic-partitions). Output as Kafka's:
 *   Successfully completed leader election (PREFERRED) for partitions t-0, t-1
 *   Valid replica already elected for partitions u-0
 *   Error completing leader election (PREFERRED) for partition: t-2: <exception>
 * and, when some partition failed, one line on stderr and exit code 1.
 */
import { Admin } from '../client/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { CliError, closeAtExit, createProgram, parseArgs, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';
import { javaExceptionName } from './common/java-names.js';
import { electLeaders, parseElectionJson, readJsonFile, tpString, type TopicPartition } from './common/reassign.js';

const TOOL = 'kafka-leader-election.sh';
const ELECTION_NOT_NEEDED = 84;

/** Kafka's default messages of the errors an election answers with. */
const MESSAGES: Readonly<Record<number, string>> = {
  [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]: 'This server does not host this topic-partition.',
  [ErrorCode.NOT_CONTROLLER]: 'This is not the correct controller for this cluster.',
  [ErrorCode.INVALID_REQUEST]:
    'This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.',
  [ErrorCode.UNKNOWN_SERVER_ERROR]: 'The server experienced an unexpected error when processing the request.',
  [ErrorCode.LEADER_NOT_AVAILABLE]: 'There is no leader for this topic-partition as we are in the middle of a leadership election.',
  80: 'The preferred leader was not available.',
  83: 'Eligible topic partition leaders are not available.',
};

interface Opts {
  bootstrapServer?: string;
  'admin.config'?: string;
  electionType?: string;
  topic?: string;
  partition?: string;
  allTopicPartitions?: boolean;
  pathToJsonFile?: string;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Attempts to elect a new leader for a set of topic partitions.')
    .option('--bootstrap-server <host:port>', 'REQUIRED: a list of host/port pairs to use for establishing the connection to the Kafka cluster')
    .option('--admin.config <file>', 'property file with configs for the admin client')
    .option('--election-type <type>', 'REQUIRED: PREFERRED (preferred replica, if live and in sync) or UNCLEAN (any live replica when no leader is left)')
    .option('--topic <topic>', 'name of the topic to elect a leader for; requires --partition')
    .option('--partition <n>', 'partition id of the topic given with --topic')
    .option('--all-topic-partitions', 'elect leaders for every topic partition the cluster has')
    .option('--path-to-json-file <file>', 'JSON file with the partitions: {"partitions": [{"topic": "foo", "partition": 1}]}');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  if (o.bootstrapServer === undefined) throw new CliError('Missing required option(s): bootstrap-server');
  const chosen = [o.topic !== undefined, o.allTopicPartitions === true, o.pathToJsonFile !== undefined].filter(Boolean).length;
  if (chosen !== 1) throw new CliError('One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file');
  if (o.topic !== undefined && o.partition === undefined) throw new CliError('Missing required option(s): partition');
  if (o.topic === undefined && o.partition !== undefined) throw new CliError('Option partition is only allowed if topic is used');
  if (o.electionType === undefined) throw new CliError('Missing required option(s): election-type');
  const typeName = o.electionType.toUpperCase();
  if (typeName !== 'PREFERRED' && typeName !== 'UNCLEAN') throw new CliError(`--election-type must be PREFERRED or UNCLEAN, got "${o.electionType}"`);
  let partitions: TopicPartition[] | null = null;
  if (o.topic !== undefined) {
    const p = Number(o.partition);
    if (!Number.isInteger(p) || p < 0) throw new CliError(`--partition must be a partition number, got "${o.partition}"`);
    partitions = [{ topic: o.topic, partition: p }];
  } else if (o.pathToJsonFile !== undefined) {
    partitions = parseElectionJson(readJsonFile(o.pathToJsonFile, '--path-to-json-file'));
  }
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o['admin.config']), o.bootstrapServer)));
  const results = await electLeaders(admin, typeName === 'PREFERRED' ? 0 : 1, partitions);
  const succeeded = results.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => tpString(r.tp));
  const noop = results.filter((r) => r.errorCode === ELECTION_NOT_NEEDED).map((r) => tpString(r.tp));
  const failed = results.filter((r) => r.errorCode !== ErrorCode.NONE && r.errorCode !== ELECTION_NOT_NEEDED);
  if (succeeded.length > 0) console.log(`Successfully completed leader election (${typeName}) for partitions ${succeeded.join(', ')}`);
  if (noop.length > 0) console.log(`Valid replica already elected for partitions ${noop.join(', ')}`);
  if (failed.length > 0) {
    for (const f of failed) {
      const message = MESSAGES[f.errorCode] ?? f.errorMessage ?? '';
      console.log(`Error completing leader election (${typeName}) for partition: ${tpString(f.tp)}: ${javaExceptionName(f.errorCode)}: ${message}`);
    }
    throw new CliError(`${failed.length} replica(s) could not be elected`);
  }
  return 0;
}

runTool(TOOL, main);
