#!/usr/bin/env node
/**
 * kafka-transactions.sh (KIP-664): the transactional state of producers, to find and clear
 * hanging transactions. `--bootstrap-server host:port [--command-config f] COMMAND ...`:
 * - describe-producers --topic t --partition p [--broker-id b]: the producers the leader (or a
 *   replica) tracks, in Kafka's table (columns padded, each followed by a tab);
 * - abort --topic t --partition p (--start-offset o | --producer-id i --producer-epoch e
 *   --coordinator-epoch c): writes the abort marker of a transaction left open there.
 * - list [--duration-filter ms]: ListTransactions on every broker (TransactionalId, Coordinator,
 *   ProducerId, TransactionState);
 * - describe --transactional-id id: DescribeTransactions at its coordinator;
 * - find-hanging (--broker-id b | --topic t [--partition p]) [--max-transaction-timeout min]:
 *   open transactions older than the maximum timeout whose coordinator does not know them (no
 *   transactional id has the producer id, or its transaction does not include the partition).
 */
import { Admin } from '../client/index.js';
import { KafkaError } from '../client/errors.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ProducerStateDescription } from '../client/admin.js';
import type { PartitionRef, TransactionDescription } from '../client/admin-transactions.js';
import { createProgram, parseArgs, requireOption, closeAtExit, runTool, CliError, describeError } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-transactions.sh';
const COMMANDS = ['list', 'describe', 'describe-producers', 'abort', 'find-hanging'] as const;
type CommandName = (typeof COMMANDS)[number];

/** Kafka's prettyPrintTable: every column padded to its widest value, each followed by a tab. */
export function prettyTable(headers: readonly string[], rows: readonly string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => `${c.padEnd(widths[i]!)}\t`).join('');
  return [headers, ...rows].map(line).join('\n') + '\n';
}

const PRODUCER_HEADERS = ['ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset'];

function producerRow(p: ProducerStateDescription): string[] {
  return [
    String(p.producerId),
    String(p.producerEpoch),
    String(p.coordinatorEpoch),
    String(p.lastSequence),
    String(p.lastTimestamp),
    p.currentTransactionStartOffset >= 0n ? String(p.currentTransactionStartOffset) : 'None',
  ];
}

function intOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw new CliError(`${flag} must be an integer, got '${value}'`);
  return Number(value);
}

async function describeProducersCommand(admin: Admin, argv: string[]): Promise<number> {
  const o = parseArgs(
    createProgram(`${TOOL} describe-producers`, 'describe the states of active producers for a topic partition')
      .option('--topic <topic>', 'REQUIRED: topic name')
      .option('--partition <partition>', 'REQUIRED: partition number')
      .option('--broker-id <id>', 'optional broker id to describe the producer state on a specific replica'),
    argv,
  ) as { topic?: string; partition?: string; brokerId?: string } | null;
  if (o === null) return 0;
  const topic = requireOption(o.topic, '--topic');
  const partition = intOption(requireOption(o.partition, '--partition'), '--partition')!;
  const brokerId = intOption(o.brokerId, '--broker-id');
  let producers: ProducerStateDescription[];
  try {
    producers = await admin.describeProducers(topic, partition, brokerId);
  } catch (err) {
    throw new CliError(
      `Failed to describe producers for partition ${topic}-${partition} on ${brokerId === undefined ? 'leader' : `broker ${brokerId}`}: ${describeError(err)}`,
    );
  }
  process.stdout.write(prettyTable(PRODUCER_HEADERS, producers.map(producerRow)));
  return 0;
}

