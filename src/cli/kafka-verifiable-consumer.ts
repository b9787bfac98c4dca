#!/usr/bin/env node
/**
 * kafka-verifiable-consumer.sh: consumes a topic in a consumer group and prints one JSON event
 * per line, as Kafka's VerifiableConsumer does, for test harnesses that check what a group saw:
 *   {"timestamp":..,"name":"startup_complete"}
 *   {"timestamp":..,"name":"partitions_assigned","partitions":[{"topic":"t","partition":0}]}
 *   {"timestamp":..,"name":"records_consumed","count":N,"partitions":[{"topic":"t","partition":0,"count":N,"minOffset":a,"maxOffset":b}]}
 *   {"timestamp":..,"name":"record_data","key":..,"value":..,"topic":..,"partition":..,"offset":..}   (--verbose)
 *   {"timestamp":..,"name":"offsets_committed","offsets":[{"topic":"t","partition":0,"offset":b+1}],"success":true}
 *   {"timestamp":..,"name":"partitions_revoked","partitions":[..]}
 *   {"timestamp":..,"name":"shutdown_complete"}
 * Without --enable-autocommit it commits synchronously after every poll, as Kafka's tool does.
 * It stops after --max-messages, or on SIGTERM/SIGINT. An error ends it as Kafka's ends: the
 * consumer is closed, shutdown_complete printed, and the error goes to stderr ("Error during
 * processing, terminating consumer process: ..."), here with exit status 1 so that a harness
 * notices (an invalid or unauthorized topic, no broker answering at all).
 */
import { Consumer, ErrorCode, KafkaError, type ConsumerRecord, type OffsetAndMetadata, type TopicPartition } from '../client/index.js';
import { CliError, createProgram, parseArgs, closeAtExit, runTool, describeError } from './common/tool.js';
import { javaExceptionName } from './common/java-names.js';
import { consumerOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-verifiable-consumer.sh';

interface Opts {
  bootstrapServer?: string;
  brokerList?: string;
  topic?: string;
  groupProtocol: string;
  groupRemoteAssignor?: string;
  groupId?: string;
  groupInstanceId?: string;
  maxMessages: string;
  sessionTimeout: string;
  verbose?: boolean;
  enableAutocommit?: boolean;
  resetPolicy: string;
  assignmentStrategy: string;
}

function printEvent(name: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ timestamp: Date.now(), name, ...fields })}\n`);
}

const partitionsOf = (tps: readonly TopicPartition[]) => tps.map((tp) => ({ topic: tp.topic, partition: tp.partition }));

interface Summary {
  topic: string;
  partition: number;
  records: ConsumerRecord[];
}

/** Groups one poll's records by partition, in the order partitions first appear. */
function byPartition(records: readonly ConsumerRecord[]): Summary[] {
  const groups = new Map<string, Summary>();
  for (const r of records) {
    const k = `${r.topic}\u0000${r.partition}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { topic: r.topic, partition: r.partition, records: [] }));
    g.records.push(r);
  }
  return [...groups.values()];
}

/**
 * What Kafka's consumer raises from poll() for the subscribed topic: an invalid or unauthorized
 * topic is an error (a missing one is waited for, as there).
 */
async function checkTopic(consumer: Consumer, topic: string): Promise<void> {
  const tm = (await consumer.cluster.topicsMetadata([topic])).get(topic);
  if (tm?.errorCode === ErrorCode.INVALID_TOPIC_EXCEPTION) throw new KafkaError(tm.errorCode, `Invalid topics: [${topic}]`);
  if (tm?.errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED) throw new KafkaError(tm.errorCode, `Not authorized to access topics: [${topic}]`);
}

