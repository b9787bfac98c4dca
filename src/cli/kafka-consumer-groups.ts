#!/usr/bin/env node
/**
 * kafka-consumer-groups.sh: list, describe (offsets/lag, members, state; classic and KIP-848
 * consumer groups), reset offsets (dry run unless --execute), delete groups and delete a group's
 * offsets, with Kafka 4's column layout. Fjord's offset history adds --describe --lag-time,
 * --describe --history and --undo-reset (src/cli/common/offset-history.ts).
 */
import { Admin, KafkaError, type ClientOptions, type GroupDescription } from '../client/index.js';
import { collect, createProgram, parseArgs, requireOption, closeAtExit, runTool, CliError, describeError } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';
import { planReset, scopePartitions, type ResetSpec, printResetPlan } from './common/reset-offsets.js';
import type { ZkGroupsOpts } from './common/consumer-groups-zk.js';
import { listClusterGroups, listingGaps, withTimeout } from './common/list-groups.js';
import { noticeState, pad, printMembers, printOffsets, printState, type RecordTimestamps } from './common/describe-groups.js';
import { parseTimePoint } from './common/durations.js';
import { historyKept, readGroupHistory, readSettledHistory } from '../client/offset-history/history-reader.js';
import { historyTopicFilter, printHistory } from './common/history-view.js';
import { undoCommand } from './common/undo-reset.js';
import { planUndoLastReset, planUndoToTime, skippedText } from '../client/offset-history/undo-plan.js';
import { firstRecordTimestamps, type OffsetTarget } from '../client/offset-history/partition-reader.js';

const TOOL = 'kafka-consumer-groups.sh';

