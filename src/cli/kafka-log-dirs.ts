#!/usr/bin/env node
/**
 * kafka-log-dirs.sh --describe: prints the log directories of the chosen brokers, and the size
 * and lag of each partition replica in them, as Kafka's tool does: two notice lines, then one
 * line of JSON, `{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"t-0","size":..,
 * "offsetLag":0,"isFuture":false}],"error":null,"logDir":".."}]}],"version":1}`. Keys come in
 * the order Kafka's own output has them, so scripts that compare text keep working.
 */
import { Admin, type LogDirDescription } from '../client/index.js';
import { javaExceptionName } from './common/java-names.js';
import { CliError, createProgram, parseArgs, requireOption, closeAtExit, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-log-dirs.sh';

interface Opts {
  bootstrapServer?: string;
  commandConfig?: string;
  describe?: boolean;
  topicList?: string;
  brokerList?: string;
}

function splitList(s: string | undefined): string[] {
  return (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

export function logDirsJson(dirs: readonly LogDirDescription[], brokers: readonly number[], topics: ReadonlySet<string>): string {
  const out = {
    brokers: brokers.map((broker) => ({
      broker,
      logDirs: dirs
        .filter((d) => d.broker === broker)
        .map((d) => ({
          partitions: d.partitions
            .filter((p) => topics.size === 0 || topics.has(p.topic))
            .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1))
            .map((p) => ({ partition: `${p.topic}-${p.partition}`, size: Number(p.size), offsetLag: Number(p.offsetLag), isFuture: p.isFuture })),
          error: d.errorCode === 0 ? null : javaExceptionName(d.errorCode),
          logDir: d.logDir,
        })),
    })),
    version: 1,
  };
  return JSON.stringify(out);
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Query log directory usage on the specified brokers.')
    .option('--bootstrap-server <server>', 'REQUIRED: the server(s) to use for bootstrapping')
    .option('--command-config <file>', 'property file containing configs to be passed to the admin client')
    .option('--describe', 'describe the specified log directories on the specified brokers')
    .option('--topic-list <list>', 'the topics to query, "topic1,topic2"; all topics when not given', '')
    .option('--broker-list <list>', 'the brokers to query, "0,1,2"; all brokers of the cluster when not given', '');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  const bootstrap = requireOption(o.bootstrapServer, '--bootstrap-server');
  if (!o.describe) throw new CliError('missing required argument --describe (see --help)');
  const wanted = splitList(o.brokerList).map((b) => {
    if (!/^-?\d+$/.test(b)) throw new CliError(`--broker-list must be broker ids like 0,1,2, got "${b}"`);
    return Number(b);
  });
  const options = clientOptionsFrom(loadPropertiesFile(o.commandConfig), bootstrap);
  const admin = closeAtExit(new Admin({ ...options, clientId: options.clientId ?? 'log-dirs-tool' }));
  try {
    const cluster = (await admin.describeCluster()).brokers.map((b) => b.nodeId);
    const missing = wanted.filter((b) => !cluster.includes(b));
    if (missing.length > 0) {
      throw new CliError(`ERROR: The given brokers do not exist from --broker-list: ${missing.join(',')}. Current existent brokers: ${cluster.join(',')}`);
    }
    const brokers = wanted.length > 0 ? [...new Set(wanted)] : cluster;
    console.log('Querying brokers for log directories information');
    const dirs = await admin.describeLogDirs(brokers);
    console.log(`Received log directory information from brokers ${brokers.join(',')}`);
    console.log(logDirsJson(dirs, brokers, new Set(splitList(o.topicList))));
    return 0;
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
