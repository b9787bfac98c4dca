/**
 * What kafka-reassign-partitions.sh and kafka-leader-election.sh share: Kafka's JSON files
 * (reassignment version 1, topics-to-move, election partitions) parsed with Kafka's checks and
 * messages, the reassignment JSON printed byte for byte as Kafka prints it, and the
 * controller-only requests (AlterPartitionReassignments, ListPartitionReassignments,
 * ElectLeaders) sent to the controller, following it when a broker answers NOT_CONTROLLER.
 */
import { readFileSync } from 'node:fs';
import { ConnectionError, type Admin } from '../../client/index.js';
import type { ApiDef } from '../../client/apis.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import * as m from '../../protocol/messages/index.js';
import type { Input } from '../../protocol/primitives/index.js';
import { CliError } from './tool.js';

export interface TopicPartition {
  topic: string;
  partition: number;
}

export const tpString = (tp: TopicPartition): string => `${tp.topic}-${tp.partition}`;

/** Kafka's compareTopicPartitions: by topic, then partition number. */
export function compareTopicPartitions(a: TopicPartition, b: TopicPartition): number {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
}

export function readJsonFile(path: string, flag: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CliError('The input string is not a valid JSON');
  }
}

function field(o: unknown, key: string, what: string): unknown {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new CliError(`${what} is not a JSON object`);
  return (o as Record<string, unknown>)[key];
}
function version(js: unknown, what: string): void {
  const v = field(js, 'version', what);
  if (v !== undefined && v !== 1) throw new CliError(`Not supported version field value ${JSON.stringify(v)}`);
}
function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new CliError(`${what} must be a string, got ${JSON.stringify(v)}`);
  return v;
}
function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new CliError(`${what} must be an integer, got ${JSON.stringify(v)}`);
  return v;
}
function array(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new CliError(`${what} must be a JSON array, got ${JSON.stringify(v)}`);
  return v;
}
const duplicates = <T>(xs: readonly T[]): T[] => [...new Set(xs.filter((x, i) => xs.indexOf(x) !== i))];

/** `{"version":1,"topics":[{"topic":"foo"}]}` (Kafka's parseTopicsData, with its duplicate check). */
export function parseTopicsToMove(js: unknown): string[] {
  version(js, 'the topics-to-move JSON');
  const list = field(js, 'topics', 'the topics-to-move JSON');
  const topics = list === undefined ? [] : array(list, '"topics"').map((t, i) => str(field(t, 'topic', `topics[${i}]`), `topics[${i}].topic`));
  const dups = duplicates(topics);
  if (dups.length > 0) throw new CliError(`List of topics to reassign contains duplicate entries: ${dups.join(',')}`);
  return topics;
}

/** `0,1,2` (Kafka's parseGenerateAssignmentArgs). */
export function parseBrokerList(s: string): number[] {
  const ids = s.split(',').map((x) => {
    const n = Number(x.trim());
    if (x.trim() === '' || !Number.isInteger(n)) throw new CliError(`--broker-list expects broker ids separated by commas, got "${s}"`);
    return n;
  });
  const dups = duplicates(ids);
  if (dups.length > 0) throw new CliError(`Broker list contains duplicate entries: ${dups.join(',')}`);
  return ids;
}

export interface ReassignmentEntry extends TopicPartition {
  replicas: number[];
}

/**
 * The reassignment JSON, version 1 (Kafka's parsePartitionReassignmentData). `log_dirs` must match
 * the replicas in length; a log dir other than "any" (a move between a broker's log directories,
 * AlterReplicaLogDirs) is refused: Fjord has one log directory per broker.
 */