interface Opts extends ResetSpec {
  bootstrapServer?: string;
  zookeeper?: string;
  commandConfig?: string;
  list?: boolean;
  describe?: boolean;
  delete?: boolean;
  deleteOffsets?: boolean;
  resetOffsets?: boolean;
  group?: string[];
  allGroups?: boolean;
  topic?: string[];
  allTopics?: boolean;
  members?: boolean;
  verbose?: boolean;
  offsets?: boolean;
  state?: boolean | string;
  dryRun?: boolean;
  execute?: boolean;
  export?: boolean;
  timeout?: string;
  lagTime?: boolean;
  history?: boolean;
  from?: string;
  to?: string;
  undoReset?: boolean;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'List, describe, reset and delete consumer groups.')
    .option('--bootstrap-server <server>', 'REQUIRED: the server(s) to connect to')
    .option('--command-config <file>', 'property file with configs for the admin client')
    .option('--list', 'list all consumer groups')
    .option('--describe', 'describe consumer group(s): offsets and lag, or --members / --state')
    .option('--delete', 'delete consumer group(s)')
    .option('--delete-offsets', "delete a group's offsets of --topic")
    .option('--reset-offsets', "reset a group's offsets (dry run unless --execute)")
    .option('--group <group>', 'the consumer group (repeatable)', collect)
    .option('--all-groups', 'apply to all consumer groups')
    .option('--topic <topic[:partitions]>', 'the topic, optionally with partitions, e.g. t:0,1 (repeatable)', collect)
    .option('--all-topics', 'with --reset-offsets: all topics the group has offsets for')
    .option('--members', 'with --describe: the group members')
    .option('--verbose', "with --members: each member's epoch, current and target assignment; with --state: the group's epochs")
    .option('--offsets', 'with --describe: offsets and lag (the default)')
    .option('--state [state]', 'with --describe: the group state; with --list: show states')
    .option('--dry-run', 'only show the result of the reset')
    .option('--execute', 'perform the reset')
    .option('--export', 'print the reset plan as CSV (topic,partition,offset)')
    .option('--to-earliest', 'reset to the earliest offset')
    .option('--to-latest', 'reset to the latest offset')
    .option('--to-current', 'reset to the current (committed) offset')
    .option('--to-offset <n>', 'reset to this offset')
    .option('--shift-by <n>', 'shift the current offset by n (may be negative)')
    .option('--to-datetime <datetime>', 'reset to the first offset at or after YYYY-MM-DDTHH:mm:SS.sss')
    .option('--by-duration <duration>', 'reset to the offset of now minus a duration (PnDTnHnMnS)')
    .option('--from-file <csv>', 'reset to the offsets in a CSV file (topic,partition,offset)')
    .option('--undo-reset', "put a group's offsets back to before its last reset, or --to-datetime (Fjord: from the offset history)")
    .option('--history', "with --describe: the group's committed offsets over time (Fjord: from the offset history)")
    .option('--from <datetime|duration>', 'with --history: from this time (2026-01-31T12:00:00) or this long ago (30m, 1h, 2d)')
    .option('--to <datetime|duration>', 'with --history: up to this time or this long ago')
    .option('--lag-time', 'with --describe: a LAG-TIME column, the age of the first record not yet consumed (Fjord)')
    .option('--timeout <ms>', "how long --list waits for each broker and --describe for a group's coordinator", '5000');
  const raw = parseArgs(program, argv, { allowZookeeper: true });
  if (raw === null) return 0;
  const o = raw as Opts;
  const actions = (['list', 'describe', 'delete', 'deleteOffsets', 'resetOffsets', 'undoReset'] as const).filter((a) => o[a]);
  if (actions.length !== 1)
    throw new CliError('exactly one of --list, --describe, --delete, --delete-offsets, --reset-offsets or --undo-reset must be given (see --help)');
  if ((o.from !== undefined || o.to !== undefined) && !o.history) throw new CliError('--from and --to go with --describe --history');
  if (o.history && !o.describe) throw new CliError('--history goes with --describe');
  if (o.zookeeper !== undefined) return zookeeperMode(o as Opts & { zookeeper: string });
  if (o.delete && o.topic?.length) throw new CliError('--topic with --delete needs --zookeeper (to delete offsets of a topic use --delete-offsets)');
  const timeoutMs = Number(o.timeout ?? 5000);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new CliError(`--timeout must be a positive number of milliseconds, not ${o.timeout}`);
  const client = clientOptionsFrom(loadPropertiesFile(o.commandConfig), requireOption(o.bootstrapServer, '--bootstrap-server'));
  const admin = closeAtExit(new Admin(client));
  try {
    if (o.list) {
      const listing = await listClusterGroups(admin, timeoutMs);
      const groups = listing.groups.filter((g) => g.protocolType === 'consumer' || g.protocolType === '');
      if (o.state !== undefined) {
        const filter = typeof o.state === 'string' ? o.state.split(',').map((s) => s.trim().toLowerCase()) : null;
        const shown = groups.filter((g) => !filter || filter.includes(g.state.toLowerCase()));
        // Kafka: the group column is the longest id (at least 15) plus 10; the state column 20.
        const groupWidth = Math.max(15, ...shown.map((g) => g.groupId.length)) + 10;
        const line = (g: string, st: string): string => `${pad(g, groupWidth)} ${pad(st, 20)}`;
        console.log(line('GROUP', 'STATE'));
        for (const g of shown) console.log(line(g.groupId, g.state));
      } else {
        for (const g of groups) console.log(g.groupId);
      }
      // The groups it could list are on stdout; each broker or offsets partition it could not
      // reach is one line on stderr, and the exit code says the list is incomplete.
      const gaps = listingGaps(listing);
      for (const gap of gaps) process.stderr.write(`${TOOL}: ${gap}\n`);
      return gaps.length > 0 ? 1 : 0;
    }
    let gaps: string[] = [];
    let groups = o.group ?? [];
    if (o.allGroups) {
      const listing = await listClusterGroups(admin, timeoutMs);
      groups = listing.groups.map((g) => g.groupId);
      gaps = listingGaps(listing);
      if (gaps.length > 0 && !o.describe) throw new CliError(`--all-groups: ${gaps.join('; ')}`);
    }
    if (groups.length === 0 && gaps.length === 0) throw new CliError('missing required argument --group (or --all-groups)');
    if (o.describe) {
      if (o.lagTime && (o.members || o.state !== undefined || o.history))
        throw new CliError('--lag-time goes with the offsets table, not with --members, --state or --history');
      if (o.history) return await describeHistory(admin, client, groups, o, timeoutMs);
      const lagTime = o.lagTime ? (targets: readonly OffsetTarget[]) => firstRecordTimestamps(client, targets, timeoutMs) : undefined;
      const code = await describe(admin, groups, o, timeoutMs, lagTime);
      for (const gap of gaps) process.stderr.write(`${TOOL}: ${gap}\n`);
      return gaps.length > 0 ? 1 : code;
    }
    if (o.delete) {
      const result = await admin.deleteGroups(groups);
      const failed = [...result].filter(([, e]) => e);
      for (const [g, e] of failed) console.log(`Error: Deletion of group '${g}' failed: ${groupError(g, e!)}`);
      const ok = [...result].filter(([, e]) => !e).map(([g]) => `'${g}'`);
      if (ok.length > 0) console.log(`Deletion of requested consumer groups (${ok.join(', ')}) was successful.`);
      return failed.length > 0 ? 1 : 0;
    }
    if (o.deleteOffsets) return await deleteOffsets(admin, groups[0]!, o);
    const undoHint = (group: string) => undoCommand(TOOL, group, o.bootstrapServer!, o.commandConfig);
    if (o.undoReset) return await undoReset(admin, client, groups, o, { timeoutMs, undoHint });
    return await reset(admin, groups, o, undoHint);
  } finally {
    await admin.close();
  }
}