async function abortCommand(admin: Admin, argv: string[]): Promise<number> {
  const o = parseArgs(
    createProgram(`${TOOL} abort`, 'abort a hanging transaction (requires administrative privileges)')
      .option('--topic <topic>', 'REQUIRED: topic name')
      .option('--partition <partition>', 'REQUIRED: partition number')
      .option('--start-offset <offset>', 'start offset of the transaction to abort')
      .option('--producer-id <id>', 'producer id (with --producer-epoch and --coordinator-epoch)')
      .option('--producer-epoch <epoch>', 'producer epoch')
      .option('--coordinator-epoch <epoch>', 'coordinator epoch'),
    argv,
  ) as { topic?: string; partition?: string; startOffset?: string; producerId?: string; producerEpoch?: string; coordinatorEpoch?: string } | null;
  if (o === null) return 0;
  const topic = requireOption(o.topic, '--topic');
  const partition = intOption(requireOption(o.partition, '--partition'), '--partition')!;
  const startOffset = intOption(o.startOffset, '--start-offset');
  let spec;
  if (startOffset !== undefined) {
    const producers = await admin.describeProducers(topic, partition).catch((err: unknown) => {
      throw new CliError(`Failed to validate producer state for partition ${topic}-${partition}: ${describeError(err)}`);
    });
    const open = producers.find((p) => p.currentTransactionStartOffset === BigInt(startOffset));
    if (!open) throw new CliError(`Could not find any open transactions starting at offset ${startOffset} on partition ${topic}-${partition}`);
    spec = { topic, partition, producerId: open.producerId, producerEpoch: open.producerEpoch, coordinatorEpoch: Math.max(0, open.coordinatorEpoch) };
  } else if (o.producerId !== undefined) {
    const producerEpoch = intOption(requireOption(o.producerEpoch, '--producer-epoch'), '--producer-epoch')!;
    const coordinatorEpoch = intOption(requireOption(o.coordinatorEpoch, '--coordinator-epoch'), '--coordinator-epoch')!;
    // A transaction that hung before its first marker shows coordinator epoch -1: 0 is safe (as Kafka).
    spec = { topic, partition, producerId: BigInt(intOption(o.producerId, '--producer-id')!), producerEpoch, coordinatorEpoch: Math.max(0, coordinatorEpoch) };
  } else {
    throw new CliError(
      'The transaction to abort must be identified either with --start-offset or with --producer-id, --producer-epoch, and --coordinator-epoch',
    );
  }
  try {
    await admin.abortTransaction(spec);
  } catch (err) {
    throw new CliError(`Failed to abort transaction of producer ${spec.producerId} on ${topic}-${partition}: ${describeError(err)}`);
  }
  return 0;
}

const LIST_HEADERS = ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState'];

async function listCommand(admin: Admin, argv: string[]): Promise<number> {
  const o = parseArgs(
    createProgram(`${TOOL} list`, 'list transactions').option(
      '--duration-filter <ms>',
      'Duration (in millis) to filter by: if < 0, all transactions will be returned; otherwise, only transactions running longer than this duration will be returned',
    ),
    argv,
  ) as { durationFilter?: string } | null;
  if (o === null) return 0;
  const durationFilterMs = intOption(o.durationFilter, '--duration-filter');
  let byBroker;
  try {
    byBroker = await admin.listTransactions(durationFilterMs === undefined ? {} : { durationFilterMs });
  } catch (err) {
    throw new CliError(`Failed to list transactions: ${describeError(err)}`);
  }
  const rows: string[][] = [];
  for (const [brokerId, listings] of byBroker) {
    for (const l of listings) rows.push([l.transactionalId, String(brokerId), String(l.producerId), l.state]);
  }
  process.stdout.write(prettyTable(LIST_HEADERS, rows));
  return 0;
}

const DESCRIBE_HEADERS = [
  'CoordinatorId',
  'TransactionalId',
  'ProducerId',
  'ProducerEpoch',
  'TransactionState',
  'TransactionTimeoutMs',
  'CurrentTransactionStartTimeMs',
  'TransactionDurationMs',
  'TopicPartitions',
];

