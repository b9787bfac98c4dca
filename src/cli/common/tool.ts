/**
 * What every command-line tool shares: a commander program that reports a wrong flag in one
 * line, Kafka's `--zookeeper` forms answered with a clear "not in this mode" line, and a
 * `runTool` wrapper that turns any failure into `<tool>: <message>` on stderr and exit code 1,
 * never a stack trace (FJORD_DEBUG=1 shows the stack); clients registered with `closeAtExit` are
 * closed however the tool ends, and a finished tool always exits.
 * Output into a closed pipe (`kafka-topics.sh --describe | head -1`) is dropped quietly, as Java's
 * System.out drops it (PrintStream swallows the IOException and sets checkError()): the tool
 * finishes as it would have and exits with its own status, 0 on success, which is what a shell
 * pipeline shows for Kafka's tools too. A tool that streams (the console consumer) asks
 * `outputClosed()` after writing and stops, as Kafka's ConsoleConsumer does.
 */
import { Command, CommanderError, Option } from 'commander';
import { BrokersUnreachableError, ConnectionError, ErrorCode, KafkaError, TimeoutError, errorName } from '../../client/index.js';

/** A failure whose message is meant for the user as is. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Collects a repeatable option into a list (`--property a=b --property c=d`). */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The tool's programs (a tool with sub-commands makes several): their flags tell the user how to pass a setting (withWaitLongerHint). */
const toolPrograms: Command[] = [];

export function createProgram(tool: string, description: string): Command {
  const program = new Command();
  toolPrograms.push(program);
  return program
    .name(tool)
    .description(description)
    .helpOption('-h, --help', 'print usage information')
    .addOption(new Option('--zookeeper <hosts>', 'ZooKeeper connection (cluster mode only)').hideHelp())
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: (s) => process.stdout.write(s) })
    .allowExcessArguments(false);
}

/**
 * Parses argv; returns null when commander already handled it (--help) or throws CliError.
 * `--zookeeper` is refused unless the tool has a ZooKeeper mode (`allowZookeeper`).
 */
export function parseArgs(program: Command, argv: string[], opts: { allowZookeeper?: boolean; zookeeperHelp?: string } = {}): Record<string, unknown> | null {
  const zkOption = program.options.find((x) => x.long === '--zookeeper');
  if (opts.allowZookeeper && zkOption) {
    zkOption.hidden = false;
    zkOption.description =
      opts.zookeeperHelp ?? 'REQUIRED (or --bootstrap-server): ZooKeeper, host:port[,host:port][/chroot]; the tool then writes ZooKeeper as Kafka 1.x did';
  }
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return null;
      throw new CliError(`${err.message.replace(/^error: /, '')} (see --help)`);
    }
    throw err;
  }
  const parsed = program.opts<Record<string, unknown>>();
  if (parsed.zookeeper !== undefined && !opts.allowZookeeper) {
    throw new CliError(`--zookeeper needs ZooKeeper cluster mode, which this broker does not run; connect with --bootstrap-server host:port instead`);
  }
  return parsed;
}

/** Kafka's sentence for the error codes a tool meets; `what` names the topic/group/partition. */
function kafkaSentence(code: number, what: string | undefined): string | null {
  const topic = what?.match(/^topic (\S+)$/)?.[1];
  const group = what?.match(/^group (\S+)$/)?.[1];
  switch (code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
      return topic !== undefined ? `Topic '${topic}' does not exist` : what ? `${what} does not exist` : 'This server does not host this topic-partition.';
    case ErrorCode.GROUP_ID_NOT_FOUND:
      return group !== undefined ? `Consumer group '${group}' does not exist.` : 'The group id does not exist.';
    case ErrorCode.NON_EMPTY_GROUP:
      return group !== undefined ? `Consumer group '${group}' is not empty.` : 'The group is not empty.';
    case ErrorCode.INVALID_TOPIC_EXCEPTION:
      return topic !== undefined ? `Topic name '${topic}' is illegal` : 'The request attempted to perform an operation on an invalid topic.';
    case ErrorCode.TOPIC_ALREADY_EXISTS:
      return topic !== undefined ? `Topic '${topic}' already exists.` : 'Topic with this name already exists.';
    case ErrorCode.LEADER_NOT_AVAILABLE:
      return 'There is no leader for this topic-partition as we are in the middle of a leadership election.';
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
      return 'The coordinator is not available.';
    case ErrorCode.OFFSET_OUT_OF_RANGE:
      return 'The requested offset is not within the range of offsets maintained by the server.';
    case ErrorCode.POLICY_VIOLATION:
      return 'Request parameters do not satisfy the configured policy.';
    case ErrorCode.INVALID_PARTITIONS:
      return 'Number of partitions is below 1.';
    case ErrorCode.INVALID_REPLICATION_FACTOR:
      return 'Replication factor is below 1 or larger than the number of available brokers.';
    case ErrorCode.TOPIC_AUTHORIZATION_FAILED:
      return topic !== undefined ? `Not authorized to access topics: [${topic}]` : 'Topic authorization failed.';
    case ErrorCode.GROUP_AUTHORIZATION_FAILED:
      return group !== undefined ? `Not authorized to access group: ${group}` : 'Group authorization failed.';
    case ErrorCode.UNKNOWN_SERVER_ERROR:
      return 'The server experienced an unexpected error when processing the request.';
    default:
      return null;
  }
}

/**
 * A broker's error as a sentence: raw names (`UNKNOWN_TOPIC_OR_PARTITION (topic t)`, a bare
 * `GROUP_ID_NOT_FOUND`) become Kafka's wording, and a message that only says what failed
 * ("fetching offsets of group g failed") gets the reason added.
 */
