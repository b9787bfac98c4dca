#!/usr/bin/env node
/**
 * kafka-features.sh (Kafka 3.9's FeatureCommand): describes and changes the cluster's feature
 * flags (KIP-584) through ApiVersions and UpdateFeatures.
 *   kafka-features.sh --bootstrap-server H:P describe
 *   kafka-features.sh --bootstrap-server H:P upgrade --feature f=2 [--feature g=1] [--metadata 3.9-IV0] [--dry-run]
 *   kafka-features.sh --bootstrap-server H:P downgrade --feature f=1 [--unsafe] [--dry-run]
 *   kafka-features.sh --bootstrap-server H:P disable --feature f [--unsafe] [--dry-run]
 * Output as Kafka's: one line per supported feature
 * (`Feature: f\tSupportedMinVersion: 1\tSupportedMaxVersion: 3\tFinalizedVersionLevel: 2\tEpoch: 5`,
 * metadata.version levels by release name), and per update, in feature order, `f was upgraded to 2.`
 * (`can be` with --dry-run) or `Could not upgrade f to 2. <broker's reason>` (`Can not` with
 * --dry-run); any failure ends with `N out of M operation(s) failed.` and exit code 1. A Fjord
 * broker, like a Kafka 3.9 broker in ZooKeeper mode, supports no feature flag: describe prints
 * nothing and every upgrade is refused (docs/configuration.md#feature-flags).
 * --bootstrap-controller (KRaft's controllers) has nothing to reach in Fjord and is refused.
 */
import { describeFeatures, updateFeatures, type FeatureUpdate } from '../client/admin-features.js';
import { Cluster } from '../client/cluster.js';
import { CliError, closeAtExit, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-features.sh';

/** Kafka 3.9's metadata.version levels by release (MetadataVersion), from the first KRaft one. */
const METADATA_VERSIONS: readonly string[] = [
  '3.0-IV1',
  '3.1-IV0',
  '3.2-IV0',
  '3.3-IV0',
  '3.3-IV1',
  '3.3-IV2',
  '3.3-IV3',
  '3.4-IV0',
  '3.5-IV0',
  '3.5-IV1',
  '3.5-IV2',
  '3.6-IV0',
  '3.6-IV1',
  '3.6-IV2',
  '3.7-IV0',
  '3.7-IV1',
  '3.7-IV2',
  '3.7-IV3',
  '3.7-IV4',
  '3.8-IV0',
  '3.9-IV0',
];
const METADATA_VERSION = 'metadata.version';
/** Kafka's MINIMUM_BOOTSTRAP_VERSION: the oldest release --metadata accepts. */
const FIRST_BOOTSTRAP = METADATA_VERSIONS.indexOf('3.3-IV0');

const USAGE = `Usage: kafka-features.sh [options] (--bootstrap-server BOOTSTRAP_SERVER | --bootstrap-controller BOOTSTRAP_CONTROLLER)
                      [--command-config COMMAND_CONFIG] {describe,upgrade,downgrade,disable} ...

This tool manages feature flags in Kafka.

positional arguments:
  {describe,upgrade,downgrade,disable}
    describe             Describes the current active feature flags.
    upgrade              Upgrade one or more feature flags.
    downgrade            Upgrade one or more feature flags.
    disable              Disable one or more feature flags. This is the same as downgrading the version to zero.

named arguments:
  -h, --help             show this help message and exit
  --bootstrap-server BOOTSTRAP_SERVER
                         A comma-separated list of host:port pairs to use for establishing the connection to the Kafka cluster.
  --bootstrap-controller BOOTSTRAP_CONTROLLER
                         A comma-separated list of host:port pairs to use for establishing the connection to the KRaft quorum.
  --command-config COMMAND_CONFIG
                         Property file containing configs to be passed to Admin Client.

upgrade/downgrade: --feature FEATURE=LEVEL (repeatable), --metadata RELEASE (DEPRECATED), --release-version RELEASE,
                   --dry-run, and for downgrade --unsafe
disable:           --feature FEATURE (repeatable), --unsafe, --dry-run
`;

/** An argparse-style command line error: Kafka prints it with a pointer to --help. */
function usageError(message: string): CliError {
  return new CliError(`Command line error: ${message}. Type --help for help.`);
}

interface Parsed {
  bootstrapServer?: string;
  commandConfig?: string;
  command?: string;
  features: string[];
  metadata?: string;
  releaseVersion?: string;
  dryRun: boolean;
  unsafe: boolean;
  help: boolean;
}

const SUBCOMMAND_FLAGS: Readonly<Record<string, readonly string[]>> = {
  describe: [],
  upgrade: ['--feature', '--metadata', '--release-version', '--dry-run'],
  downgrade: ['--feature', '--metadata', '--release-version', '--unsafe', '--dry-run'],
  disable: ['--feature', '--unsafe', '--dry-run'],
};

function parse(argv: readonly string[]): Parsed {
  const p: Parsed = { features: [], dryRun: false, unsafe: false, help: false };
  const value = (i: number, flag: string): string => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw usageError(`argument ${flag}: expected one argument`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-h' || a === '--help') {
      p.help = true;
      continue;
    }
    if (p.command === undefined) {
      if (a === '--bootstrap-server') p.bootstrapServer = value(i++, a);
      else if (a === '--bootstrap-controller') {
        value(i++, a);
        throw new CliError('--bootstrap-controller is not supported: Fjord has no KRaft controllers; use --bootstrap-server');
      } else if (a === '--command-config') p.commandConfig = value(i++, a);
      else if (a in SUBCOMMAND_FLAGS) p.command = a;
      else if (a.startsWith('-')) throw usageError(`unrecognized arguments: '${a}'`);
      else throw usageError(`argument command: invalid choice: '${a}' (choose from 'describe', 'upgrade', 'downgrade', 'disable')`);
      continue;
    }
    if (!SUBCOMMAND_FLAGS[p.command]!.includes(a)) throw usageError(`unrecognized arguments: '${a}'`);
    if (a === '--feature') p.features.push(value(i++, a));
    else if (a === '--metadata') p.metadata = value(i++, a);
    else if (a === '--release-version') p.releaseVersion = value(i++, a);
    else if (a === '--dry-run') p.dryRun = true;
    else if (a === '--unsafe') p.unsafe = true;
  }
  return p;
}