/** Kafka's log line for the failure that ended the run, with the exception's class as Java prints it. */
function terminated(err: unknown): CliError {
  const cls = err instanceof KafkaError ? `${javaExceptionName(err.code)}: ` : '';
  return new CliError(`Error during processing, terminating consumer process: ${cls}${describeError(err)}`);
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(
    TOOL,
    'Consumes messages from a topic and emits consumer events (group rebalances, received messages, committed offsets) as JSON objects on stdout.',
  )
    .option('--bootstrap-server <servers>', 'REQUIRED: the server(s) to connect to, HOST1:PORT1,HOST2:PORT2')
    .option('--broker-list <servers>', 'DEPRECATED, use --bootstrap-server')
    .option('--topic <topic>', 'REQUIRED: consume messages from this topic')
    .option('--group-protocol <protocol>', 'group protocol: classic or consumer (KIP-848)', 'classic')
    .option('--group-remote-assignor <name>', 'group remote assignor (consumer protocol only)')
    .option('--group-id <id>', 'REQUIRED: the group id shared among members of the consumer group')
    .option('--group-instance-id <id>', 'a unique identifier of the consumer instance (static membership)')
    .option('--max-messages <n>', 'consume this many messages; -1 until killed', '-1')
    .option('--session-timeout <ms>', "the consumer's session timeout", '30000')
    .option('--verbose', 'print every consumed record')
    .option('--enable-autocommit', 'enable offset auto-commit')
    .option('--reset-policy <policy>', 'earliest, latest or none', 'earliest')
    .option('--assignment-strategy <class>', 'assignment strategy', 'org.apache.kafka.clients.consumer.RangeAssignor')
    .option('--consumer.config <file>', 'consumer config properties file (command-line flags win)');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as unknown as Opts;
  const configFile = (raw as Record<string, string | undefined>)['consumer.config'];
  const bootstrap = o.bootstrapServer ?? o.brokerList;
  if (!bootstrap) throw new CliError('missing required argument --bootstrap-server (see --help)');
  if (!o.topic) throw new CliError('missing required argument --topic (see --help)');
  if (!o.groupId) throw new CliError('missing required argument --group-id (see --help)');
  if (!/^(classic|consumer)$/i.test(o.groupProtocol)) throw new CliError(`--group-protocol must be classic or consumer, got "${o.groupProtocol}"`);
  if (!['earliest', 'latest', 'none'].includes(o.resetPolicy)) throw new CliError(`--reset-policy must be earliest, latest or none, got "${o.resetPolicy}"`);
  if (!/^\d+$/.test(o.maxMessages.replace(/^-1$/, '0'))) throw new CliError(`--max-messages must be an integer, got "${o.maxMessages}"`);
  if (!/^\d+$/.test(o.sessionTimeout)) throw new CliError(`--session-timeout must be a number of ms, got "${o.sessionTimeout}"`);
  const maxMessages = Number(o.maxMessages);

  const props = loadPropertiesFile(configFile);
  props.set('group.id', o.groupId);
  if (o.groupInstanceId) props.set('group.instance.id', o.groupInstanceId);
  props.set('auto.offset.reset', o.resetPolicy);
  props.set('enable.auto.commit', o.enableAutocommit ? 'true' : 'false');
  // The consumer protocol refuses these (the coordinator assigns and times sessions), as Kafka 4's tool does.
  if (o.groupProtocol.toLowerCase() === 'classic') {
    props.set('session.timeout.ms', o.sessionTimeout);
    props.set('partition.assignment.strategy', o.assignmentStrategy);
  }
  props.set('group.protocol', o.groupProtocol.toLowerCase());
  if (o.groupRemoteAssignor) props.set('group.remote.assignor', o.groupRemoteAssignor);
  const options = consumerOptionsFrom(props, bootstrap);
  const consumer = closeAtExit(new Consumer({ ...options, clientId: options.clientId ?? 'verifiable-consumer' }));

  let stopping = false;
  const stop = (): void => {
    stopping = true;
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  let consumed = 0;
  const finished = (): boolean => maxMessages >= 0 && consumed >= maxMessages;
  printEvent('startup_complete');
  let failure: unknown;
  try {
    await checkTopic(consumer, o.topic);
    consumer.subscribe([o.topic], {
      onPartitionsAssigned: (tps) => printEvent('partitions_assigned', { partitions: partitionsOf(tps) }),
      onPartitionsRevoked: (tps) => printEvent('partitions_revoked', { partitions: partitionsOf(tps) }),
    });
    while (!finished() && !stopping) {
      const records = await consumer.poll(500);
      if (records.length === 0) continue;
      const offsets: [TopicPartition, OffsetAndMetadata][] = [];
      const summaries: Record<string, unknown>[] = [];
      for (const g of byPartition(records)) {
        let taken = g.records;
        if (maxMessages >= 0 && consumed + taken.length > maxMessages) taken = taken.slice(0, maxMessages - consumed);
        if (taken.length === 0) continue;
        const min = taken[0]!.offset;
        const max = taken[taken.length - 1]!.offset;
        offsets.push([
          { topic: g.topic, partition: g.partition },
          { offset: max + 1n, metadata: null },
        ]);
        summaries.push({ topic: g.topic, partition: g.partition, count: taken.length, minOffset: Number(min), maxOffset: Number(max) });
        if (o.verbose) {
          for (const r of taken) {
            printEvent('record_data', {
              key: r.key?.toString() ?? null,
              value: r.value?.toString() ?? null,
              topic: r.topic,
              partition: r.partition,
              offset: Number(r.offset),
            });
          }
        }
        consumed += taken.length;
        // Later partitions of this poll stay unconsumed (and uncommitted) once the limit is met.
        if (finished()) {
          for (const [tp, om] of offsets) consumer.seek(tp, om.offset);
          break;
        }
      }
      printEvent('records_consumed', { count: records.length, partitions: summaries });
      if (!o.enableAutocommit && offsets.length > 0) {
        const committed = offsets.map(([tp, om]) => ({ topic: tp.topic, partition: tp.partition, offset: Number(om.offset) }));
        try {
          await consumer.commitSync(offsets);
          printEvent('offsets_committed', { offsets: committed, success: true });
        } catch (err) {
          printEvent('offsets_committed', { offsets: committed, error: (err as Error).message, success: false });
        }
      }
    }
  } catch (err) {
    failure = err;
  } finally {
    await consumer.close().catch(() => undefined);
    printEvent('shutdown_complete');
  }
  if (failure !== undefined) throw terminated(failure);
  return 0;
}

runTool(TOOL, main);
