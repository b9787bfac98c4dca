#!/usr/bin/env node
/**
 * kafka-reassign-partitions.sh, Kafka 3.x's flags and output:
 *   --generate --topics-to-move-json-file F --broker-list 0,1   proposes an assignment (Kafka's
 *       round robin with a random start over the listed brokers, rack-aware unless
 *       --disable-rack-aware) and prints "Current partition replica assignment" and "Proposed
 *       partition reassignment configuration" as version 1 JSON;
 *   --execute --reassignment-json-file F   starts it (AlterPartitionReassignments), printing the
 *       current assignment to keep for a rollback; --additional allows it while others run;
 *   --verify   "Reassignment of partition t-0 is complete." / "... is still in progress.";
 *   --cancel   reverts the listed partitions (AlterPartitionReassignments with null replicas);
 *   --list     the reassignments in progress.
 * With --zookeeper (the Kafka 2.x way) --generate, --execute and --verify read and write
 * ZooKeeper: --execute writes `/admin/reassign_partitions`, which the controller picks up.
 * Fjord does not throttle replication: --throttle and --replica-alter-log-dirs-throttle are
 * accepted and ignored with a note on stderr.
 */
import { Admin } from '../client/index.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { assignReplicas, type AssignableBroker } from '../metadata/replica-assignment.js';
import type { KafkaZkClient } from '../metadata/zk/kafka-zk-client.js';
import { CliError, closeAtExit, createProgram, parseArgs, requireOption, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';
import { openZk } from './common/zk-admin.js';
import {
  alterReassignments,
  checkExecuteAssignment,
  compareTopicPartitions,
  formatAsReassignmentJson,
  listReassignments,
  parseBrokerList,
  parseReassignmentJson,
  parseTopicsToMove,
  readJsonFile,
  tpString,
  type ReassignmentEntry,
  type TopicPartition,
} from './common/reassign.js';

const TOOL = 'kafka-reassign-partitions.sh';

interface Opts {
  bootstrapServer?: string;
  zookeeper?: string;
  commandConfig?: string;
  generate?: boolean;
  execute?: boolean;
  verify?: boolean;
  cancel?: boolean;
  list?: boolean;
  topicsToMoveJsonFile?: string;
  brokerList?: string;
  reassignmentJsonFile?: string;
  disableRackAware?: boolean;
  additional?: boolean;
  throttle?: string;
  replicaAlterLogDirsThrottle?: string;
  preserveThrottles?: boolean;
  timeout?: string;
}

const CANNOT_EXECUTE_EXISTING =
  'Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment.';

/** What the tool needs of the cluster, through the admin client or ZooKeeper. */
interface Backend {
  brokers(): Promise<AssignableBroker[]>;
  /** partition -> replicas of each topic; unknown topics throw. */
  assignment(topics: readonly string[]): Promise<Map<string, ReassignmentEntry>>;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Moves partitions between replicas.')
    .option('--bootstrap-server <server>', 'REQUIRED (or --zookeeper): the server(s) to use for bootstrapping')
    .option('--command-config <file>', 'property file with configs for the admin client')
    .option('--generate', 'generate a candidate partition reassignment configuration (does not execute it)')
    .option('--execute', 'kick off the reassignment as specified by the --reassignment-json-file option')
    .option('--verify', 'verify if the reassignment completed as specified by the --reassignment-json-file option')
    .option('--cancel', 'cancel an active reassignment')
    .option('--list', 'list all active partition reassignments')
    .option('--topics-to-move-json-file <file>', 'with --generate: {"topics": [{"topic": "foo"},{"topic": "foo1"}], "version":1}')
    .option('--broker-list <list>', 'with --generate: the brokers to reassign the partitions to, e.g. "0,1,2"')
    .option('--reassignment-json-file <file>', 'the partition reassignment JSON file (as --generate proposes it)')
    .option('--disable-rack-aware', 'with --generate: assign replicas without rack information')
    .option('--additional', 'with --execute: start the reassignment even if others are in progress')
    .option('--throttle <bytes/s>', 'accepted and ignored: Fjord does not throttle replication')
    .option('--replica-alter-log-dirs-throttle <bytes/s>', 'accepted and ignored')
    .option('--preserve-throttles', 'with --verify/--cancel: do not print the (no-op) throttle clearing lines')
    .option('--timeout <ms>', 'accepted for compatibility (log directory moves are not supported)');
  const raw = parseArgs(program, argv, { allowZookeeper: true });
  if (raw === null) return 0;
  const o = raw as Opts;
  const actions = (['generate', 'execute', 'verify', 'cancel', 'list'] as const).filter((a) => o[a]);
  if (actions.length !== 1) throw new CliError('Command must include exactly one action: --generate, --execute, --verify, --cancel, --list');
  const action = actions[0]!;
  if (o.zookeeper !== undefined && o.bootstrapServer !== undefined) throw new CliError('Only one of --bootstrap-server or --zookeeper must be specified');
  if (o.zookeeper === undefined && o.bootstrapServer === undefined) throw new CliError('Please specify --bootstrap-server');
  if (o.zookeeper !== undefined && (action === 'cancel' || action === 'list'))
    throw new CliError(`--${action} needs --bootstrap-server (it is not supported with --zookeeper)`);
  if (o.throttle !== undefined || o.replicaAlterLogDirsThrottle !== undefined) {
    process.stderr.write('Note: --throttle is ignored: Fjord does not throttle replication, so the reassignment runs at full speed.\n');
  }
  // Parse every file before connecting: bad input fails without touching the cluster.
  let topicsToMove: string[] = [];
  let brokerList: number[] = [];
  let entries: ReassignmentEntry[] = [];
  if (action === 'generate') {
    topicsToMove = parseTopicsToMove(readJsonFile(requireArg(o.topicsToMoveJsonFile, 'topics-to-move-json-file'), '--topics-to-move-json-file'));
    brokerList = parseBrokerList(requireArg(o.brokerList, 'broker-list'));
  } else if (action !== 'list') {
    entries = parseReassignmentJson(readJsonFile(requireArg(o.reassignmentJsonFile, 'reassignment-json-file'), '--reassignment-json-file'));
    if (action === 'execute') checkExecuteAssignment(entries);
  }
  const props = loadPropertiesFile(o.commandConfig);
  if (o.zookeeper !== undefined) {
    const zk = await openZk(o.zookeeper, props);
    const backend = zkBackend(zk);
    if (action === 'generate') return generate(backend, topicsToMove, brokerList, !o.disableRackAware);
    if (action === 'execute') return executeZk(zk, backend, entries);
    return verifyZk(zk, entries);
  }
  const admin = closeAtExit(new Admin(clientOptionsFrom(props, requireOption(o.bootstrapServer, '--bootstrap-server'))));
  const backend = adminBackend(admin);
  switch (action) {
    case 'generate':
      return generate(backend, topicsToMove, brokerList, !o.disableRackAware);
    case 'execute':
      return execute(admin, backend, entries, o.additional === true);
    case 'verify':
      return verify(admin, entries, o.preserveThrottles === true);
    case 'cancel':
      return cancel(admin, entries, o.preserveThrottles === true);
    case 'list':
      return list(admin);
  }
}

function requireArg<T>(v: T | undefined, name: string): T {
  if (v === undefined) throw new CliError(`Missing required argument "[${name}]"`);
  return v;
}

function adminBackend(admin: Admin): Backend {
  return {
    async brokers() {
      return (await admin.describeCluster()).brokers.map((b) => ({ id: b.nodeId, rack: b.rack }));
    },
    async assignment(topics) {
      const out = new Map<string, ReassignmentEntry>();
      for (const t of await admin.describeTopics(topics))
        for (const p of t.partitions) out.set(`${t.name}-${p.partition}`, { topic: t.name, partition: p.partition, replicas: [...p.replicas] });
      return out;
    },
  };
}

function zkBackend(zk: KafkaZkClient): Backend {
  return {
    async brokers() {
      return (await zk.getAllBrokers()).map((b) => ({ id: b.id, rack: b.rack }));
    },
    async assignment(topics) {
      const out = new Map<string, ReassignmentEntry>();
      for (const topic of topics) {
        const a = await zk.getTopicAssignment(topic);
        if (!a) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${topic}' does not exist`);
        for (const [partition, replicas] of a.partitions) out.set(`${topic}-${partition}`, { topic, partition, replicas: [...replicas] });
      }
      return out;
    },
  };
}

/** Kafka's generateAssignment / calculateAssignment: each topic reassigned as a whole over the listed brokers. */
async function generate(backend: Backend, topics: string[], brokerIds: number[], rackAware: boolean): Promise<number> {
  const current = await backend.assignment(topics);
  const chosen = (await backend.brokers()).filter((b) => brokerIds.includes(b.id)).map((b) => (rackAware ? b : { id: b.id, rack: null }));
  const racks = chosen.filter((b) => b.rack !== null).length;
  if (rackAware && racks !== 0 && racks !== chosen.length) {
    throw new CliError('Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.');
  }
  const proposed = new Map<string, ReassignmentEntry>();
  for (const topic of topics) {
    const parts = [...current.values()].filter((e) => e.topic === topic);
    if (parts.length === 0) continue;
    const assigned = assignReplicas(chosen, parts.length, parts[0]!.replicas.length, { rackAware: rackAware ? 'enforced' : 'disabled' });
    for (const [partition, replicas] of assigned) proposed.set(`${topic}-${partition}`, { topic, partition, replicas });
  }
  console.log(`Current partition replica assignment\n${formatAsReassignmentJson(current)}\n`);
  console.log(`Proposed partition reassignment configuration\n${formatAsReassignmentJson(proposed)}`);
  return 0;
}

function currentAssignmentText(entries: readonly ReassignmentEntry[], current: Map<string, ReassignmentEntry>): string {
  const relevant = entries.map((e) => current.get(tpString(e))).filter((e): e is ReassignmentEntry => e !== undefined);
  return `Current partition replica assignment\n\n${formatAsReassignmentJson(relevant)}\n\nSave this to use as the --reassignment-json-file option during rollback`;
}

const partitionsText = (tps: readonly TopicPartition[]): string => [...tps].sort(compareTopicPartitions).map(tpString).join(',');
const plural = (n: number): string => (n === 1 ? '' : 's');

/** Kafka's executeAssignment (admin client). */
async function execute(admin: Admin, backend: Backend, entries: ReassignmentEntry[], additional: boolean): Promise<number> {
  if (!additional && (await listReassignments(admin)).length > 0) throw new CliError(CANNOT_EXECUTE_EXISTING);
  const known = new Set((await backend.brokers()).map((b) => b.id));
  const unknown = entries.flatMap((e) => e.replicas).find((id) => !known.has(id));
  if (unknown !== undefined) throw new CliError(`Unknown broker id ${unknown}`);
  const current = await backend.assignment([...new Set(entries.map((e) => e.topic))]);
  console.log(currentAssignmentText(entries, current));
  const errors = [...(await alterReassignments(admin, entries))].filter(([, e]) => e !== null);
  if (errors.length > 0) {
    const sorted = errors.sort(([a], [b]) => compareTopicPartitions(parseTp(a), parseTp(b)));
    console.log(`Error reassigning partition(s):\n${sorted.map(([tp, e]) => `${tp}: ${e!.message}`).join('\n')}`);
    throw new CliError(`${errors.length} partition reassignment(s) failed (see above)`);
  }
  console.log(`Successfully started partition reassignment${plural(entries.length)} for ${partitionsText(entries)}`);
  return 0;
}

function parseTp(s: string): TopicPartition {
  const i = s.lastIndexOf('-');
  return { topic: s.slice(0, i), partition: Number(s.slice(i + 1)) };
}

/** Kafka's partitionReassignmentStatesToString. */
function statusLines(states: { tp: TopicPartition; current: number[]; target: number[]; done: boolean }[]): string {
  const lines = ['Status of partition reassignment:'];
  for (const s of [...states].sort((a, b) => compareTopicPartitions(a.tp, b.tp))) {
    if (!s.done) lines.push(`Reassignment of partition ${tpString(s.tp)} is still in progress.`);
    else if (s.current.join(',') === s.target.join(',')) lines.push(`Reassignment of partition ${tpString(s.tp)} is complete.`);
    else
      lines.push(
        `There is no active reassignment of partition ${tpString(s.tp)}, but replica set is ${s.current.join(',')} rather than ${s.target.join(',')}.`,
      );
  }
  return lines.join('\n');
}

/** Kafka's verifyAssignment (admin client): ongoing per ListPartitionReassignments, else the topic's replicas. */
async function verify(admin: Admin, entries: ReassignmentEntry[], preserveThrottles: boolean): Promise<number> {
  const ongoing = new Map((await listReassignments(admin)).map((r) => [tpString(r), r]));
  const notOngoing = [...new Set(entries.filter((e) => !ongoing.has(tpString(e))).map((e) => e.topic))];
  const replicas = new Map<string, number[]>();
  for (const topic of notOngoing) {
    try {
      for (const t of await admin.describeTopics([topic])) for (const p of t.partitions) replicas.set(`${t.name}-${p.partition}`, p.replicas);
    } catch (err) {
      if (!(err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) throw err;
    }
  }
  const states = entries.map((e) => {
    const o = ongoing.get(tpString(e));
    return o
      ? { tp: e, current: o.replicas, target: e.replicas, done: false }
      : { tp: e, current: replicas.get(tpString(e)) ?? [], target: e.replicas, done: true };
  });
  console.log(statusLines(states));
  // Kafka prints the (here always empty) log-directory move states: a blank line.
  console.log('');
  if (ongoing.size === 0 && !preserveThrottles) await clearAllThrottles(admin, entries);
  return 0;
}

/**
 * Kafka's clearAllThrottles lines. Fjord sets no replication throttles (--throttle is ignored),
 * so there is nothing to remove; the lines are printed as Kafka prints them, for scripts.
 */
async function clearAllThrottles(admin: Admin, entries: readonly ReassignmentEntry[]): Promise<void> {
  const live = (await admin.describeCluster()).brokers.map((b) => b.nodeId);
  const brokers = [...new Set([...live, ...entries.flatMap((e) => e.replicas)])].sort((a, b) => a - b);
  const topics = [...new Set(entries.map((e) => e.topic))];
  console.log(`Clearing broker-level throttles on broker${plural(brokers.length)} ${brokers.join(',')}`);
  console.log(`Clearing topic-level throttles on topic${plural(topics.length)} ${topics.join(',')}`);
}

/** Kafka's cancelAssignment. */
async function cancel(admin: Admin, entries: ReassignmentEntry[], preserveThrottles: boolean): Promise<number> {
  const active = (await listReassignments(admin, entries)).filter((r) => r.adding.length > 0 || r.removing.length > 0);
  if (active.length === 0) {
    console.log('None of the specified partition reassignments are active.');
    if (!preserveThrottles) await clearAllThrottles(admin, entries);
    return 0;
  }
  const errors = [
    ...(await alterReassignments(
      admin,
      active.map((r) => ({ topic: r.topic, partition: r.partition, replicas: null })),
    )),
  ].filter(([, e]) => e !== null);
  if (errors.length > 0) {
    console.log(`Error cancelling partition reassignment${plural(errors.length)} for:\n${errors.map(([tp, e]) => `${tp}: ${e!.message}`).join('\n')}`);
    throw new CliError(`${errors.length} cancellation(s) failed (see above)`);
  }
  console.log(`Successfully cancelled partition reassignment${plural(active.length)} for: ${partitionsText(active)}`);
  if (!preserveThrottles) await clearAllThrottles(admin, entries);
  return 0;
}

/** Kafka's listReassignments. */
async function list(admin: Admin): Promise<number> {
  const current = await listReassignments(admin);
  if (current.length === 0) {
    console.log('No partition reassignments found.');
    return 0;
  }
  const lines = current.map(
    (r) =>
      `${tpString(r)}: replicas: ${r.replicas.join(',')}.${r.adding.length ? ` adding: ${r.adding.join(',')}.` : ''}${r.removing.length ? ` removing: ${r.removing.join(',')}.` : ''}`,
  );
  console.log(`Current partition reassignments:\n${lines.join('\n')}`);
  return 0;
}

/** Kafka 2.x's --zookeeper --execute: checks, then writes `/admin/reassign_partitions`. */
async function executeZk(zk: KafkaZkClient, backend: Backend, entries: ReassignmentEntry[]): Promise<number> {
  const topics = [...new Set(entries.map((e) => e.topic))];
  const existing = new Map<string, ReassignmentEntry>();
  for (const topic of topics) {
    const a = await zk.getTopicAssignment(topic);
    for (const [partition, replicas] of a?.partitions ?? []) existing.set(`${topic}-${partition}`, { topic, partition, replicas: [...replicas] });
  }
  const missing = entries.filter((e) => !existing.has(tpString(e)));
  if (missing.length > 0) throw new CliError(`The proposed assignment contains non-existent partitions: List(${missing.map(tpString).join(', ')})`);
  const brokerIds = new Set((await backend.brokers()).map((b) => b.id));
  const unknownBrokers = [...new Set(entries.flatMap((e) => e.replicas).filter((id) => !brokerIds.has(id)))];
  if (unknownBrokers.length > 0) throw new CliError(`The proposed assignment contains non-existent brokerIDs: ${unknownBrokers.join(',')}`);
  if ((await zk.getPartitionReassignment()) !== undefined) throw new CliError(CANNOT_EXECUTE_EXISTING);
  console.log(currentAssignmentText(entries, existing));
  try {
    await zk.createPartitionReassignment(entries.map((e) => ({ topic: e.topic, partition: e.partition, replicas: e.replicas })));
  } catch (err) {
    if (err instanceof KafkaError && err.code === 60 /* REASSIGNMENT_IN_PROGRESS */) throw new CliError(CANNOT_EXECUTE_EXISTING);
    throw err;
  }
  console.log(`Successfully started partition reassignment${plural(entries.length)} for ${partitionsText(entries)}`);
  return 0;
}

/** Kafka 2.x's --zookeeper --verify: done = no longer in `/admin/reassign_partitions`. */
async function verifyZk(zk: KafkaZkClient, entries: ReassignmentEntry[]): Promise<number> {
  console.log(
    'Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  Use --bootstrap-server instead for more accurate results.',
  );
  const pending = new Set(((await zk.getPartitionReassignment()) ?? []).map(tpString));
  const replicas = new Map<string, number[]>();
  for (const topic of new Set(entries.map((e) => e.topic))) {
    const a = await zk.getTopicAssignment(topic);
    for (const [p, r] of a?.partitions ?? []) replicas.set(`${topic}-${p}`, r);
  }
  console.log(statusLines(entries.map((e) => ({ tp: e, current: replicas.get(tpString(e)) ?? [], target: e.replicas, done: !pending.has(tpString(e)) }))));
  return 0;
}

runTool(TOOL, main);