function describeKafkaError(err: KafkaError): string {
  const name = errorName(err.code);
  const msg = err.message;
  if (msg === name) return kafkaSentence(err.code, undefined) ?? `${name}: the broker refused the request`;
  const withWhat = msg.match(/^([A-Z_]+) \((.*)\)$/);
  if (withWhat && withWhat[1] === name) return kafkaSentence(err.code, withWhat[2]) ?? `${name} (${withWhat[2]})`;
  const withDetail = msg.match(/^([A-Z_]+): (.*)$/);
  if (withDetail && withDetail[1] === name && withDetail[2]) return withDetail[2];
  if (/ failed$/.test(msg)) return `${msg}: ${kafkaSentence(err.code, undefined) ?? name}`;
  return msg;
}

/** Flags that take one client property as key=value, then flags naming a client properties file. */
const PROPERTY_FLAGS = ['--consumer-property', '--producer-property', '--producer-props'];
const CONFIG_FILE_FLAGS = ['--command-config', '--consumer.config', '--producer.config', '--admin.config'];

/**
 * `message` and how to make this tool wait longer for a server that does not answer: `setting`
 * (a client or ZooKeeper property, in ms) through the tool's own flag, e.g. "...; to wait longer,
 * put default.api.timeout.ms=<ms> in the --command-config file". `flag` overrides the flag
 * found; a tool with no such flag gets the message alone.
 */
export function withWaitLongerHint(message: string, setting: string, flag?: string): string {
  const flags = new Set(toolPrograms.flatMap((p) => p.options.map((o) => o.long)));
  const given = flag ?? PROPERTY_FLAGS.find((f) => flags.has(f)) ?? CONFIG_FILE_FLAGS.find((f) => flags.has(f));
  if (given === undefined) return message;
  if (CONFIG_FILE_FLAGS.includes(given)) return `${message}; to wait longer, put ${setting}=<ms> in the ${given} file`;
  return `${message}; to wait longer, pass ${given} ${setting}=<ms>`;
}

/** One line saying what went wrong, in the user's terms. */
export function describeError(err: unknown): string {
  if (err instanceof CliError) return err.message;
  if (err instanceof BrokersUnreachableError) return withWaitLongerHint(err.message, err.waitLongerSetting);
  if (err instanceof KafkaError) return describeKafkaError(err);
  if (err instanceof ConnectionError || err instanceof TimeoutError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

interface Closable {
  close(): Promise<void>;
}

/** Clients a tool opened, closed by runTool however main ends (an error must not leave a
 * connection, timer or group membership keeping the process alive). */
const openClients = new Set<Closable>();

/** Registers a client for runTool to close when main ends; returns it. */
export function closeAtExit<T extends Closable>(client: T): T {
  openClients.add(client);
  return client;
}

/**
 * Java's PrintStream.checkError(): whether stdout's reader has gone (EPIPE, or any other write
 * error, which PrintStream swallows alike).
 */
let stdoutFailed = false;

export function outputClosed(): boolean {
  return stdoutFailed || process.stdout.destroyed || process.stdout.errored != null;
}

/**
 * Writes to stdout, waiting while the reader is behind; false once the reader has gone (then
 * the text went nowhere, and the caller should stop producing output).
 */
export async function writeOutput(text: string): Promise<boolean> {
  if (outputClosed()) return false;
  if (!process.stdout.write(text) && !outputClosed()) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        process.stdout.off('drain', done);
        process.stdout.off('close', done);
        process.stdout.off('error', done);
        resolve();
      };
      process.stdout.on('drain', done);
      process.stdout.on('close', done);
      process.stdout.on('error', done);
    });
  }
  return !outputClosed();
}

/** Write errors on stdout and stderr are dropped instead of crashing the tool with a stack trace. */
function dropWriteErrors(): void {
  process.stdout.on('error', () => {
    stdoutFailed = true;
  });
  process.stderr.on('error', () => undefined);
}

/** How long closing may take (commit, leave group) before the tool exits anyway. */
const CLOSE_GRACE_MS = 1500;

async function closeAll(): Promise<void> {
  const all = [...openClients];
  openClients.clear();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, CLOSE_GRACE_MS);
  });
  await Promise.race([Promise.allSettled(all.map((c) => c.close())), deadline]);
  clearTimeout(timer);
}

/**
 * Runs a tool's main and exits with its code; errors become one line on stderr. Every client
 * the tool registered with closeAtExit is closed first (bounded), and should anything still
 * hold the event loop open after that, the process exits anyway: a tool that has finished,
 * with success or an error, never hangs.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a tool's main returns its exit code, or nothing for 0
export function runTool(tool: string, main: (argv: string[]) => Promise<number | void>): void {
  dropWriteErrors();
  const finish = async (code: number): Promise<void> => {
    process.exitCode = code;
    await closeAll();
    // unref: when nothing else is left the process ends by itself before this fires.
    setTimeout(() => process.exit(code), CLOSE_GRACE_MS).unref();
  };
  main(process.argv.slice(2)).then(
    (code) => finish(code ?? 0),
    (err: unknown) => {
      process.stderr.write(`${tool}: ${describeError(err)}\n`);
      if (process.env.FJORD_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
      return finish(err instanceof CliError ? err.exitCode : 1);
    },
  );
}

export function requireOption<T>(value: T | undefined, flag: string): T {
  if (value === undefined || value === '') throw new CliError(`missing required argument ${flag} (see --help)`);
  return value;
}