export function parseReassignmentJson(js: unknown): ReassignmentEntry[] {
  version(js, 'the reassignment JSON');
  const list = field(js, 'partitions', 'the reassignment JSON');
  const out: ReassignmentEntry[] = [];
  for (const [i, p] of (list === undefined ? [] : array(list, '"partitions"')).entries()) {
    const topic = str(field(p, 'topic', `partitions[${i}]`), `partitions[${i}].topic`);
    const partition = int(field(p, 'partition', `partitions[${i}]`), `partitions[${i}].partition`);
    const replicas = array(field(p, 'replicas', `partitions[${i}]`), `partitions[${i}].replicas`).map((r) => int(r, `partitions[${i}].replicas`));
    const logDirsRaw = field(p, 'log_dirs', `partitions[${i}]`);
    const logDirs =
      logDirsRaw === undefined ? replicas.map(() => 'any') : array(logDirsRaw, `partitions[${i}].log_dirs`).map((d) => str(d, `partitions[${i}].log_dirs`));
    if (logDirs.length !== replicas.length) {
      throw new CliError(
        `Size of replicas list ${listString(replicas)} is different from size of log dirs list ${listString(logDirs)} for partition ${topic}-${partition}`,
      );
    }
    if (logDirs.some((d) => d !== 'any'))
      throw new CliError(`partition ${topic}-${partition}: log_dirs other than "any" (moves between a broker's log directories) are not supported`);
    out.push({ topic, partition, replicas });
  }
  return out;
}

/** Scala's Seq.toString in Kafka's messages. */
const listString = (xs: readonly (number | string)[]): string => `List(${xs.join(', ')})`;

/** Kafka's parseExecuteAssignmentArgs checks. */
export function checkExecuteAssignment(entries: readonly ReassignmentEntry[]): void {
  if (entries.length === 0) throw new CliError('Partition reassignment list cannot be empty');
  if (entries.some((e) => e.replicas.length === 0)) throw new CliError('Partition replica list cannot be empty');
  const dupParts = duplicates(entries.map(tpString));
  if (dupParts.length > 0) throw new CliError(`Partition reassignment contains duplicate topic partitions: ${dupParts.join(',')}`);
  const dupReplicas = entries.map((e) => ({ e, d: duplicates(e.replicas) })).filter((x) => x.d.length > 0);
  if (dupReplicas.length > 0) {
    throw new CliError(
      `Partition replica lists may not contain duplicate entries: ${dupReplicas.map((x) => `${tpString(x.e)} contains multiple entries for ${x.d.join(',')}`).join('. ')}`,
    );
  }
}

/** Kafka's formatAsReassignmentJson: sorted partitions, `log_dirs` all "any", no spaces. */
export function formatAsReassignmentJson(assignment: ReadonlyMap<string, ReassignmentEntry> | readonly ReassignmentEntry[]): string {
  const list = [...(Array.isArray(assignment) ? assignment : (assignment as ReadonlyMap<string, ReassignmentEntry>).values())].sort(compareTopicPartitions);
  return JSON.stringify({
    version: 1,
    partitions: list.map((e) => ({ topic: e.topic, partition: e.partition, replicas: e.replicas, log_dirs: e.replicas.map(() => 'any') })),
  });
}

/** `{"partitions":[{"topic":"t","partition":0}]}` for kafka-leader-election.sh --path-to-json-file. */
export function parseElectionJson(js: unknown): TopicPartition[] {
  const list = array(field(js, 'partitions', 'the election JSON'), '"partitions"');
  const out = list.map((p, i) => ({
    topic: str(field(p, 'topic', `partitions[${i}]`), `partitions[${i}].topic`),
    partition: int(field(p, 'partition', `partitions[${i}]`), `partitions[${i}].partition`),
  }));
  const dups = duplicates(out.map(tpString));
  if (dups.length > 0) throw new CliError(`Replica election data contains duplicate partitions: ${dups.join(',')}`);
  return out;
}

// ---- controller requests -----------------------------------------------------------------------

function apiDef<Req, Res>(apiKey: number, request: ApiDef<Req, Res>['request'], response: ApiDef<Req, Res>['response']): ApiDef<Req, Res> {
  return { apiKey, name: request.name.replace(/Request$/, ''), request, response, clientMax: request.maxVersion };
}
const ALTER = apiDef(45, m.AlterPartitionReassignmentsRequestCodec, m.AlterPartitionReassignmentsResponseCodec);
const LIST = apiDef(46, m.ListPartitionReassignmentsRequestCodec, m.ListPartitionReassignmentsResponseCodec);
const ELECT = apiDef(43, m.ElectLeadersRequestCodec, m.ElectLeadersResponseCodec);

/** How long the tools keep following a moving controller (Kafka's admin client: default.api.timeout.ms). */
const CONTROLLER_RETRY_MS = 30_000;

