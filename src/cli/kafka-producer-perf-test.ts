#!/usr/bin/env node
/**
 * kafka-producer-perf-test.sh: sends --num-records records of --record-size bytes (or lines of
 * --payload-file) at up to --throughput records/s and prints Kafka's window lines every 5 s and
 * the summary with latency percentiles. On a terminal a live progress line goes to stderr.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_BATCH_SIZE, ErrorCode, Producer } from '../client/index.js';
import { collect, createProgram, parseArgs, requireOption, closeAtExit, runTool, CliError } from './common/tool.js';
import { loadPropertiesFile, merged, parseKeyValues, producerOptionsFrom } from './common/config.js';

const TOOL = 'kafka-producer-perf-test.sh';

interface Opts {
  topic?: string;
  numRecords?: string;
  recordSize?: string;
  payloadFile?: string;
  payloadDelimiter?: string;
  throughput?: string;
  producerProps?: string[];
  'producer.config'?: string;
  bootstrapServer?: string;
  printMetrics?: boolean;
}

class Stats {
  count = 0;
  bytes = 0;
  totalLatency = 0;
  maxLatency = 0;
  windowCount = 0;
  windowBytes = 0;
  windowLatency = 0;
  windowMax = 0;
  windowStart = Date.now();
  readonly start = Date.now();
  readonly latencies: number[] = [];

  record(latency: number, bytes: number): void {
    this.count++;
    this.bytes += bytes;
    this.totalLatency += latency;
    this.maxLatency = Math.max(this.maxLatency, latency);
    this.windowCount++;
    this.windowBytes += bytes;
    this.windowLatency += latency;
    this.windowMax = Math.max(this.windowMax, latency);
    this.latencies.push(latency);
  }

  static line(count: number, bytes: number, ms: number, latency: number, max: number): string {
    const secs = Math.max(ms, 1) / 1000;
    return `${count} records sent, ${(count / secs).toFixed(1)} records/sec (${(bytes / secs / 1048576).toFixed(2)} MB/sec), ${(latency / Math.max(count, 1)).toFixed(1)} ms avg latency, ${max.toFixed(1)} ms max latency`;
  }

  windowLine(): string {
    const s = Stats.line(this.windowCount, this.windowBytes, Date.now() - this.windowStart, this.windowLatency, this.windowMax);
    this.windowCount = this.windowBytes = this.windowLatency = this.windowMax = 0;
    this.windowStart = Date.now();
    return `${s}.`;
  }

  summary(): string {
    const elapsed = Date.now() - this.start;
    const sorted = Float64Array.from(this.latencies).sort(); // numeric sort, no comparator calls
    const pct = (p: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);
    return `${Stats.line(this.count, this.bytes, elapsed, this.totalLatency, this.maxLatency)}, ${pct(0.5)} ms 50th, ${pct(0.95)} ms 95th, ${pct(0.99)} ms 99th, ${pct(0.999)} ms 99.9th.`;
  }
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Measure producer throughput and latency.')
    .option('--topic <topic>', 'REQUIRED: the topic to produce to')
    .option('--num-records <n>', 'REQUIRED: number of records to send')
    .option('--record-size <bytes>', 'size of each record (or --payload-file)')
    .option('--payload-file <file>', 'records are lines (split by --payload-delimiter) of this file, picked at random')
    .option('--payload-delimiter <s>', 'delimiter of --payload-file', '\\n')
    .option('--throughput <n>', 'REQUIRED: maximum records/sec, -1 for no limit')
    .option('--producer-props <prop...>', 'producer properties key=value (bootstrap.servers=... needed unless --bootstrap-server)')
    .option('--producer.config <file>', 'producer config properties file')
    .option('--bootstrap-server <server>', 'the server(s) to connect to (instead of bootstrap.servers)')
    .option('--print-metrics', 'accepted for compatibility');
  program.options.find((x) => x.long === '--producer-props')!.argParser(collect);
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  const topic = requireOption(o.topic, '--topic');
  const numRecords = Number(requireOption(o.numRecords, '--num-records'));
  const throughput = Number(requireOption(o.throughput, '--throughput'));
  if (!Number.isInteger(numRecords) || numRecords < 0) throw new CliError('--num-records must be a non-negative integer');
  let payloads: Buffer[];
  if (o.payloadFile) {
    const sep = (o.payloadDelimiter ?? '\\n').replace(/\\n/g, '\n').replace(/\\t/g, '\t');
    payloads = readFileSync(o.payloadFile, 'utf8')
      .split(sep)
      .filter((s) => s !== '')
      .map((s) => Buffer.from(s));
    if (payloads.length === 0) throw new CliError(`${o.payloadFile} holds no payload`);
  } else {
    const size = Number(requireOption(o.recordSize, '--record-size'));
    if (!Number.isInteger(size) || size < 0) throw new CliError('--record-size must be a non-negative integer');
    // Like Kafka: random uppercase letters, generated once.
    payloads = [Buffer.from(Array.from({ length: size }, () => String.fromCharCode(65 + Math.floor(Math.random() * 26))).join(''))];
  }
  const props = merged(
    loadPropertiesFile(o['producer.config']),
    parseKeyValues(
      (o.producerProps ?? []).flatMap((p) => p.split(' ')),
      '--producer-props',
    ),
  );
  const producerOptions = producerOptionsFrom(props, o.bootstrapServer);
  const producer = closeAtExit(new Producer({ ...producerOptions, clientId: producerOptions.clientId ?? 'perf-producer-client' }));
  await producer.connect();
  // A broker that creates topics on demand answers with the new topic (or LEADER_NOT_AVAILABLE
  // while it is being created); UNKNOWN_TOPIC_OR_PARTITION means it will not, so waiting for
  // the topic to appear would only delay the error.
  const known = (await producer.cluster.topicsMetadata([topic], true)).get(topic);
  if (known?.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
    throw new CliError(`Topic '${topic}' does not exist and the broker does not create topics on demand (auto.create.topics.enable=false)`);
  }
  await producer.cluster.partitionsFor(topic, true); // metadata before the clock starts, not in the first records' latency
  const stats = new Stats();
  const windowTimer = setInterval(() => console.log(stats.windowLine()), 5000);
  const live = process.stderr.isTTY ? setInterval(() => process.stderr.write(`\r${stats.count}/${numRecords} records sent`), 1000) : null;
  // Like Java's buffer.memory, bound what is sent but not acknowledged. By default only what
  // keeps the pipeline full (batches in flight plus ones filling): more only adds queueing
  // delay to every record's latency, not throughput.
  const batchSize = producerOptions.batchSize ?? DEFAULT_BATCH_SIZE;
  const maxOutstandingBytes = Number(props.get('buffer.memory') ?? 4 * batchSize);
  let failed = 0;
  let outstandingBytes = 0;
  let wake: (() => void) | null = null;
  try {
    for (let i = 0; i < numRecords; i++) {
      if (throughput > 0) {
        const due = stats.start + (i * 1000) / throughput;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const value = payloads[payloads.length === 1 ? 0 : Math.floor(Math.random() * payloads.length)]!;
      const sentAt = Date.now();
      const size = value.length;
      outstandingBytes += size;
      // A callback, not a promise: the tool must not cost more per record than the client.
      producer.produce({ topic, value }, (err) => {
        if (err) failed++;
        else stats.record(Date.now() - sentAt, size);
        outstandingBytes -= size;
        if (wake !== null && outstandingBytes <= maxOutstandingBytes / 2) {
          const w = wake;
          wake = null;
          w();
        }
      });
      if (outstandingBytes >= maxOutstandingBytes) await new Promise<void>((resolve) => (wake = resolve));
    }
    await producer.flush();
  } finally {
    clearInterval(windowTimer);
    if (live) {
      clearInterval(live);
      process.stderr.write('\n');
    }
    await producer.close();
  }
  console.log(stats.summary());
  if (failed > 0) throw new CliError(`${failed} records failed to send`);
  return 0;
}

runTool(TOOL, main);
