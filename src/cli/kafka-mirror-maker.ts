#!/usr/bin/env node
/**
 * kafka-mirror-maker.sh: Kafka's classic MirrorMaker (1): --num.streams consumers in the group of
 * --consumer.config read the topics matching --include (a Java regex; commas mean "or", as
 * Kafka's include list) from the source cluster, and one producer (--producer.config) writes
 * every record to the same topic on the target cluster with its key, value, headers and
 * timestamp, the partition chosen by the producer's partitioner. Offsets are committed only
 * after the records are acknowledged (mirror-maker/mirror-stream.ts), so a stop, a crash or a
 * restart loses nothing (records may be mirrored twice: at least once, as Kafka's). Kafka's
 * no-data-loss defaults apply unless the files say otherwise: acks=all,
 * delivery.timeout.ms=2147483647, max.in.flight.requests.per.connection=1,
 * enable.auto.commit=false. It runs until SIGINT/SIGTERM (then flushes, commits and exits 0);
 * a failed send with --abort.on.send.failure true (the default) stops it with exit code 255
 * (Kafka's exit(-1)) and no commit. Custom message handlers and rebalance listeners are Java
 * classes Fjord cannot load: refused with a clear line.
 */
import { Consumer, Producer } from '../client/index.js';
import { CliError, closeAtExit, createProgram, describeError, parseArgs, runTool } from './common/tool.js';
import { consumerOptionsFrom, loadPropertiesFile, producerOptionsFrom } from './common/config.js';
import { includePattern } from './common/include-list.js';
import { MirrorStream, type MirrorState } from './mirror-maker/mirror-stream.js';

const TOOL = 'kafka-mirror-maker.sh';

interface Opts {
  'consumer.config'?: string;
  'producer.config'?: string;
  include?: string;
  whitelist?: string;
  'num.streams': string;
  'offset.commit.interval.ms': string;
  'abort.on.send.failure': string;
  'message.handler'?: string;
  'message.handler.args'?: string;
  'consumer.rebalance.listener'?: string;
  'rebalance.listener.args'?: string;
}

function intOption(value: string, flag: string, min: number): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > 0x7fffffff) {
    throw new CliError(`${flag} must be an integer of at least ${min}, got "${value}"`);
  }
  return Number(value);
}

