#!/usr/bin/env node
/**
 * kafka-replica-verification.sh (Kafka's kafka.tools.ReplicaVerificationTool): checks that
 * every replica of the chosen topics holds the same data. In rounds, it fetches every partition
 * from every broker in its replica set at the same offset (Fetch with Kafka's debugging consumer
 * id -2, which the broker serves from a follower too, up to that replica's high watermark), then
 * compares the batches' offsets and checksums (replica-verification/replica-buffer.ts). It prints
 * `<date>: verification process is started`, a line for each checksum mismatch, and every
 * --report-interval-ms `<date>: max lag is N for partition T-P at offset O among M partitions`.
 * Replicas holding different offsets end it with exit code 1, as Kafka's; otherwise it runs until
 * SIGINT/SIGTERM. Like Kafka's, it needs every broker up at start.
 */
import { Admin, type BrokerNode, type TopicMetadata } from '../client/index.js';
import { Api } from '../client/apis.js';
import { CliError, closeAtExit, createProgram, parseArgs, runTool } from './common/tool.js';
import { includePattern } from './common/include-list.js';
import { UNREACHABLE_TIMEOUT_MS } from './common/config.js';
import { ReplicaBuffer, ReplicasDivergedError, partitionName, toolDate, type ReplicaPartition } from './replica-verification/replica-buffer.js';

const TOOL = 'kafka-replica-verification.sh';
/** Kafka's FetchRequest.DEBUGGING_CONSUMER_ID: may read followers, up to their high watermark. */
const DEBUGGING_CONSUMER_ID = -2;

interface Opts {
  brokerList?: string;
  fetchSize: string;
  maxWaitMs: string;
  topicsInclude?: string;
  topicWhiteList?: string;
  time: string;
  reportIntervalMs: string;
}

function intOption(value: string, flag: string, min: number): number {
  if (!/^-?\d+$/.test(value.trim()) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new CliError(`${flag} must be an integer of at least ${min}, got "${value}"`);
  }
  return Number(value);
}

/** The replicas of the chosen topics, grouped by the broker that holds them. */
function partitionsByBroker(topics: readonly TopicMetadata[], brokers: ReadonlyMap<number, BrokerNode>): Map<number, ReplicaPartition[]> {
  const out = new Map<number, ReplicaPartition[]>();
  for (const t of topics) {
    for (const p of t.partitions) {
      for (const id of p.replicas) {
        if (!brokers.has(id)) {
          throw new CliError(`broker ${id}, a replica of ${t.name}-${p.partition}, is not in the cluster: every broker must be up when the tool starts`);
        }
        const list = out.get(id) ?? [];
        list.push({ topic: t.name, partition: p.partition });
        out.set(id, list);
      }
    }
  }
  return out;
}