async function describeCommand(admin: Admin, argv: string[]): Promise<number> {
  const o = parseArgs(
    createProgram(`${TOOL} describe`, 'describe the state of an active transactional-id').option('--transactional-id <id>', 'REQUIRED: transactional id'),
    argv,
  ) as { transactionalId?: string } | null;
  if (o === null) return 0;
  const transactionalId = requireOption(o.transactionalId, '--transactional-id');
  let d: TransactionDescription;
  try {
    d = await admin.describeTransaction(transactionalId);
  } catch (err) {
    throw new CliError(`Failed to describe transaction state of transactional-id \`${transactionalId}\`: ${describeError(err)}`);
  }
  const started = d.transactionStartTimeMs >= 0n;
  process.stdout.write(
    prettyTable(DESCRIBE_HEADERS, [
      [
        String(d.coordinatorId),
        transactionalId,
        String(d.producerId),
        String(d.producerEpoch),
        d.state,
        String(d.transactionTimeoutMs),
        started ? String(d.transactionStartTimeMs) : 'None',
        started ? String(BigInt(Date.now()) - d.transactionStartTimeMs) : 'None',
        d.topicPartitions.map((p) => `${p.topic}-${p.partition}`).join(','),
      ],
    ]),
  );
  return 0;
}

const HANGING_HEADERS = ['Topic', 'Partition', 'ProducerId', 'ProducerEpoch', 'CoordinatorEpoch', 'StartOffset', 'LastTimestamp', 'Duration(min)'];
/** Partitions per DescribeProducers request and topics per Metadata request, as Kafka. */
const MAX_BATCH = 500;

interface OpenTransaction {
  partition: PartitionRef;
  producer: ProducerStateDescription;
}

function batches<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += MAX_BATCH) out.push(list.slice(i, i + MAX_BATCH));
  return out;
}