/** Sets a default the way Kafka's maybeSetDefaultProperty does, saying when the file overrides it. */
function defaultProperty(props: Map<string, string>, key: string, value: string, file: string): void {
  const given = props.get(key);
  if (given === undefined) props.set(key, value);
  else if (given.trim() !== value)
    process.stderr.write(`Property ${key} is overridden to ${given} in ${file} - data loss or message reordering is possible.\n`);
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Continuously copy data between two Kafka clusters.')
    .option('--consumer.config <file>', 'REQUIRED: embedded consumer config for consuming from the source cluster (bootstrap.servers, group.id)')
    .option('--producer.config <file>', 'REQUIRED: embedded producer config (bootstrap.servers of the target cluster)')
    .option('--include <regex>', 'REQUIRED (or --whitelist): Java regex of the topics to mirror (commas mean "or")')
    .option('--whitelist <regex>', 'DEPRECATED, use --include')
    .option('--num.streams <n>', 'number of consumption streams (consumers in the group)', '1')
    .option('--offset.commit.interval.ms <ms>', 'offset commit interval in ms', '60000')
    .option('--abort.on.send.failure <bool>', 'stop the whole mirror maker when a send fails (true/false)', 'true')
    .option('--message.handler <class>', 'a custom MirrorMakerMessageHandler class (not supported: Fjord cannot load Java classes)')
    .option('--message.handler.args <args>', 'arguments of the custom message handler')
    .option('--consumer.rebalance.listener <class>', 'a custom ConsumerRebalanceListener class (not supported: Fjord cannot load Java classes)')
    .option('--rebalance.listener.args <args>', 'arguments of the custom rebalance listener')
    .option('--new.consumer', 'DEPRECATED: the new consumer is the only one');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as unknown as Opts;
  const consumerFile = o['consumer.config'];
  const producerFile = o['producer.config'];
  if (!consumerFile) throw new CliError('missing required argument --consumer.config (see --help)');
  if (!producerFile) throw new CliError('missing required argument --producer.config (see --help)');
  for (const flag of ['message.handler', 'consumer.rebalance.listener'] as const) {
    const cls = o[flag];
    if (cls !== undefined) {
      throw new CliError(`--${flag} ${cls}: Fjord cannot load Java classes; only the default handling (every record copied as it is) is available`);
    }
  }
  const list = o.include ?? o.whitelist;
  if (list === undefined) throw new CliError('include list must be specified: --include (or the deprecated --whitelist)');
  const include = includePattern(list);
  const numStreams = intOption(o['num.streams'], '--num.streams', 1);
  const state: MirrorState = {
    abortOnSendFailure: o['abort.on.send.failure'].trim().toLowerCase() === 'true', // Java's toBoolean
    syncSends: false,
    offsetCommitIntervalMs: intOption(o['offset.commit.interval.ms'], '--offset.commit.interval.ms', 0),
    shuttingDown: false,
    sendFailure: null,
    droppedMessages: 0,
    warn: (line) => process.stderr.write(`WARN ${line}\n`),
  };

  const consumerProps = loadPropertiesFile(consumerFile);
  const groupId = consumerProps.get('group.id')?.trim();
  if (!consumerProps.get('bootstrap.servers')) throw new CliError(`bootstrap.servers of the source cluster is missing from ${consumerFile}`);
  if (!groupId) throw new CliError(`group.id is missing from ${consumerFile}: the mirror maker consumes in a group and commits its offsets there`);
  defaultProperty(consumerProps, 'enable.auto.commit', 'false', consumerFile);

  const producerProps = loadPropertiesFile(producerFile);
  if (!producerProps.get('bootstrap.servers')) throw new CliError(`bootstrap.servers of the target cluster is missing from ${producerFile}`);
  state.syncSends = producerProps.get('producer.type')?.trim() === 'sync';
  producerProps.delete('producer.type');
  defaultProperty(producerProps, 'delivery.timeout.ms', '2147483647', producerFile);
  defaultProperty(producerProps, 'acks', 'all', producerFile);
  defaultProperty(producerProps, 'max.in.flight.requests.per.connection', '1', producerFile);
  const producerOptions = producerOptionsFrom(producerProps, undefined);
  const maxInFlight = Number(producerProps.get('max.in.flight.requests.per.connection'));
  const producer = closeAtExit(
    new Producer({
      ...producerOptions,
      clientId: producerOptions.clientId ?? 'mirror-maker-producer',
      maxInFlight: Number.isInteger(maxInFlight) && maxInFlight > 0 ? maxInFlight : 1,
    }),
  );

  const streams: MirrorStream[] = [];
  for (let i = 0; i < numStreams; i++) {
    // As Kafka: each stream's client id is <group>-<index>.
    const consumer = closeAtExit(new Consumer({ ...consumerOptionsFrom(consumerProps, undefined), clientId: `${groupId}-${i}` }));
    streams.push(new MirrorStream(consumer, producer, state, include));
  }
  const stop = (): void => {
    state.shuttingDown = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  // A stream that dies stops the others (Kafka exits the whole mirror maker).
  const outcomes = await Promise.allSettled(
    streams.map((s) =>
      s.run().catch((err: unknown) => {
        state.shuttingDown = true;
        throw err;
      }),
    ),
  );
  await producer.close().catch(() => undefined);
  const crashed = outcomes.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const why: unknown = state.sendFailure ?? crashed?.reason;
  if (why !== undefined) {
    throw new CliError(`Mirror maker thread exited abnormally, stopping the whole mirror maker: ${describeError(why)}`, 255);
  }
  process.stderr.write(
    `Kafka mirror maker shutdown successfully${state.droppedMessages > 0 ? ` (${state.droppedMessages} messages dropped on send failures)` : ''}\n`,
  );
  return 0;
}

runTool(TOOL, main);