/** One round's Fetch to one broker for all the partitions it holds a replica of. */
async function fetchFrom(
  admin: Admin,
  brokerId: number,
  partitions: readonly ReplicaPartition[],
  buffer: ReplicaBuffer,
  fetchSize: number,
  maxWaitMs: number,
): Promise<void> {
  const byTopic = new Map<string, ReplicaPartition[]>();
  for (const tp of partitions) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp]);
  let answered = new Map<string, { highWatermark: bigint; records: Buffer | null }>();
  try {
    const conn = await admin.cluster.brokerConnection(brokerId);
    const resp = await conn.send(
      Api.Fetch,
      {
        replicaId: DEBUGGING_CONSUMER_ID,
        replicaState: { replicaId: DEBUGGING_CONSUMER_ID, replicaEpoch: -1n },
        maxWaitMs,
        minBytes: 1,
        maxBytes: 0x7fffffff,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [...byTopic].map(([topic, tps]) => ({
          topic,
          partitions: tps.map((tp) => ({
            partition: tp.partition,
            currentLeaderEpoch: -1,
            fetchOffset: buffer.offset(tp),
            logStartOffset: -1n,
            partitionMaxBytes: fetchSize,
          })),
        })),
        forgottenTopicsData: [],
        rackId: '',
      },
      { timeoutMs: maxWaitMs + admin.cluster.requestTimeoutMs },
    );
    answered = new Map(
      resp.responses.flatMap((t) =>
        t.partitions.map((p) => [
          partitionName({ topic: t.topic, partition: p.partitionIndex }),
          p.errorCode === 0 ? { highWatermark: p.highWatermark, records: p.records } : { highWatermark: -1n, records: null },
        ]),
      ),
    );
  } catch {
    // A broker that does not answer holds its partitions' verification back (Kafka: until it is
    // up again); the next round waits as long as a fetch would, not in a tight loop.
    await new Promise((r) => setTimeout(r, Math.max(maxWaitMs, 100)));
  }
  for (const tp of partitions) buffer.add(tp, brokerId, answered.get(partitionName(tp)) ?? { highWatermark: -1n, records: null });
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Validate that all replicas for a set of topics have the same data.')
    .option('--broker-list <hostname:port,...>', 'REQUIRED: the list of hostname and port of the server to connect to')
    .option('--fetch-size <bytes>', 'the fetch size of each request', '1048576')
    .option('--max-wait-ms <ms>', 'the max amount of time each fetch request waits', '1000')
    .option('--topics-include <regex>', 'Java regex of the topics to verify replica consistency', '.*')
    .option('--topic-white-list <regex>', 'DEPRECATED, use --topics-include')
    .option('--time <timestamp>', 'timestamp for getting the initial offsets: -1 (latest), -2 (earliest) or ms', '-1')
    .option('--report-interval-ms <ms>', 'the reporting interval', '30000');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as unknown as Opts;
  if (!o.brokerList) throw new CliError('missing required argument --broker-list (see --help)');
  const fetchSize = intOption(o.fetchSize, '--fetch-size', 1);
  const maxWaitMs = intOption(o.maxWaitMs, '--max-wait-ms', 0);
  const time = BigInt(intOption(o.time, '--time', -2));
  const reportIntervalMs = intOption(o.reportIntervalMs, '--report-interval-ms', 0);
  const include = includePattern(o.topicWhiteList !== undefined && o.topicsInclude === '.*' ? o.topicWhiteList : (o.topicsInclude ?? '.*'));

  // Kafka's tool has no config file: when nothing answers at all it fails after the tools' default few seconds.
  const admin = closeAtExit(
    new Admin({
      bootstrapServers: o.brokerList,
      clientId: 'replica-verification',
      unreachable: { timeoutMs: UNREACHABLE_TIMEOUT_MS, setting: 'default.api.timeout.ms' },
    }),
  );
  const names = (await admin.listTopics()).filter((name) => include.test(name));
  if (names.length === 0) {
    throw new CliError('No topics found. --topics-include if specified, is either filtering out all topics or there is no topic.');
  }
  const topics = await admin.describeTopics(names);
  const brokers = new Map((await admin.describeCluster()).brokers.map((b) => [b.nodeId, b]));
  const byBroker = partitionsByBroker(topics, brokers);
  const partitions = topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition })));
  const answers = await admin.listOffsets(partitions.map((tp) => ({ ...tp, timestamp: time })));
  // A timestamp after every record has no offset: start where the next record will be.
  const afterAll = answers.filter((a) => a.offset < 0n);
  const latest = afterAll.length === 0 ? [] : await admin.listOffsets(afterAll.map((a) => ({ topic: a.topic, partition: a.partition, timestamp: -1n })));
  const initial = new Map([...answers.filter((a) => a.offset >= 0n), ...latest].map((a) => [partitionName(a), a.offset]));
  const buffer = new ReplicaBuffer(partitions, initial, reportIntervalMs, Date.now());

  let stopping = false;
  const stop = (): void => {
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(`${toolDate(Date.now())}: verification process is started`);
  while (!stopping) {
    await Promise.all([...byBroker].map(([id, tps]) => fetchFrom(admin, id, tps, buffer, fetchSize, maxWaitMs)));
    try {
      buffer.verify((line) => console.log(line));
    } catch (err) {
      if (err instanceof ReplicasDivergedError) return 1; // Kafka's line is printed; it exits 1
      throw err;
    }
  }
  return 0;
}

runTool(TOOL, main);