/** Kafka's parseNameAndLevel: `name=level`, the level a Java short. */
function parseNameAndLevel(input: string): [string, number] {
  const eq = input.indexOf('=');
  if (eq < 0) throw new CliError(`Can't parse feature=level string ${input}: equals sign not found.`);
  const name = input.slice(0, eq).trim();
  const text = input.slice(eq + 1).trim();
  const level = Number(text);
  if (!/^[+-]?\d+$/.test(text) || level < -32768 || level > 32767) {
    throw new CliError(`Can't parse feature=level string ${input}: unable to parse ${text} as a short.`);
  }
  return [name, level];
}

function metadataLevel(release: string): number {
  const i = METADATA_VERSIONS.indexOf(release);
  if (i < FIRST_BOOTSTRAP) {
    throw new CliError(`Unknown metadata.version ${release}. Supported metadata.version are ${METADATA_VERSIONS.slice(FIRST_BOOTSTRAP).join(', ')}`);
  }
  return i + 1;
}

/** A level as Kafka prints it: metadata.version by its release name. */
function levelToString(feature: string, level: number): string {
  if (feature !== METADATA_VERSION) return String(level);
  return METADATA_VERSIONS[level - 1] ?? `UNKNOWN ${level}`;
}

async function describe(cluster: Cluster): Promise<void> {
  const md = await describeFeatures(cluster);
  for (const feature of [...md.supported.keys()].sort()) {
    const range = md.supported.get(feature)!;
    const finalized = md.finalized.get(feature) ?? 0;
    console.log(
      `Feature: ${feature}\tSupportedMinVersion: ${levelToString(feature, range.min)}\tSupportedMaxVersion: ${levelToString(feature, range.max)}\t` +
        `FinalizedVersionLevel: ${levelToString(feature, finalized)}\tEpoch: ${md.epoch ?? '-'}`,
    );
  }
}

function updatesOf(op: string, p: Parsed): Map<string, FeatureUpdate> {
  const upgradeType: FeatureUpdate['upgradeType'] = op === 'upgrade' ? 1 : p.unsafe ? 3 : 2;
  const updates = new Map<string, FeatureUpdate>();
  const add = (name: string, level: number): void => {
    if (updates.has(name)) throw new CliError(`Feature ${name} was specified more than once.`);
    updates.set(name, { level, upgradeType });
  };
  if (op === 'disable') {
    for (const f of p.features) add(f, 0);
    return updates;
  }
  if (p.releaseVersion !== undefined && (p.metadata !== undefined || p.features.length > 0)) {
    throw new CliError('Can not specify `release-version` with other feature flags.');
  }
  if (p.releaseVersion !== undefined) add(METADATA_VERSION, metadataLevel(p.releaseVersion));
  if (p.metadata !== undefined) {
    console.log(' `metadata` flag is deprecated and may be removed in a future release.');
    add(METADATA_VERSION, metadataLevel(p.metadata));
  }
  for (const f of p.features) add(...parseNameAndLevel(f));
  return updates;
}

async function update(cluster: Cluster, op: string, p: Parsed): Promise<void> {
  const updates = updatesOf(op, p);
  if (updates.size === 0) throw new CliError(`You must specify at least one feature to ${op}`);
  const outcomes = await updateFeatures(cluster, updates, { validateOnly: p.dryRun });
  let failures = 0;
  for (const feature of [...outcomes.keys()].sort()) {
    const err = outcomes.get(feature);
    const level = updates.get(feature)!.level;
    if (err) {
      failures++;
      const what = op === 'disable' ? `disable ${feature}` : `${op} ${feature} to ${level}`;
      console.log(`${p.dryRun ? 'Can not' : 'Could not'} ${what}. ${err.message}`);
    } else {
      console.log(`${feature}${p.dryRun ? ' can be ' : ' was '}${op === 'disable' ? 'disabled.' : `${op}d to ${level}.`}`);
    }
  }
  if (failures > 0) throw new CliError(`${failures} out of ${updates.size} operation(s) failed.`);
}

async function main(argv: string[]): Promise<number> {
  const p = parse(argv);
  if (p.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (p.bootstrapServer === undefined) throw usageError('one of the arguments --bootstrap-server --bootstrap-controller is required');
  if (p.command === undefined) throw usageError('too few arguments');
  const cluster = closeAtExit(new Cluster(clientOptionsFrom(loadPropertiesFile(p.commandConfig), p.bootstrapServer)));
  if (p.command === 'describe') await describe(cluster);
  else await update(cluster, p.command, p);
  return 0;
}

runTool(TOOL, main);
