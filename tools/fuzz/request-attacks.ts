/**
 * Single requests that name many resources (issue 21, F1 and F2(b)): each is small on the wire
 * and, unbounded, makes the broker hold its event loop or build a huge answer. `runAttack` sends
 * one while a well-behaved client beside it asks Metadata of a steady topic back to back, and
 * reports what that client waited, what the broker reported of its own loop, its RSS, and the
 * answer's size and time. Used by request-attacks-main.ts (figures for docs/limits.md) and the
 * liveness tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Input, MessageCodec } from '../../src/protocol/primitives/index.js';
import { API_SPECS } from '../../src/protocol/messages/index.js';
import type {
  AddPartitionsToTxnRequest,
  AlterClientQuotasRequest,
  AlterConfigsRequest,
  CreateAclsRequest,
  DeleteRecordsRequest,
  FetchRequest,
  FindCoordinatorRequest,
  IncrementalAlterConfigsRequest,
  OffsetCommitRequest,
  OffsetDeleteRequest,
  TxnOffsetCommitRequest,
  WriteTxnMarkersRequest,
  CreatePartitionsRequest,
  CreateTopicsRequest,
  DeleteGroupsRequest,
  DeleteTopicsRequest,
  DescribeConfigsRequest,
  DescribeGroupsRequest,
  DescribeProducersRequest,
  DescribeTransactionsRequest,
  ListOffsetsRequest,
  MetadataRequest,
  OffsetFetchRequest,
  OffsetForLeaderEpochRequest,
  ProduceRequest,
} from '../../src/protocol/messages/index.js';
import { decodeResponse, encodeRequest } from './wire.js';

/** Topics and a group the attacks name; the runner creates them before the first attack. */
export const STEADY_TOPIC = 'attack-steady';
export const WIDE_TOPIC = 'attack-wide';
export const WIDE_PARTITIONS = 100;
export const BIG_GROUP = 'attack-group';

export interface Attack {
  name: string;
  description: string;
  apiKey: number;
  version: number;
  /** The request body, for a size factor `n` (names or entries in the request). */
  body(n: number): unknown;
  /** n at the scale. */
  n: number;
}

const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
const attack = <T>(a: Omit<Attack, 'body'> & { body(n: number): Input<T> }): Attack => a as Attack;