/** The pre-0.9 groups in ZooKeeper (Kafka 0.10/0.11's --zookeeper); options of the newer modes are refused. */
async function zookeeperMode(o: Opts & { zookeeper: string }): Promise<number> {
  if (o.bootstrapServer !== undefined)
    throw new CliError('--zookeeper and --bootstrap-server cannot be used together: --zookeeper is for groups of ZooKeeper-based consumers');
  const notWithZk: [keyof Opts, string][] = [
    ['deleteOffsets', '--delete-offsets'],
    ['members', '--members'],
    ['verbose', '--verbose'],
    ['offsets', '--offsets'],
    ['state', '--state'],
    ['lagTime', '--lag-time'],
    ['history', '--history'],
    ['undoReset', '--undo-reset'],
  ];
  for (const [key, flag] of notWithZk) if (o[key] !== undefined) throw new CliError(`${flag} is not valid with --zookeeper`);
  const { runZkGroups } = await import('./common/consumer-groups-zk.js');
  return runZkGroups(o as ZkGroupsOpts);
}

function groupError(group: string, e: KafkaError): string {
  if (e.code === 69) return `Consumer group '${group}' does not exist.`;
  if (e.code === 68) return `The group is not empty.`;
  return describeError(e);
}

/** A group of either protocol: ConsumerGroupDescribe, else DescribeGroups (as Kafka 4's tool). */
async function describeOne(admin: Admin, group: string): Promise<GroupDescription> {
  const [d] = await admin.describeConsumerGroups([group]);
  if (!d || d.errorCode === 69 || (d.state === 'Dead' && d.members.length === 0)) throw new CliError(`Consumer group '${group}' does not exist.`);
  if (d.errorCode !== 0) throw new KafkaError(d.errorCode, `describing group ${group} failed`);
  return d;
}

async function describe(admin: Admin, groups: string[], o: Opts, timeoutMs: number, lagTime?: RecordTimestamps): Promise<number> {
  for (const group of groups) {
    // Bounded as Kafka's --timeout bounds its describe: a coordinator that is down (until the
    // controller moves its partitions) gives one line, not a wait of the client's retries.
    const d = await withTimeout(
      describeOne(admin, group),
      timeoutMs,
      () => `describing group '${group}' timed out after ${timeoutMs} ms (--timeout): its coordinator could not be reached (down, or moving to another broker)`,
    );
    noticeState(group, d);
    if (o.state !== undefined) printState(group, d, o.verbose ?? false);
    else if (o.members) printMembers(group, d, o.verbose ?? false);
    else await printOffsets(admin, group, d, lagTime);
  }
  return 0;
}

/** --dry-run or --execute, as Kafka's reset checks them (undo-reset too). */
function checkResetMode(o: Opts): void {
  if (o.dryRun && o.execute) throw new CliError('--dry-run and --execute cannot be used together');
  if (!o.dryRun && !o.execute && !o.export) {
    console.log(
      'WARN: No action will be performed as the --execute option is missing. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.',
    );
  }
}

/**
 * Kafka's refusal to reset a group with members (a consumer group's count only by
 * ConsumerGroupDescribe); answers the group's coordinator (for the undo hint).
 */
async function requireInactive(admin: Admin, group: string): Promise<number | undefined> {
  const [d] = await admin.describeConsumerGroups([group]);
  if (d && d.members.length > 0) {
    throw new CliError(`Assignments can only be reset if the group '${group}' is inactive, but the current state is ${d.state}.`);
  }
  return d?.coordinator.nodeId;
}

async function reset(admin: Admin, groups: string[], o: Opts, undoHint: (group: string) => string): Promise<number> {
  if (!o.allTopics && !o.topic?.length && !o.fromFile) throw new CliError('--reset-offsets needs --topic, --all-topics or --from-file');
  checkResetMode(o);
  for (const group of groups) {
    const coordinator = o.execute ? await requireInactive(admin, group) : undefined;
    const scope = o.fromFile ? [] : await scopePartitions(admin, group, o.topic, o.allTopics ?? false);
    const plan = await planReset(admin, group, scope, o);
    if (o.execute) await admin.alterGroupOffsets(group, plan);
    printResetPlan(group, plan, o.export === true);
    if (o.execute) await printUndoHint(admin, coordinator, o, undoHint(group));
  }
  return 0;
}

/** After an executed reset: the command that undoes it, where the cluster keeps an offset history. */
async function printUndoHint(admin: Admin, coordinator: number | undefined, o: Opts, command: string): Promise<void> {
  if (!(await historyKept(admin, coordinator))) return;
  // With --export stdout is the CSV that --from-file reads back: the hint goes to stderr.
  if (o.export) process.stderr.write(`To undo this reset: ${command}\n`);
  else process.stdout.write(`\nTo undo this reset: ${command}\n`);
}

