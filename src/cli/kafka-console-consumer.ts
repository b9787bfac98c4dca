#!/usr/bin/env node
/**
 * kafka-console-consumer.sh: prints records of a topic (or of topics matching --include) to
 * stdout through a formatter. Like Kafka it joins a group (default console-consumer-NNNNN)
 * that auto-commits every 5 s; --partition reads one partition without group rebalancing.
 * On exit (--max-messages, --timeout-ms, Ctrl-C, SIGTERM) it commits, leaves the group and
 * prints "Processed a total of N messages" on stderr; so does a closed output pipe (`| head -1`),
 * after Kafka's "Unable to write to standard out, closing consumer.", with exit status 0.
 * With --zookeeper it is Kafka's old console consumer instead: the ZooKeeper consumer
 * (client/zk-consumer), its group under /consumers in ZooKeeper, offsets committed there every
 * auto.commit.interval.ms (60 s) and on exit; a generated group is deleted from ZooKeeper on a
 * clean exit, as Kafka's tool did (a kill -9 leaves it, so a restart with --group resumes).
 */
import { Admin, ConfigResourceType, Consumer, type ConsumerRecord } from '../client/index.js';
import { collect, createProgram, parseArgs, closeAtExit, runTool, CliError, describeError, writeOutput } from './common/tool.js';
import { consumerOptionsFrom, loadPropertiesFile, merged, parseKeyValues } from './common/config.js';
import { formatterByName, needsRetention, type Formatter } from './common/formatters.js';
import type { ZookeeperConsumerOptions } from '../client/zk-consumer/index.js';
import type { ZkSession } from '../metadata/zk/zk-session.js';

const TOOL = 'kafka-console-consumer.sh';
const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

interface Opts {
  bootstrapServer?: string;
  zookeeper?: string;
  deleteConsumerOffsets?: boolean;
  topic?: string;
  include?: string;
  whitelist?: string;
  group?: string;
  fromBeginning?: boolean;
  partition?: string;
  offset?: string;
  maxMessages?: string;
  timeoutMs?: string;
  skipMessageOnError?: boolean;
  isolationLevel?: string;
  consumerProperty?: string[];
  'consumer.config'?: string;
  property?: string[];
  formatter?: string;
  keyDeserializer?: string;
  valueDeserializer?: string;
}

function nonNegativeInt(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${flag} must be a non-negative integer, got "${v}"`);
  return n;
}

async function offsetsRetentionMs(bootstrap: Map<string, string>, servers: string | undefined): Promise<number> {
  const admin = closeAtExit(new Admin(consumerOptionsFrom(bootstrap, servers)));
  try {
    const md = await admin.describeCluster();
    const id = md.controllerId >= 0 ? md.controllerId : (md.brokers[0]?.nodeId ?? 0);
    const entries = await admin.describeConfigs(ConfigResourceType.Broker, String(id), ['offsets.retention.minutes']);
    const minutes = Number(entries.find((e) => e.name === 'offsets.retention.minutes')?.value);
    return Number.isFinite(minutes) && minutes > 0 ? minutes * 60000 : DEFAULT_RETENTION_MS;
  } catch {
    return DEFAULT_RETENTION_MS;
  } finally {
    await admin.close();
  }
}

/** What the print loop needs of either consumer. */
interface RecordSource {
  poll(timeoutMs: number): Promise<ConsumerRecord[]>;
  seek(tp: { topic: string; partition: number }, offset: bigint): void;
  close(): Promise<void>;
}

function positiveInt(props: Map<string, string>, key: string): number | undefined {
  const v = props.get(key);
  if (v === undefined) return undefined;
  const n = Number(v.trim());
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${key} must be a non-negative integer, got "${v}"`);
  return n;
}

function boolProp(props: Map<string, string>, key: string): boolean | undefined {
  const v = props.get(key)?.trim().toLowerCase();
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new CliError(`${key} must be true or false, got "${v}"`);
  return v === 'true';
}

