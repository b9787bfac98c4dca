#!/usr/bin/env node
/**
 * kafka-transactions.sh (KIP-664): the transactional state of producers, to find and clear
 * hanging transactions. `--bootstrap-server host:port [--command-config f] COMMAND ...`:
 * - describe-producers --topic t --partition p [--broker-id b]: the producers the leader (or a
 *   replica) tracks, in Kafka's table (columns padded, each followed by a tab);
 * - abort --topic t --partition p (--start-offset o | --producer-id i --producer-epoch e
 *   --coordinator-epoch c): writes the abort marker of a transaction left open there.
 * list, describe and find-hanging need the transaction coordinator (issue 14, not built yet)
 * and say so in one line.
 */
import { Admin } from '../client/index.js';
import type { ProducerStateDescription } from '../client/admin.js';
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
    throw new CliError(`Failed to describe producers for partition ${topic}-${partition} on ${brokerId === undefined ? 'leader' : `broker ${brokerId}`}: ${describeError(err)}`);
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
    throw new CliError('The transaction to abort must be identified either with --start-offset or with --producer-id, --producer-epoch, and --coordinator-epoch');
  }
  try {
    await admin.abortTransaction(spec);
  } catch (err) {
    throw new CliError(`Failed to abort transaction of producer ${spec.producerId} on ${topic}-${partition}: ${describeError(err)}`);
  }
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const at = argv.findIndex((a) => (COMMANDS as readonly string[]).includes(a));
  const program = createProgram(TOOL, 'This tool is used to analyze the transactional state of producers in the cluster. It can be used to detect and recover from hanging transactions.')
    .option('--bootstrap-server <host:port>', 'REQUIRED: hostname and port for the broker to connect to')
    .option('--command-config <file>', 'property file containing configs to be passed to admin client')
    .argument('[command]', `one of ${COMMANDS.join(', ')}`);
  const global = parseArgs(program, at < 0 ? argv : argv.slice(0, at)) as { bootstrapServer?: string; commandConfig?: string } | null;
  if (global === null) return 0;
  if (at < 0) {
    const given = program.args[0];
    throw new CliError(given === undefined ? `a command is required: one of ${COMMANDS.join(', ')}` : `unknown command '${given}': one of ${COMMANDS.join(', ')}`);
  }
  const command = argv[at] as CommandName;
  const bootstrap = requireOption(global.bootstrapServer, '--bootstrap-server');
  if (command === 'list' || command === 'describe' || command === 'find-hanging') {
    throw new CliError(`${command} needs the transaction coordinator (ListTransactions/DescribeTransactions), which Fjord does not have yet`);
  }
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(global.commandConfig), bootstrap)));
  try {
    return command === 'describe-producers' ? await describeProducersCommand(admin, argv.slice(at + 1)) : await abortCommand(admin, argv.slice(at + 1));
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