export const ATTACKS: readonly Attack[] = [
  attack<MetadataRequest>({
    name: 'metadata-auto-create',
    apiKey: 3,
    version: 12,
    n: 100_000,
    description: 'Metadata v12 naming n new topics, allow_auto_topic_creation=true (F1)',
    body: (n) => ({ topics: range(n, (i) => ({ name: `auto-${i}` })), allowAutoTopicCreation: true }),
  }),
  attack<MetadataRequest>({
    name: 'metadata-same-topic',
    apiKey: 3,
    version: 12,
    n: 50_000,
    description: `Metadata v12 naming the ${WIDE_PARTITIONS}-partition topic n times`,
    body: (n) => ({ topics: range(n, () => ({ name: WIDE_TOPIC })), allowAutoTopicCreation: false }),
  }),
  attack<DescribeConfigsRequest>({
    name: 'describe-configs-broker',
    apiKey: 32,
    version: 4,
    n: 10_000,
    description: 'DescribeConfigs v4 naming broker "0" n times, with synonyms and documentation (F2)',
    body: (n) => ({
      resources: range(n, () => ({ resourceType: 4, resourceName: '0', configurationKeys: null })),
      includeSynonyms: true,
      includeDocumentation: true,
    }),
  }),
  attack<DescribeConfigsRequest>({
    name: 'describe-configs-topic',
    apiKey: 32,
    version: 4,
    n: 10_000,
    description: 'DescribeConfigs v4 naming one topic n times, with synonyms and documentation',
    body: (n) => ({
      resources: range(n, () => ({ resourceType: 2, resourceName: WIDE_TOPIC, configurationKeys: null })),
      includeSynonyms: true,
      includeDocumentation: true,
    }),
  }),
  attack<ListOffsetsRequest>({
    name: 'list-offsets',
    apiKey: 2,
    version: 7,
    n: 100_000,
    description: 'ListOffsets v7 asking n partitions of one topic (the same 100 over and over)',
    body: (n) => ({ replicaId: -1, topics: [{ name: WIDE_TOPIC, partitions: range(n, (i) => ({ partitionIndex: i % WIDE_PARTITIONS, timestamp: -1n })) }] }),
  }),
  attack<OffsetFetchRequest>({
    name: 'offset-fetch',
    apiKey: 9,
    version: 7,
    n: 100_000,
    description: 'OffsetFetch v7 asking n partitions of one topic',
    body: (n) => ({ groupId: BIG_GROUP, topics: [{ name: WIDE_TOPIC, partitionIndexes: range(n, (i) => i) }] }),
  }),
  attack<OffsetForLeaderEpochRequest>({
    name: 'offset-for-leader-epoch',
    apiKey: 23,
    version: 4,
    n: 100_000,
    description: 'OffsetForLeaderEpoch v4 asking n partitions of one topic',
    body: (n) => ({
      replicaId: -1,
      topics: [{ topic: WIDE_TOPIC, partitions: range(n, (i) => ({ partition: i % WIDE_PARTITIONS, currentLeaderEpoch: -1, leaderEpoch: 0 })) }],
    }),
  }),
  attack<DescribeGroupsRequest>({
    name: 'describe-groups',
    apiKey: 15,
    version: 5,
    n: 20_000,
    description: 'DescribeGroups v5 naming a group with a 10 KB member n times',
    body: (n) => ({ groups: range(n, () => BIG_GROUP), includeAuthorizedOperations: true }),
  }),
  attack<DeleteGroupsRequest>({
    name: 'delete-groups',
    apiKey: 42,
    version: 2,
    n: 100_000,
    description: 'DeleteGroups v2 naming n unknown groups',
    body: (n) => ({ groupsNames: range(n, (i) => `no-group-${i}`) }),
  }),
  attack<DeleteTopicsRequest>({
    name: 'delete-topics',
    apiKey: 20,
    version: 4,
    n: 100_000,
    description: 'DeleteTopics v4 naming n unknown topics',
    body: (n) => ({ topicNames: range(n, (i) => `no-topic-${i}`), timeoutMs: 30_000 }),
  }),
  attack<CreateTopicsRequest>({
    name: 'create-topics-invalid',
    apiKey: 19,
    version: 7,
    n: 50_000,
    description: 'CreateTopics v7 naming n topics with 0 partitions (each refused)',
    body: (n) => ({ topics: range(n, (i) => ({ name: `bad-${i}`, numPartitions: 0, replicationFactor: 1 })), timeoutMs: 30_000 }),
  }),
  attack<CreatePartitionsRequest>({
    name: 'create-partitions-unknown',
    apiKey: 37,
    version: 3,
    n: 50_000,
    description: 'CreatePartitions v3 naming n unknown topics',
    body: (n) => ({ topics: range(n, (i) => ({ name: `no-topic-${i}`, count: 2, assignments: null })), timeoutMs: 30_000 }),
  }),
  attack<DescribeProducersRequest>({
    name: 'describe-producers',
    apiKey: 61,
    version: 0,
    n: 100_000,
    description: 'DescribeProducers v0 asking n partitions of one topic',
    body: (n) => ({ topics: [{ name: WIDE_TOPIC, partitionIndexes: range(n, (i) => i % WIDE_PARTITIONS) }] }),
  }),
  attack<DescribeTransactionsRequest>({
    name: 'describe-transactions',
    apiKey: 65,
    version: 0,
    n: 100_000,
    description: 'DescribeTransactions v0 naming n unknown transactional ids',
    body: (n) => ({ transactionalIds: range(n, (i) => `no-txn-${i}`) }),
  }),
  attack<ProduceRequest>({
    name: 'produce-unknown-topics',
    apiKey: 0,
    version: 9,
    n: 50_000,
    description: 'Produce v9 (acks=1) to n unknown topics, no records (auto-creation on produce)',
    body: (n) => ({ acks: 1, timeoutMs: 30_000, topicData: range(n, (i) => ({ name: `produced-${i}`, partitionData: [{ index: 0, records: null }] })) }),
  }),
  attack<AddPartitionsToTxnRequest>({
    name: 'add-partitions-to-txn',
    apiKey: 24,
    version: 3,
    n: 100_000,
    description: 'AddPartitionsToTxn v3 adding n partitions of one topic for an unknown transactional id',
    body: (n) => ({
      v3AndBelowTransactionalId: 'no-txn',
      v3AndBelowProducerId: 1n,
      v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [{ name: WIDE_TOPIC, partitions: range(n, (i) => i) }],
    }),
  }),
  attack<OffsetCommitRequest>({
    name: 'offset-commit',
    apiKey: 8,
    version: 8,
    n: 50_000,
    description: 'OffsetCommit v8 (simple group, no member) of n partitions, the wide topic named once per partition',
    body: (n) => ({
      groupId: 'attack-commits',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: range(n, (i) => ({ name: WIDE_TOPIC, partitions: [{ partitionIndex: i % WIDE_PARTITIONS, committedOffset: 0n }] })),
    }),
  }),
  attack<TxnOffsetCommitRequest>({
    name: 'txn-offset-commit',
    apiKey: 28,
    version: 3,
    n: 100_000,
    description: 'TxnOffsetCommit v3 of n partitions for an unknown transactional id',
    body: (n) => ({
      transactionalId: 'no-txn',
      groupId: BIG_GROUP,
      producerId: 1n,
      producerEpoch: 0,
      topics: [{ name: WIDE_TOPIC, partitions: range(n, (i) => ({ partitionIndex: i, committedOffset: 0n })) }],
    }),
  }),
  attack<WriteTxnMarkersRequest>({
    name: 'write-txn-markers',
    apiKey: 27,
    version: 1,
    n: 100_000,
    description: 'WriteTxnMarkers v1: one marker for n partitions of one topic',
    body: (n) => ({
      markers: [
        {
          producerId: 1n,
          producerEpoch: 0,
          transactionResult: false,
          coordinatorEpoch: 0,
          topics: [{ name: WIDE_TOPIC, partitionIndexes: range(n, (i) => i) }],
        },
      ],
    }),
  }),
  attack<DeleteRecordsRequest>({
    name: 'delete-records',
    apiKey: 21,
    version: 2,
    n: 100_000,
    description: 'DeleteRecords v2 of n partitions of one topic (offset 0)',
    body: (n) => ({ topics: [{ name: WIDE_TOPIC, partitions: range(n, (i) => ({ partitionIndex: i, offset: 0n })) }], timeoutMs: 5000 }),
  }),
  attack<FindCoordinatorRequest>({
    name: 'find-coordinator',
    apiKey: 10,
    version: 4,
    n: 100_000,
    description: 'FindCoordinator v4 for n group ids',
    body: (n) => ({ keyType: 0, coordinatorKeys: range(n, (i) => `group-${i}`) }),
  }),
  attack<AlterConfigsRequest>({
    name: 'alter-configs',
    apiKey: 33,
    version: 2,
    n: 50_000,
    description: 'AlterConfigs v2 (validate only) naming n distinct unknown topics',
    body: (n) => ({
      resources: range(n, (i) => ({ resourceType: 2, resourceName: `no-topic-${i}`, configs: [{ name: 'retention.ms', value: '1000' }] })),
      validateOnly: true,
    }),
  }),
  attack<IncrementalAlterConfigsRequest>({
    name: 'incremental-alter-configs',
    apiKey: 44,
    version: 1,
    n: 50_000,
    description: 'IncrementalAlterConfigs v1 (validate only) setting a key of the wide topic n times in one resource',
    body: (n) => ({
      resources: [{ resourceType: 2, resourceName: WIDE_TOPIC, configs: range(n, () => ({ name: 'retention.ms', configOperation: 0, value: '1000' })) }],
      validateOnly: true,
    }),
  }),
  attack<CreateAclsRequest>({
    name: 'create-acls',
    apiKey: 30,
    version: 2,
    n: 20_000,
    description: 'CreateAcls v2 with n ACLs (SECURITY_DISABLED without an authorizer)',
    body: (n) => ({
      creations: range(n, (i) => ({
        resourceType: 2,
        resourceName: `t${i}`,
        resourcePatternType: 3,
        principal: 'User:x',
        host: '*',
        operation: 3,
        permissionType: 3,
      })),
    }),
  }),
  attack<AlterClientQuotasRequest>({
    name: 'alter-client-quotas',
    apiKey: 49,
    version: 1,
    n: 20_000,
    description: 'AlterClientQuotas v1 (validate only) of n client ids',
    body: (n) => ({
      entries: range(n, (i) => ({
        entity: [{ entityType: 'client-id', entityName: `c${i}` }],
        ops: [{ key: 'producer_byte_rate', value: 1000, remove: false }],
      })),
      validateOnly: true,
    }),
  }),
  attack<OffsetDeleteRequest>({
    name: 'offset-delete',
    apiKey: 47,
    version: 0,
    n: 100_000,
    description: 'OffsetDelete v0 of n partitions of the group',
    body: (n) => ({ groupId: BIG_GROUP, topics: [{ name: WIDE_TOPIC, partitions: range(n, (i) => ({ partitionIndex: i })) }] }),
  }),
  attack<FetchRequest>({
    name: 'fetch',
    apiKey: 1,
    version: 12,
    n: 50_000,
    description: "Fetch v12 (max_wait 0) of n partitions, the wide topic's 100 over and over",
    body: (n) => ({
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      sessionEpoch: -1,
      topics: [{ topic: WIDE_TOPIC, partitions: range(n, (i) => ({ partition: i % WIDE_PARTITIONS, fetchOffset: 0n, partitionMaxBytes: 1024 })) }],
    }),
  }),
];