/** The old consumer's properties (Kafka 0.8's ConsumerConfig names) as ZookeeperConsumerOptions. */
function zkConsumerOptions(props: Map<string, string>, connect: string): ZookeeperConsumerOptions {
  const reset = props.get('auto.offset.reset')?.trim();
  if (reset !== 'smallest' && reset !== 'largest') throw new CliError(`auto.offset.reset must be smallest or largest, got "${reset}"`);
  const storage = props.get('offsets.storage')?.trim() ?? 'zookeeper';
  if (storage !== 'zookeeper' && storage !== 'kafka') throw new CliError(`offsets.storage must be zookeeper or kafka, got "${storage}"`);
  return {
    zookeeperConnect: connect,
    groupId: props.get('group.id')!,
    consumerId: props.get('consumer.id'),
    clientId: props.get('client.id'),
    zookeeperSessionTimeoutMs: positiveInt(props, 'zookeeper.session.timeout.ms'),
    zookeeperConnectionTimeoutMs: positiveInt(props, 'zookeeper.connection.timeout.ms'),
    autoCommitEnable: boolProp(props, 'auto.commit.enable'),
    autoCommitIntervalMs: positiveInt(props, 'auto.commit.interval.ms'),
    autoOffsetReset: reset,
    rebalanceMaxRetries: positiveInt(props, 'rebalance.max.retries'),
    rebalanceBackoffMs: positiveInt(props, 'rebalance.backoff.ms'),
    offsetsStorage: storage,
    dualCommitEnabled: boolProp(props, 'dual.commit.enabled'),
    fetchMinBytes: positiveInt(props, 'fetch.min.bytes'),
    fetchWaitMaxMs: positiveInt(props, 'fetch.wait.max.ms'),
    fetchMessageMaxBytes: positiveInt(props, 'fetch.message.max.bytes'),
    socketTimeoutMs: positiveInt(props, 'socket.timeout.ms'),
  };
}

/** Deletes a znode and everything under it (Kafka's ZkUtils.deletePathRecursive); absent is fine. */
async function deleteTree(zk: ZkSession, path: string): Promise<void> {
  let children: string[];
  try {
    children = await zk.children(path);
  } catch {
    return;
  }
  for (const child of children) await deleteTree(zk, `${path}/${child}`);
  await zk.delete(path).catch(() => undefined);
}

