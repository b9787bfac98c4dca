// Entry point behind bin/kafka-server-start.sh:
//   kafka-server-start.sh config/server.properties [--override key=value ...]
// Configuration and usage problems print one line to stderr and exit 1; SIGTERM/SIGINT stop the
// broker cleanly and exit 0. (-daemon is handled by the shell script, which backgrounds this process.)
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../config/index.js';
import { loadBrokerConfig, type BrokerConfig } from './config/index.js';
import { createLogger, type Logger } from './logger.js';
import { startEventLoopReport } from './event-loop-monitor.js';
import { tuneBrokerHeap } from './heap-tuning.js';
import { messageOf } from '../common/errors.js';

export const USAGE = 'USAGE: kafka-server-start.sh [-daemon] server.properties [--override property=value]*';

export interface StartArgs {
  configPath: string;
  overrides: string[];
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Parses the command line (without node and script). Throws UsageError with a one-line message. */
export function parseStartArgs(argv: readonly string[]): StartArgs {
  if (argv[0] === '-daemon') {
    throw new UsageError('-daemon must be handled by bin/kafka-server-start.sh; run the script instead of main.js');
  }
  if (argv.length === 0 || argv[0] === '-h' || argv[0] === '--help') throw new UsageError(USAGE);
  const [configPath, ...rest] = argv;
  if (configPath!.startsWith('-')) throw new UsageError(`Expected a properties file before ${configPath}. ${USAGE}`);
  const overrides: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--override') {
      const value = rest[++i];
      if (value === undefined) throw new UsageError(`--override needs a property=value argument. ${USAGE}`);
      overrides.push(value);
    } else if (arg.startsWith('--override=')) {
      overrides.push(arg.slice('--override='.length));
    } else {
      throw new UsageError(`Unexpected argument ${arg}. ${USAGE}`);
    }
  }
  return { configPath: configPath!, overrides };
}

interface StoppableBroker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs the broker until a signal; resolves with the process exit code. */
export async function runServer(argv: readonly string[]): Promise<number> {
  let args: StartArgs;
  let config: BrokerConfig;
  const logger: Logger = createLogger('fjord');
  const heapSetting = tuneBrokerHeap();
  try {
    args = parseStartArgs(argv);
    logger.info(`loading configuration from ${path.resolve(args.configPath)}`);
    config = loadBrokerConfig(args.configPath, args.overrides, { warn: (msg) => logger.warn(msg) });
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  }
  logger.info(
    { brokerId: config.brokerId, logDirs: config.logDirs, zookeeper: config.zookeeperConnect ?? 'embedded' },
    `configuration loaded: broker.id=${config.brokerId}, ${config.zookeeperConnect === null ? 'embedded single-broker mode' : `zookeeper ${config.zookeeperConnect}`}`,
  );
  logger.info(heapSetting);

  // Every log directory exists (created if missing) and is a usable directory before anything
  // else starts: one line for each that is not, and exit 1.
  const { checkLogDirs } = await import('../storage/manager/log-dirs.js');
  const badDirs = await checkLogDirs(config.logDirs);
  if (badDirs.length > 0) {
    for (const line of badDirs) {
      logger.error(line);
      process.stderr.write(`${line}\n`);
    }
    return 1;
  }

  // Loaded lazily so that usage and configuration errors answer fast.
  const { Broker } = await import('./broker.js');
  const broker: StoppableBroker = new Broker(config, logger);
  logger.info('starting broker');
  try {
    await broker.start();
  } catch (err) {
    const message = messageOf(err);
    logger.error({ err: message }, 'broker start-up failed');
    process.stderr.write(`Fjord start-up failed: ${message}\n`);
    await broker.stop().catch(() => undefined);
    return 1;
  }
  logger.info('broker started');
  const stopReport = startEventLoopReport(logger.child({ component: 'event-loop' }));
  return waitForShutdownSignal(broker, logger).finally(stopReport);
}

function waitForShutdownSignal(broker: StoppableBroker, logger: Logger): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        logger.warn(`${signal} received again during shutdown; exiting now`);
        resolve(1);
        return;
      }
      stopping = true;
      logger.info(`${signal} received; shutting down`);
      broker.stop().then(
        () => {
          logger.info('broker stopped');
          resolve(0);
        },
        (err: unknown) => {
          logger.error({ err: messageOf(err) }, 'error during shutdown');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  return entry !== undefined && import.meta.url === pathToFileURL(path.resolve(entry)).href;
}

/**
 * FJORD_PID_FILE (set by `kafka-server-start.sh -daemon` to $LOG_DIR/fjordServer.pid): the file
 * holds this process's pid while it runs and is removed when it exits, unless another broker has
 * taken it over meanwhile.
 */
function keepPidFile(file: string | undefined): void {
  if (!file) return;
  try {
    writeFileSync(file, `${process.pid}\n`);
  } catch (err) {
    process.stderr.write(`Cannot write the pid file ${file}: ${messageOf(err)}\n`);
    return;
  }
  process.on('exit', () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
    } catch {
      // already gone
    }
  });
}

if (isEntryPoint()) {
  keepPidFile(process.env.FJORD_PID_FILE);
  runServer(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      createLogger('fjord').fatal({ err: err instanceof Error ? err.stack : String(err) }, 'unexpected error');
      process.exit(1);
    },
  );
}
