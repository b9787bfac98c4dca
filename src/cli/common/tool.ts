/**
 * What every command-line tool shares: a commander program that reports a wrong flag in one
 * line, Kafka's `--zookeeper` forms answered with a clear "not in this mode" line, and a
 * `runTool` wrapper that turns any failure into `<tool>: <message>` on stderr and exit code 1,
 * never a stack trace (FJORD_DEBUG=1 shows the stack).
 */
import { Command, CommanderError, Option } from 'commander';
import { ConnectionError, KafkaError, TimeoutError } from '../../client/index.js';

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

export function createProgram(tool: string, description: string): Command {
  return new Command()
    .name(tool)
    .description(description)
    .helpOption('-h, --help', 'print usage information')
    .addOption(new Option('--zookeeper <hosts>', 'ZooKeeper connection (cluster mode only)').hideHelp())
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: (s) => process.stdout.write(s) })
    .allowExcessArguments(false);
}

/** Parses argv; returns null when commander already handled it (--help) or throws CliError. */
export function parseArgs(program: Command, argv: string[]): Record<string, unknown> | null {
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return null;
      throw new CliError(`${err.message.replace(/^error: /, '')} (see --help)`);
    }
    throw err;
  }
  const opts = program.opts<Record<string, unknown>>();
  if (opts.zookeeper !== undefined) {
    throw new CliError(
      `--zookeeper needs ZooKeeper cluster mode, which this broker does not run; connect with --bootstrap-server host:port instead`,
    );
  }
  return opts;
}

/** One line saying what went wrong, in the user's terms. */
export function describeError(err: unknown): string {
  if (err instanceof CliError) return err.message;
  if (err instanceof KafkaError) return err.message;
  if (err instanceof ConnectionError || err instanceof TimeoutError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Runs a tool's main and exits with its code; errors become one line on stderr. */
export function runTool(tool: string, main: (argv: string[]) => Promise<number | void>): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code ?? 0;
    },
    (err: unknown) => {
      process.stderr.write(`${tool}: ${describeError(err)}\n`);
      if (process.env.FJORD_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
      process.exitCode = err instanceof CliError ? err.exitCode : 1;
    },
  );
}

export function requireOption<T>(value: T | undefined, flag: string): T {
  if (value === undefined || value === '') throw new CliError(`missing required argument ${flag} (see --help)`);
  return value;
}