/** Puts positions back to the first record not printed, so the commit on close skips nothing. */
function rewind(consumer: RecordSource, unprinted: ConsumerRecord[]): void {
  const first = new Map<string, ConsumerRecord>();
  for (const r of unprinted) if (!first.has(`${r.topic}-${r.partition}`)) first.set(`${r.topic}-${r.partition}`, r);
  for (const r of first.values()) consumer.seek({ topic: r.topic, partition: r.partition }, r.offset);
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Consume records from Kafka topics and print them.')
    .option('--bootstrap-server <server>', 'REQUIRED (or --zookeeper): the server(s) to connect to')
    .option('--delete-consumer-offsets', "with --zookeeper: delete the group's offsets (and the whole /consumers/<group>) before starting")
    .option('--topic <topic>', 'the topic to consume')
    .option('--include <regex>', 'regular expression of the topics to consume (internal topics excluded unless exclude.internal.topics=false)')
    .option('--whitelist <regex>', 'DEPRECATED, use --include')
    .option('--group <group>', 'the consumer group id (default console-consumer-NNNNN)')
    .option('--from-beginning', 'start from the earliest message when the group has no committed offset')
    .option('--partition <n>', 'the partition to consume (no group rebalancing)')
    .option('--offset <offset>', "with --partition: 'earliest', 'latest' or an offset", 'latest')
    .option('--max-messages <n>', 'exit after this many messages')
    .option('--timeout-ms <ms>', 'exit when no message arrived for this long')
    .option('--skip-message-on-error', 'skip a message that cannot be formatted instead of stopping')
    .option('--isolation-level <level>', 'read_committed or read_uncommitted', 'read_uncommitted')
    .option('--consumer-property <prop>', 'a consumer property key=value (repeatable)', collect)
    .option('--consumer.config <file>', 'consumer config properties file')
    .option(
      '--property <prop>',
      'formatter properties: print.key, print.value, print.timestamp, print.partition, print.offset, print.headers, key.separator (repeatable)',
      collect,
    )
    .option('--formatter <class>', 'the message formatter class', 'kafka.tools.DefaultMessageFormatter')
    .option('--key-deserializer <class>', 'accepted for compatibility: keys are printed as UTF-8')
    .option('--value-deserializer <class>', 'accepted for compatibility: values are printed as UTF-8');
  const raw = parseArgs(program, argv, {
    allowZookeeper: true,
    zookeeperHelp:
      "REQUIRED (or --bootstrap-server): ZooKeeper, host:port[,host:port][/chroot]; consume as Kafka's old consumer, the group and its offsets kept under /consumers in ZooKeeper",
  });
  if (raw === null) return 0;
  const o = raw as Opts;
  const zkConnect = o.zookeeper;
  if (zkConnect !== undefined) {
    if (o.bootstrapServer !== undefined) throw new CliError('exactly one of --zookeeper (the old consumer) or --bootstrap-server is allowed');
    if (o.partition !== undefined) throw new CliError('--partition needs --bootstrap-server (the ZooKeeper consumer takes partitions by group rebalancing)');
    if (o.include !== undefined || o.whitelist !== undefined)
      throw new CliError('--include/--whitelist with --zookeeper is not supported by Fjord; use --topic, or --bootstrap-server');
    if (!/^[^/,\s]+:\d+(,[^/,\s]+:\d+)*(\/[^\s]*)?$/.test(zkConnect))
      throw new CliError(`--zookeeper expects host:port[,host:port...][/chroot], got "${zkConnect}"`);
  } else if (o.deleteConsumerOffsets) {
    throw new CliError('--delete-consumer-offsets needs --zookeeper');
  }
  const include = o.include ?? o.whitelist;
  if ((o.topic === undefined) === (include === undefined)) throw new CliError('exactly one of --topic or --include is required (see --help)');
  const partition = nonNegativeInt(o.partition, '--partition');
  if (partition !== undefined && o.topic === undefined) throw new CliError('--partition needs --topic');
  if (partition !== undefined && o.group !== undefined) throw new CliError('--group cannot be used with --partition');
  const maxMessages = nonNegativeInt(o.maxMessages, '--max-messages');
  const timeoutMs = nonNegativeInt(o.timeoutMs, '--timeout-ms');
  let pattern: RegExp | null = null;
  if (include !== undefined) {
    try {
      pattern = new RegExp(`^(?:${include})$`);
    } catch {
      throw new CliError(`--include "${include}" is not a valid regular expression`);
    }
  }

  const fileProps = loadPropertiesFile(o['consumer.config']);
  const flagProps = parseKeyValues(o.consumerProperty, '--consumer-property');
  const props = merged(new Map([['isolation.level', o.isolationLevel ?? 'read_uncommitted']]), fileProps, flagProps);
  if (o.group !== undefined) props.set('group.id', o.group);
  const groupIdPassed = props.has('group.id');
  if (zkConnect !== undefined) {
    // Kafka's old console consumer: group console-consumer-<random below 100000>, and the
    // reset policy set by --from-beginning whatever the properties say.
    if (!groupIdPassed) props.set('group.id', `console-consumer-${Math.floor(Math.random() * 100000)}`);
    props.set('auto.offset.reset', o.fromBeginning ? 'smallest' : 'largest');
    if (o.topic?.startsWith('__') && props.get('offsets.storage') === 'kafka' && !props.has('auto.commit.enable')) props.set('auto.commit.enable', 'false');
    return consumeFromZooKeeper(o, zkConnect, props, groupIdPassed, maxMessages, timeoutMs);
  }
  if (partition === undefined && !props.has('group.id')) {
    props.set('group.id', `console-consumer-${10000 + Math.floor(Math.random() * 90000)}`);
    // The generated group auto-commits like the seed's, so a restart in it resumes; but a reader
    // of __consumer_offsets committing into the topic it reads would print its own commits forever.
    if (o.topic?.startsWith('__') && !props.has('enable.auto.commit')) props.set('enable.auto.commit', 'false');
  }
  if (!props.has('auto.offset.reset')) props.set('auto.offset.reset', o.fromBeginning ? 'earliest' : 'latest');
  const formatterProps = parseKeyValues(o.property, '--property');
  const retention = needsRetention(o.formatter) ? await offsetsRetentionMs(props, o.bootstrapServer) : DEFAULT_RETENTION_MS;
  const format: Formatter = formatterByName(o.formatter, { props: formatterProps, offsetsRetentionMs: retention });

  // Checked before any connection is made: a wrong flag is answered at once.
  const start = o.fromBeginning ? 'earliest' : (o.offset ?? 'latest');
  if (start !== 'earliest' && start !== 'latest' && !/^\d+$/.test(start)) {
    throw new CliError(`--offset must be earliest, latest or a non-negative number, got "${start}"`);
  }

  const options = consumerOptionsFrom(props, o.bootstrapServer);
  const consumer = closeAtExit(new Consumer({ ...options, clientId: options.clientId ?? 'console-consumer' }));
  if (partition !== undefined) {
    const tm = await consumer.cluster.partitionsFor(o.topic!);
    if (partition >= tm.partitions.length) {
      throw new CliError(`Partition ${partition} of topic '${o.topic}' does not exist (the topic has ${tm.partitions.length} partitions)`);
    }
    const tp = { topic: o.topic!, partition };
    consumer.assign([tp]);
    if (start === 'earliest') await consumer.seekToBeginning([tp]);
    else if (start === 'latest') await consumer.seekToEnd([tp]);
    else consumer.seek(tp, BigInt(start));
  } else if (pattern) {
    consumer.subscribe(pattern);
  } else {
    await consumer.cluster.partitionsFor(o.topic!);
    consumer.subscribe([o.topic!]);
  }
  return printRecords(consumer, format, o, maxMessages, timeoutMs);
}