export interface AttackFigures {
  attack: string;
  n: number;
  requestBytes: number;
  /** null when no answer came within the deadline (or the connection closed). */
  answerMs: number | null;
  answerBytes: number | null;
  answerError?: string;
  /** Error codes in the answer (when small enough to decode), with how often each came. */
  codes?: Record<string, number>;
  /** Worst latency of the side client's Metadata requests while the attack ran. */
  sideWorstMs: number;
  sideRequests: number;
}

/** One connection that sends a frame and resolves with the raw answer to it. */
export async function sendRaw(port: number, frame: Buffer, timeoutMs: number, host = '127.0.0.1'): Promise<Buffer> {
  const socket = net.connect(port, host);
  socket.setNoDelay(true);
  // Chunks are kept and joined once: an answer of many MB must not cost this process (which
  // also runs the side client) a copy per chunk.
  const chunks: Buffer[] = [];
  let have = 0;
  let size = -1;
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        have += chunk.length;
        if (size < 0 && have >= 4) size = (chunks.length === 1 ? chunk : Buffer.concat(chunks)).readInt32BE(0);
        if (size >= 0 && have >= 4 + size) {
          clearTimeout(timer);
          resolve(Buffer.concat(chunks, have).subarray(4, 4 + size));
        }
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      socket.once('close', () => {
        clearTimeout(timer);
        reject(new Error('connection closed'));
      });
      socket.once('connect', () => socket.write(frame));
    });
  } finally {
    socket.destroy();
  }
}

