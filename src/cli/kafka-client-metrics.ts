#!/usr/bin/env node
/**
 * kafka-client-metrics.sh (Kafka 3.7+/4.0's org.apache.kafka.tools.ClientMetricsCommand): the
 * client-metrics subscriptions of KIP-714, config resources of type 16, through
 * ListClientMetricsResources, DescribeConfigs and IncrementalAlterConfigs.
 *   --list                                   one name a line
 *   --describe [--name N]                    `Client metrics configs for N are:` + `  key=value`
 *   --alter (--name N | --generate-name) [--metrics m1,m2] [--interval ms] [--match k=v,k2=v2]
 *                                            an empty value deletes that key, as Kafka's does
 *   --delete --name N                        deletes every key (and so the subscription)
 * Argument errors as Kafka's checks word them (one line on stderr, exit 1); a failure once
 * connected is Kafka's `Error while executing client metrics command : <reason>` on stdout, exit 1
 * (no broker answering at all is the one stderr line every tool prints).
 */
import { randomUUID } from 'node:crypto';
import { Admin, BrokersUnreachableError, ConfigResourceType, type ConfigOp } from '../client/index.js';
import { CliError, closeAtExit, createProgram, describeError, parseArgs, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-client-metrics.sh';
const MATCH_SELECTORS = ['client_id', 'client_instance_id', 'client_software_name', 'client_software_version', 'client_source_address', 'client_source_port'];

interface Opts {
  bootstrapServer?: string;
  commandConfig?: string;
  alter?: boolean;
  delete?: boolean;
  describe?: boolean;
  list?: boolean;
  name?: string;
  generateName?: boolean;
  interval?: string;
  metrics?: string;
  match?: string;
}

/** Kafka's checkArgs: exactly one action, and the flags each action takes. */
function check(o: Opts): void {
  const actions = [o.alter, o.delete, o.describe, o.list].filter(Boolean).length;
  if (actions !== 1) throw new CliError('Command must include exactly one action: --alter, --delete, --describe or --list.');
  if (o.bootstrapServer === undefined) throw new CliError('--bootstrap-server must be specified.');
  const invalidWith = (action: string, flags: [string, unknown][]): void => {
    const bad = flags.filter(([, v]) => v !== undefined).map(([f]) => f);
    if (bad.length > 0) throw new CliError(`Option "${action}" can't be used with option "${bad[0]}"`);
  };
  const alterOnly: [string, unknown][] = [
    ['--generate-name', o.generateName],
    ['--interval', o.interval],
    ['--match', o.match],
    ['--metrics', o.metrics],
  ];
  if (o.delete) invalidWith('--delete', alterOnly);
  if (o.describe) invalidWith('--describe', alterOnly);
  if (o.list) invalidWith('--list', [['--name', o.name], ...alterOnly]);
  if (o.alter && (o.name !== undefined) === Boolean(o.generateName)) throw new CliError('One of --name or --generate-name must be specified with --alter.');
  if (o.delete && o.name === undefined) throw new CliError('A client metrics resource name must be specified with --delete.');
  if (o.interval !== undefined && !/^-?\d+$/.test(o.interval.trim())) throw new CliError(`Cannot parse argument '${o.interval}' of option interval`);
}

/** --alter's keys: comma lists joined back as Kafka's tool does; an empty value deletes the key. */
function alterOps(o: Opts): ConfigOp[] {
  const values: [string, string | undefined][] = [
    ['interval.ms', o.interval?.trim()],
    ['metrics', o.metrics === undefined ? undefined : splitList(o.metrics).join(',')],
    ['match', o.match === undefined ? undefined : splitList(o.match).join(',')],
  ];
  const ops: ConfigOp[] = [];
  for (const [name, value] of values) {
    if (value === undefined) continue;
    ops.push(value === '' ? { name, op: 'delete' } : { name, op: 'set', value });
  }
  return ops;
}

function splitList(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

async function configsOf(admin: Admin, name: string): Promise<{ name: string; value: string | null }[]> {
  return admin.describeConfigs(ConfigResourceType.ClientMetrics, name);
}

async function execute(admin: Admin, o: Opts): Promise<void> {
  if (o.list) {
    console.log((await admin.listClientMetricsResources()).join('\n'));
  } else if (o.describe) {
    const names = o.name !== undefined ? [o.name] : await admin.listClientMetricsResources();
    for (const name of names) {
      const entries = await configsOf(admin, name);
      console.log(`Client metrics configs for ${name} are:`);
      for (const e of entries) console.log(`  ${e.name}=${e.value}`);
    }
  } else if (o.alter) {
    const name = o.generateName ? randomUUID() : o.name!;
    await admin.alterConfigs(ConfigResourceType.ClientMetrics, name, alterOps(o));
    console.log(`Altered client metrics config for ${name}.`);
  } else {
    const name = o.name!;
    const existing = await configsOf(admin, name);
    await admin.alterConfigs(
      ConfigResourceType.ClientMetrics,
      name,
      existing.map((e) => ({ name: e.name, op: 'delete' as const })),
    );
    console.log(`Deleted client metrics config for ${name}.`);
  }
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'This tool helps to manipulate and describe client metrics configurations.')
    .option('--bootstrap-server <server>', 'REQUIRED: The Kafka server to connect to.')
    .option('--command-config <file>', 'Property file containing configs to be passed to Admin Client.')
    .option('--alter', 'Alter the configuration for the client metrics resource.')
    .option('--delete', 'Delete the configuration for the client metrics resource.')
    .option('--describe', 'List configurations for the client metrics resource.')
    .option('--list', 'List the client metrics resources.')
    .option('--name <name>', 'Name of client metrics configuration resource.')
    .option('--generate-name', 'Generate a UUID to use as the name.')
    .option('--interval <push interval>', 'The metrics push interval in milliseconds.')
    .option('--match <k1=v1,k2=v2>', `Matching selector 'k1=v1,k2=v2'. The following is a list of valid selector names: ${MATCH_SELECTORS.join(', ')}`)
    .option('--metrics <m1,m2>', "Telemetry metric name prefixes 'm1,m2'.");
  if (argv.length === 0) throw new CliError('This tool helps to manipulate and describe client metrics configurations. (see --help)');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  check(o);
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), o.bootstrapServer)));
  try {
    await execute(admin, o);
    return 0;
  } catch (err) {
    // Nothing answering is said as every tool says it (one stderr line, exit 1).
    if (err instanceof BrokersUnreachableError) throw err;
    console.log(`Error while executing client metrics command : ${describeError(err)}`);
    return 1;
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
