#!/usr/bin/env node
/**
 * kafka-groups.sh (Kafka 4's GroupsCommand, KIP-1043): lists the groups of every type the
 * cluster coordinates, whatever protocol they use (consumer groups old and new, share groups,
 * Connect's and others' classic groups).
 *   kafka-groups.sh --bootstrap-server H:P --list [--group-type classic|consumer|share] [--protocol P]
 *   kafka-groups.sh --bootstrap-server H:P --list --consumer | --share
 * Output as Kafka's: `GROUP TYPE PROTOCOL`, each column left-aligned to the longest value and at
 * least 20 wide (rows keep the column separator after the last value, as Kafka's printf does).
 * The type is what the broker says (ListGroups v5: Classic, Consumer, Share; empty from a broker
 * older than Kafka 3.8); the filters run here over the full listing, as Kafka's tool does:
 * --group-type keeps that type (and --protocol that protocol too), --protocol alone that
 * protocol, --consumer every consumer group (type Consumer, or a classic group whose protocol is
 * `consumer` or empty: simple consumer groups), --share the share groups.
 */
import { Admin, type GroupListing } from '../client/index.js';
import { CliError, closeAtExit, createProgram, parseArgs, requireOption, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-groups.sh';
const DESCRIPTION = 'This tool helps to list groups of all types.';
/** Kafka's GroupType names (parse is case-insensitive; Unknown is no valid filter). */
const GROUP_TYPES = ['classic', 'consumer', 'share'];

interface Options {
  bootstrapServer?: string;
  commandConfig?: string;
  list?: boolean;
  groupType?: string;
  protocol?: string;
  consumer?: boolean;
  share?: boolean;
}

/** Kafka's checkInvalidArgs: --consumer and --share go with no other filter. */
function checkFilters(o: Options): void {
  const given: [flag: string, set: boolean][] = [
    ['consumer', o.consumer === true],
    ['group-type', o.groupType !== undefined],
    ['protocol', o.protocol !== undefined],
    ['share', o.share === true],
  ];
  for (const alone of ['consumer', 'share']) {
    if (!given.find(([f]) => f === alone)![1]) continue;
    const other = given.find(([f, set]) => set && f !== alone);
    if (other) throw new CliError(`Option "[${alone}]" can't be used with option "[${other[0]}]"`);
  }
}

function keep(g: GroupListing, o: Options): boolean {
  const type = g.type?.toLowerCase();
  if (o.groupType !== undefined) return type === o.groupType.toLowerCase() && (o.protocol === undefined || g.protocolType === o.protocol);
  if (o.protocol !== undefined) return g.protocolType === o.protocol;
  if (o.consumer) return g.protocolType === 'consumer' || g.protocolType === '' || type === 'consumer';
  if (o.share) return type === 'share';
  return true;
}

/** Kafka's table: `%-Ns` per column, N the longest value and at least 20. */
function formatGroups(groups: readonly GroupListing[]): string {
  const rows = groups.map((g) => [g.groupId, g.type ?? '', g.protocolType]);
  const width = Math.max(20, ...rows.flat().map((s) => s.length));
  const pad = (s: string) => s.padEnd(width);
  const lines = [`${pad('GROUP')} ${pad('TYPE')} ${pad('PROTOCOL')}`, ...rows.map((r) => r.map((s) => `${pad(s)} `).join(''))];
  return lines.join('\n') + '\n';
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, DESCRIPTION)
    .option('--bootstrap-server <server to connect to>', 'REQUIRED: The Kafka server to connect to.')
    .option('--command-config <command config property file>', 'Property file containing configs to be passed to Admin Client.')
    .option('--list', 'List the groups.')
    .option('--group-type <type>', "Filter the groups based on group type. Valid types are: 'classic', 'consumer' and 'share'.")
    .option('--protocol <protocol>', 'Filter the groups based on protocol type.')
    .option(
      '--consumer',
      "Filter the groups to show all kinds of consumer groups, including classic and simple consumer groups. This matches group type 'consumer', and group type 'classic' where the protocol type is 'consumer' or empty.",
    )
    .option('--share', 'Filter the groups to show share groups.');
  if (argv.length === 0) throw new CliError(`${DESCRIPTION} (see --help)`);
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Options;
  const bootstrap = requireOption(o.bootstrapServer, '--bootstrap-server');
  if (!o.list) throw new CliError('Command must include exactly one action: --list.');
  if (o.groupType !== undefined && !GROUP_TYPES.includes(o.groupType.toLowerCase())) throw new CliError('--group-type must be a valid group type.');
  checkFilters(o);
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), bootstrap)));
  try {
    const groups = await admin.listGroups();
    process.stdout.write(formatGroups(groups.filter((g) => keep(g, o))));
    return 0;
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