/**
 * The well-behaved client beside an attack (latency-probe.ts, its own process): the worst wait
 * it saw is the liveness figure, the broker's whole loop as a client feels it.
 */
export class SideClient {
  private readonly child: ChildProcess;
  private readonly lines: AsyncIterator<string>;

  constructor(port: number, topic = STEADY_TOPIC) {
    this.child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'latency-probe.ts'), String(port), topic], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.lines = createInterface({ input: this.child.stdout! })[Symbol.asyncIterator]();
  }

  /** The worst wait and the number of requests since the previous call. */
  async take(): Promise<{ worstMs: number; requests: number }> {
    this.child.stdin!.write('\n');
    const line = await this.lines.next();
    if (line.done) throw new Error('the latency probe exited');
    return JSON.parse(line.value) as { worstMs: number; requests: number };
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin!.end();
    await exited;
  }
}

/** Counts each errorCode in a decoded answer. */
function codesOf(body: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object' && !Buffer.isBuffer(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'errorCode' && typeof x === 'number') out[x] = (out[x] ?? 0) + 1;
        else walk(x);
      }
    }
  };
  walk(body);
  return out;
}

/** Sends `a` at size `n` and waits for its answer; `side`'s figures cover exactly that time. */
export async function runAttack(port: number, a: Attack, n: number, side: SideClient, timeoutMs: number): Promise<AttackFigures> {
  const codec = API_SPECS[a.apiKey]!.request as MessageCodec<unknown>;
  const frame = encodeRequest(a.apiKey, codec, a.version, a.body(n) as Input<unknown>, 7, 'attacker');
  await side.take();
  const t0 = performance.now();
  const out: AttackFigures = { attack: a.name, n, requestBytes: frame.length, answerMs: null, answerBytes: null, sideWorstMs: 0, sideRequests: 0 };
  let answer: Buffer | undefined;
  try {
    answer = await sendRaw(port, frame, timeoutMs);
    out.answerMs = Math.round(performance.now() - t0);
    out.answerBytes = answer.length + 4;
  } catch (e) {
    out.answerError = e instanceof Error ? e.message : String(e);
  }
  // the side client's request in flight when the answer came counts too
  await new Promise((r) => setTimeout(r, 200));
  const side1 = await side.take();
  out.sideWorstMs = side1.worstMs;
  out.sideRequests = side1.requests;
  if (answer && answer.length < 16 * 1024 * 1024) out.codes = codesOf(decodeResponse(a.apiKey, a.version, answer).body);
  return out;
}