async function findHangingCommand(admin: Admin, argv: string[]): Promise<number> {
  const o = parseArgs(
    createProgram(`${TOOL} find-hanging`, 'find hanging transactions')
      .option('--broker-id <id>', 'broker id to search for hanging transactions')
      .option('--max-transaction-timeout <minutes>', 'maximum transaction timeout in minutes to limit the scope of the search', '15')
      .option('--topic <topic>', 'topic name to limit search to')
      .option('--partition <partition>', 'partition number'),
    argv,
  ) as { brokerId?: string; maxTransactionTimeout: string; topic?: string; partition?: string } | null;
  if (o === null) return 0;
  const brokerId = intOption(o.brokerId, '--broker-id');
  const partition = intOption(o.partition, '--partition');
  const maxTimeoutMin = intOption(o.maxTransactionTimeout, '--max-transaction-timeout')!;
  if (o.topic === undefined && brokerId === undefined)
    throw new CliError('The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search');
  if (partition !== undefined && o.topic === undefined) throw new CliError('The --partition argument requires --topic to be provided');
  const maxTimeoutMs = maxTimeoutMin * 60_000;

  // The partitions to search: the one given, the topic's, or every topic's on the broker.
  let partitions: PartitionRef[] = [];
  if (o.topic !== undefined && partition !== undefined) {
    partitions = [{ topic: o.topic, partition }];
  } else {
    let topics: string[];
    if (o.topic !== undefined) topics = [o.topic];
    else {
      try {
        topics = await admin.listTopics({ excludeInternal: true });
      } catch (err) {
        throw new CliError(`Failed to list topics: ${describeError(err)}`);
      }
    }
    for (const batch of batches(topics)) {
      try {
        for (const t of await admin.describeTopics(batch)) {
          for (const p of t.partitions) {
            if (brokerId === undefined || p.replicas.includes(brokerId)) partitions.push({ topic: t.name, partition: p.partition });
          }
        }
      } catch (err) {
        throw new CliError(`Failed to describe ${batch.length} topics: ${describeError(err)}`);
      }
    }
  }

  // Candidates: open transactions whose last write is older than the maximum timeout.
  const candidates: OpenTransaction[] = [];
  for (const batch of batches(partitions)) {
    let states;
    try {
      states = await admin.describeProducersOf(batch, brokerId);
    } catch (err) {
      throw new CliError(`Failed to describe producers for ${batch.length} partitions on broker ${brokerId ?? 'leaders'}: ${describeError(err)}`);
    }
    const now = BigInt(Date.now());
    for (const [ref, producers] of states) {
      for (const p of producers) {
        if (p.currentTransactionStartOffset >= 0n && now - p.lastTimestamp > BigInt(maxTimeoutMs)) candidates.push({ partition: ref, producer: p });
      }
    }
  }

  const hanging: OpenTransaction[] = [];
  if (candidates.length > 0) {
    const byProducer = new Map<bigint, OpenTransaction[]>();
    for (const c of candidates) byProducer.set(c.producer.producerId, [...(byProducer.get(c.producer.producerId) ?? []), c]);
    // Which transactional id (if any) the coordinators hold each producer id under.
    const transactionalIds = new Map<bigint, string>();
    try {
      const listed = await admin.listTransactions({ producerIds: [...byProducer.keys()] });
      for (const listings of listed.values()) {
        for (const l of listings) if (byProducer.has(l.producerId)) transactionalIds.set(l.producerId, l.transactionalId);
      }
    } catch (err) {
      throw new CliError(`Failed to list transactions for ${byProducer.size} producers: ${describeError(err)}`);
    }
    const descriptions = new Map<string, TransactionDescription | null>();
    for (const id of new Set(transactionalIds.values())) {
      try {
        descriptions.set(id, await admin.describeTransaction(id));
      } catch (err) {
        if (err instanceof KafkaError && err.code === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND) descriptions.set(id, null);
        else throw new CliError(`Failed to describe ${new Set(transactionalIds.values()).size} transactions: ${describeError(err)}`);
      }
    }
    for (const [producerId, open] of byProducer) {
      const id = transactionalIds.get(producerId);
      const d = id === undefined ? null : (descriptions.get(id) ?? null);
      // Unknown to every coordinator, or its coordinator's transaction does not cover the
      // partition (so no marker will ever come): hanging.
      for (const t of open) {
        if (!d || !d.topicPartitions.some((p) => p.topic === t.partition.topic && p.partition === t.partition.partition)) hanging.push(t);
      }
    }
  }

  const now = BigInt(Date.now());
  process.stdout.write(
    prettyTable(
      HANGING_HEADERS,
      hanging.map((t) => [
        t.partition.topic,
        String(t.partition.partition),
        String(t.producer.producerId),
        String(t.producer.producerEpoch),
        String(t.producer.coordinatorEpoch),
        String(t.producer.currentTransactionStartOffset),
        String(t.producer.lastTimestamp),
        String((now - t.producer.lastTimestamp) / 60_000n),
      ]),
    ),
  );
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const at = argv.findIndex((a) => (COMMANDS as readonly string[]).includes(a));
  const program = createProgram(
    TOOL,
    'This tool is used to analyze the transactional state of producers in the cluster. It can be used to detect and recover from hanging transactions.',
  )
    .option('--bootstrap-server <host:port>', 'REQUIRED: hostname and port for the broker to connect to')
    .option('--command-config <file>', 'property file containing configs to be passed to admin client')
    .argument('[command]', `one of ${COMMANDS.join(', ')}`);
  const global = parseArgs(program, at < 0 ? argv : argv.slice(0, at)) as { bootstrapServer?: string; commandConfig?: string } | null;
  if (global === null) return 0;
  if (at < 0) {
    const given = program.args[0];
    throw new CliError(
      given === undefined ? `a command is required: one of ${COMMANDS.join(', ')}` : `unknown command '${given}': one of ${COMMANDS.join(', ')}`,
    );
  }
  const command = argv[at] as CommandName;
  const bootstrap = requireOption(global.bootstrapServer, '--bootstrap-server');
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(global.commandConfig), bootstrap)));
  try {
    const rest = argv.slice(at + 1);
    switch (command) {
      case 'list':
        return await listCommand(admin, rest);
      case 'describe':
        return await describeCommand(admin, rest);
      case 'describe-producers':
        return await describeProducersCommand(admin, rest);
      case 'abort':
        return await abortCommand(admin, rest);
      case 'find-hanging':
        return await findHangingCommand(admin, rest);
    }
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