/** --describe --history: the group's changes of committed offsets in the --from/--to window. */
async function describeHistory(admin: Admin, client: ClientOptions, groups: string[], o: Opts, timeoutMs: number): Promise<number> {
  if (o.members || o.state !== undefined) throw new CliError('--history cannot be used with --members or --state');
  // The table has no GROUP column: one group's history at a time.
  if (groups.length !== 1 || o.allGroups) throw new CliError('--history takes one --group');
  const now = Date.now();
  const window = {
    from: o.from !== undefined ? parseTimePoint('--from', o.from, now) : undefined,
    to: o.to !== undefined ? parseTimePoint('--to', o.to, now) : undefined,
  };
  if (window.from !== undefined && window.to !== undefined && window.from > window.to) throw new CliError('--from is after --to');
  const keep = historyTopicFilter(o.topic);
  const group = groups[0]!;
  const entries = (await readGroupHistory(admin, client, group, window, timeoutMs)).filter((e) => !keep || keep(e));
  if (entries.length > 0) printHistory(entries);
  else if (window.from === undefined && window.to === undefined && !keep) throw new CliError(`Consumer group '${group}' has no offset history.`);
  else process.stderr.write(`\nConsumer group '${group}' has no offset history in the given window.\n`);
  return 0;
}

/** --undo-reset: back to before the last reset (or to --to-datetime), executed as a reset. */
async function undoReset(
  admin: Admin,
  client: ClientOptions,
  groups: string[],
  o: Opts,
  how: { timeoutMs: number; undoHint: (group: string) => string },
): Promise<number> {
  const [group] = groups;
  if (groups.length !== 1 || o.allGroups) throw new CliError('--undo-reset takes one --group');
  const other = (['toEarliest', 'toLatest', 'toCurrent', 'toOffset', 'shiftBy', 'byDuration', 'fromFile', 'allTopics'] as const).find(
    (k) => o[k] !== undefined,
  );
  if (other)
    throw new CliError(`--undo-reset takes --to-datetime (or nothing: before the last reset), not --${other.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  const at = o.toDatetime !== undefined ? parseTimePoint('--to-datetime', o.toDatetime, Date.now()) : undefined;
  checkResetMode(o);
  const coordinator = o.execute ? await requireInactive(admin, group!) : undefined;
  const { entries, behind } = await readSettledHistory(admin, client, group!, how.timeoutMs);
  for (const line of behind) process.stderr.write(`WARN the offset history is behind the group's offsets: ${line}\n`);
  if (entries.length === 0) throw new CliError(`Consumer group '${group}' has no offset history.`);
  const undo = at === undefined ? planUndoLastReset(group!, entries) : planUndoToTime(group!, entries, at);
  const keep = historyTopicFilter(o.topic);
  const plan = keep ? undo.plan.filter(keep) : undo.plan;
  for (const skipped of undo.skipped) if (!keep || keep(skipped)) process.stderr.write(`WARN ${skippedText(skipped)}\n`);
  if (o.execute && plan.length > 0) await admin.alterGroupOffsets(group!, plan);
  printResetPlan(group!, plan, o.export === true);
  if (o.execute && plan.length > 0) await printUndoHint(admin, coordinator, o, how.undoHint(group!));
  return 0;
}

async function deleteOffsets(admin: Admin, group: string, o: Opts): Promise<number> {
  if (!o.topic?.length) throw new CliError('--delete-offsets needs --topic');
  const scope = await scopePartitions(admin, group, o.topic, false);
  let result: Map<string, KafkaError | null>;
  try {
    result = await admin.deleteGroupOffsets(group, scope);
  } catch (err) {
    if (err instanceof KafkaError && err.code === 69) throw new CliError(`Consumer group '${group}' does not exist.`);
    if (err instanceof KafkaError && err.code === 86)
      throw new CliError(`Encounter some partition level error, see the follow-up details: the group is actively subscribed to the topic.`);
    throw err;
  }
  const failed = [...result.values()].some((e) => e);
  console.log(
    failed ? `Request failed for deleting offsets of group ${group}` : `Request succeed for deleting offsets with topic ${o.topic.join(', ')} group ${group}`,
  );
  const rows = scope.map((tp) => {
    const e = result.get(`${tp.topic}-${tp.partition}`);
    return [tp.topic, String(tp.partition), e ? `Error: ${describeError(e)}` : 'Successful'];
  });
  // Kafka: "%-30s %-15s %-15s", the header after a blank line.
  const line = (r: readonly string[]): string => `\n${pad(r[0]!, 30)} ${pad(r[1]!, 15)} ${pad(r[2]!, 15)}`;
  process.stdout.write([['TOPIC', 'PARTITION', 'STATUS'], ...rows].map(line).join('') + '\n');
  return failed ? 1 : 0;
}

runTool(TOOL, main);