/**
 * Sends to the controller; a NOT_CONTROLLER answer (the controller moved, or the metadata was
 * stale) refreshes the metadata and tries again until the deadline, as Kafka's admin client does.
 */
async function toController<Req, Res extends { errorCode: number; errorMessage?: string | null }>(
  admin: Admin,
  api: ApiDef<Req, Res>,
  req: Input<Req>,
): Promise<Res> {
  const deadline = Date.now() + CONTROLLER_RETRY_MS;
  let reached = false;
  for (;;) {
    let res: Res;
    try {
      const conn = await admin.cluster.controllerConnection();
      reached = true;
      if (!conn.supports(api as ApiDef<unknown, unknown>)) {
        throw new CliError(`the broker does not support ${api.name} (reassignment and elections need a cluster-mode broker, zookeeper.connect set)`);
      }
      res = await conn.send(api, req);
    } catch (err) {
      // The controller went away (killed, restarting): find the next one, as the admin client
      // does. A cluster never reached fails at once.
      if (!(err instanceof ConnectionError) || !reached || Date.now() >= deadline) throw err;
      admin.cluster.invalidate();
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    if (res.errorCode === ErrorCode.NOT_CONTROLLER && Date.now() < deadline) {
      admin.cluster.invalidate();
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, res.errorMessage ?? undefined);
    return res;
  }
}

export interface OngoingReassignment extends TopicPartition {
  replicas: number[];
  adding: number[];
  removing: number[];
}

export async function listReassignments(admin: Admin, partitions: readonly TopicPartition[] | null = null): Promise<OngoingReassignment[]> {
  const byTopic = new Map<string, number[]>();
  for (const tp of partitions ?? []) (byTopic.get(tp.topic) ?? byTopic.set(tp.topic, []).get(tp.topic)!).push(tp.partition);
  const res = await toController(admin, LIST, {
    timeoutMs: admin.cluster.requestTimeoutMs,
    topics: partitions === null ? null : [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
  });
  return res.topics
    .flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, replicas: p.replicas, adding: p.addingReplicas, removing: p.removingReplicas })),
    )
    .sort(compareTopicPartitions);
}

/** Per partition (tpString) null for success or the error; `replicas` null cancels. */
export async function alterReassignments(
  admin: Admin,
  entries: readonly (TopicPartition & { replicas: number[] | null })[],
): Promise<Map<string, KafkaError | null>> {
  const byTopic = new Map<string, { partitionIndex: number; replicas: number[] | null }[]>();
  for (const e of entries) (byTopic.get(e.topic) ?? byTopic.set(e.topic, []).get(e.topic)!).push({ partitionIndex: e.partition, replicas: e.replicas });
  const res = await toController(admin, ALTER, {
    timeoutMs: admin.cluster.requestTimeoutMs,
    topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
  });
  const out = new Map<string, KafkaError | null>();
  for (const t of res.responses) {
    for (const p of t.partitions) out.set(`${t.name}-${p.partitionIndex}`, p.errorCode === 0 ? null : new KafkaError(p.errorCode, p.errorMessage ?? undefined));
  }
  return out;
}

/** ElectLeaders: per partition the error code (0 = elected). `partitions` null = all. */
export async function electLeaders(
  admin: Admin,
  electionType: 0 | 1,
  partitions: readonly TopicPartition[] | null,
): Promise<{ tp: TopicPartition; errorCode: number; errorMessage: string | null }[]> {
  const byTopic = new Map<string, number[]>();
  for (const tp of partitions ?? []) (byTopic.get(tp.topic) ?? byTopic.set(tp.topic, []).get(tp.topic)!).push(tp.partition);
  const res = await toController(admin, ELECT, {
    electionType,
    topicPartitions: partitions === null ? null : [...byTopic].map(([topic, ps]) => ({ topic, partitions: ps })),
    timeoutMs: admin.cluster.requestTimeoutMs,
  });
  return res.replicaElectionResults
    .flatMap((r) => r.partitionResult.map((p) => ({ tp: { topic: r.topic, partition: p.partitionId }, errorCode: p.errorCode, errorMessage: p.errorMessage })))
    .sort((a, b) => compareTopicPartitions(a.tp, b.tp));
}