/** Kafka's old console consumer: the ZooKeeper consumer on one topic. */
async function consumeFromZooKeeper(
  o: Opts,
  zkConnect: string,
  props: Map<string, string>,
  groupIdPassed: boolean,
  maxMessages: number | undefined,
  timeoutMs: number | undefined,
): Promise<number> {
  const options = zkConsumerOptions(props, zkConnect);
  const { ensureZooKeeperAnswers, zkUnreachableTimeoutMs } = await import('./common/zk-reachable.js');
  await ensureZooKeeperAnswers(zkConnect, zkUnreachableTimeoutMs(props), 'zookeeper.connection.timeout.ms');
  const { ZookeeperConsumer } = await import('../client/zk-consumer/index.js');
  const consumer = closeAtExit(await ZookeeperConsumer.connect({ ...options, clientId: options.clientId ?? 'console-consumer' }));
  const group = options.groupId;
  const groupPath = `/consumers/${group}`;
  if (o.deleteConsumerOffsets) await deleteTree(consumer.zk, groupPath);
  else if (o.fromBeginning && (await consumer.zk.exists(`${groupPath}/offsets`))) {
    throw new CliError(`Found previous offset information for this group ${group}. Please use --delete-consumer-offsets to delete previous offsets metadata`);
  }
  const retention = needsRetention(o.formatter) ? await offsetsRetentionMs(new Map(), consumer.bootstrap.join(',')) : DEFAULT_RETENTION_MS;
  const format: Formatter = formatterByName(o.formatter, { props: parseKeyValues(o.property, '--property'), offsetsRetentionMs: retention });
  await consumer.subscribe([o.topic!]);
  const code = await printRecords(consumer, format, o, maxMessages, timeoutMs);
  // A generated group is not left behind in ZooKeeper (Kafka's tool did the same on exit).
  if (!groupIdPassed) {
    const { ZkSession } = await import('../metadata/zk/zk-session.js');
    const zk = closeAtExit(
      await ZkSession.open({
        connect: zkConnect,
        sessionTimeoutMs: options.zookeeperSessionTimeoutMs ?? 6000,
        connectionTimeoutMs: options.zookeeperConnectionTimeoutMs ?? 6000,
      }),
    );
    await deleteTree(zk, groupPath);
    await zk.close();
  }
  return code;
}

async function printRecords(
  consumer: RecordSource,
  format: Formatter,
  o: Opts,
  maxMessages: number | undefined,
  timeoutMs: number | undefined,
): Promise<number> {
  let processed = 0;
  let stopping = false;
  const stop = (): void => {
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let lastMessageAt = Date.now();
  try {
    while (!stopping) {
      if (maxMessages !== undefined && processed >= maxMessages) break;
      if (timeoutMs !== undefined && Date.now() - lastMessageAt >= timeoutMs) break;
      const records: ConsumerRecord[] = await consumer.poll(timeoutMs !== undefined ? Math.min(500, timeoutMs) : 500);
      for (const [i, r] of records.entries()) {
        if (maxMessages !== undefined && processed >= maxMessages) {
          rewind(consumer, records.slice(i));
          break;
        }
        lastMessageAt = Date.now();
        let line: string | null;
        try {
          line = format(r);
        } catch (err) {
          if (!o.skipMessageOnError) throw new CliError(`cannot format message at ${r.topic}-${r.partition}@${r.offset}: ${describeError(err)}`);
          process.stderr.write(`Skipping message at ${r.topic}-${r.partition}@${r.offset}: ${describeError(err)}\n`);
          continue;
        }
        if (line !== null && !(await writeOutput(line))) {
          // Kafka's ConsoleConsumer: nobody reads the output any more (`| head -1`), so stop; the
          // close below leaves the group and commits from the record that was not printed.
          process.stderr.write('Unable to write to standard out, closing consumer.\n');
          rewind(consumer, records.slice(i));
          stopping = true;
          break;
        }
        processed++;
      }
    }
  } finally {
    await consumer.close();
    process.stderr.write(`Processed a total of ${processed} messages\n`);
  }
  return 0;
}

runTool(TOOL, main);
