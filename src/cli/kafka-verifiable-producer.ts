#!/usr/bin/env node
/**
 * kafka-verifiable-producer.sh: produces increasing integers ("0", "1", ... or "P.0", "P.1" with
 * --value-prefix P) and prints one JSON event per line, as Kafka's VerifiableProducer does, so
 * test harnesses can tell exactly which messages were acknowledged:
 *   {"timestamp":..,"name":"startup_complete"}
 *   {"timestamp":..,"name":"producer_send_success","key":null,"value":"0","topic":"t","partition":0,"offset":0}
 *   {"timestamp":..,"name":"producer_send_error","key":..,"value":..,"topic":..,"exception":"class ..","message":".."}
 *   {"timestamp":..,"name":"shutdown_complete"}
 *   {"timestamp":..,"name":"tool_data","sent":N,"acked":N,"target_throughput":T,"avg_throughput":X}
 * It stops after --max-messages, or on SIGTERM/SIGINT (flushing what is in flight first).
 * As in Kafka, the producer does not retry (retries=0), so every failure is reported, each as it
 * happens; shutdown_complete and tool_data come after the last of them. When no broker answers
 * at all it stops there and exits 1 with that one line on stderr.
 */
import { BrokersUnreachableError, Producer, type RecordMetadata } from '../client/index.js';
import { CliError, createProgram, parseArgs, closeAtExit, runTool } from './common/tool.js';
import { loadPropertiesFile, producerOptionsFrom } from './common/config.js';
import { javaExceptionOf } from './common/java-names.js';

const TOOL = 'kafka-verifiable-producer.sh';

interface Opts {
  topic?: string;
  bootstrapServer?: string;
  brokerList?: string;
  maxMessages: string;
  throughput: string;
  acks: string;
  producerConfig?: string;
  messageCreateTime: string;
  valuePrefix?: string;
  repeatingKeys?: string;
}

function intFlag(value: string, flag: string): number {
  if (!/^-?\d+$/.test(value)) throw new CliError(`${flag} must be an integer, got "${value}"`);
  return Number(value);
}

function printEvent(name: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ timestamp: Date.now(), name, ...fields })}\n`);
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(
    TOOL,
    'Produces increasing integers to the topic and prints JSON metadata to stdout for each send, making visible which messages were acked.',
  )
    .option('--topic <topic>', 'REQUIRED: produce messages to this topic')
    .option('--bootstrap-server <servers>', 'REQUIRED: the server(s) to connect to, HOST1:PORT1,HOST2:PORT2')
    .option('--broker-list <servers>', 'DEPRECATED, use --bootstrap-server')
    .option('--max-messages <n>', 'produce this many messages; -1 until killed', '-1')
    .option('--throughput <n>', 'if >= 0, throttle to about this many messages/s', '-1')
    .option('--acks <acks>', 'acks required on each message: 0, 1 or -1', '-1')
    .option('--producer.config <file>', 'producer config properties file')
    .option('--message-create-time <ms>', 'send messages with creation time starting at this value (ms since epoch)', '-1')
    .option('--value-prefix <n>', 'prefix each value with this integer and a dot')
    .option('--repeating-keys <n>', 'keys 0,1,.. up to this number (exclusive), then 0 again');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as unknown as Opts;
  // commander keeps the dotted flag name as the key.
  const configFile = (raw as Record<string, string | undefined>)['producer.config'];
  if (!o.topic) throw new CliError('missing required argument --topic (see --help)');
  const bootstrap = o.bootstrapServer ?? o.brokerList;
  if (!bootstrap) throw new CliError('missing required argument --bootstrap-server (see --help)');
  const maxMessages = intFlag(o.maxMessages, '--max-messages');
  const throughput = intFlag(o.throughput, '--throughput');
  const acks = intFlag(o.acks, '--acks');
  if (![0, 1, -1].includes(acks)) throw new CliError(`--acks must be 0, 1 or -1, got ${acks}`);
  let createTime = intFlag(o.messageCreateTime, '--message-create-time');
  const prefix = o.valuePrefix === undefined ? null : intFlag(o.valuePrefix, '--value-prefix');
  const repeatingKeys = o.repeatingKeys === undefined ? null : intFlag(o.repeatingKeys, '--repeating-keys');

  const props = loadPropertiesFile(configFile);
  if (!props.has('acks')) props.set('acks', String(acks));
  if (!props.has('retries')) props.set('retries', '0');
  const options = producerOptionsFrom(props, bootstrap);
  // Java turns idempotence off when retries=0 was set and idempotence was not asked for.
  const producer = closeAtExit(
    new Producer({
      ...options,
      clientId: options.clientId ?? 'verifiable-producer',
      enableIdempotence: props.has('enable.idempotence') ? options.enableIdempotence : false,
    }),
  );

  let stopping = false;
  let unreachable: BrokersUnreachableError | undefined;
  const stop = (): void => {
    stopping = true;
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  const started = Date.now();
  let sent = 0;
  let acked = 0;
  let keyCounter = 0;
  const limit = maxMessages < 0 ? Number.MAX_SAFE_INTEGER : maxMessages;
  printEvent('startup_complete');
  try {
    for (let i = 0; i < limit && !stopping; i++) {
      let key: string | null = null;
      if (repeatingKeys !== null) {
        key = String(keyCounter++);
        if (keyCounter === repeatingKeys) keyCounter = 0;
      }
      const value = prefix === null ? String(i) : `${prefix}.${i}`;
      const timestamp = createTime >= 0 ? createTime : undefined;
      if (createTime >= 0) createTime += Date.now() - started;
      sent++;
      const report = (err: Error | null, meta: RecordMetadata | null): void => {
        if (err || !meta) {
          if (err instanceof BrokersUnreachableError) {
            unreachable = err;
            stopping = true;
          }
          printEvent('producer_send_error', { key, value, topic: o.topic, exception: `class ${javaExceptionOf(err)}`, message: err?.message ?? 'no metadata' });
          return;
        }
        acked++;
        printEvent('producer_send_success', { key, value, topic: meta.topic, partition: meta.partition, offset: Number(meta.offset) });
      };
      const record = { topic: o.topic, key, value, timestamp };
      if (i === 0) {
        // Java's send() blocks until the topic's metadata is there: the first record's outcome is
        // awaited, so a cluster that never answers ends the run instead of queueing sends.
        await new Promise<void>((resolve) =>
          producer.produce(record, (err, meta) => {
            report(err, meta);
            resolve();
          }),
        );
      } else producer.produce(record, report);
      if (throughput >= 0) {
        // Kafka's throttler: sleep until the send count matches the target rate.
        const due = started + ((i + 1) * 1000) / Math.max(throughput, 1e-9);
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      } else if (i % 1000 === 999) {
        await new Promise((r) => setImmediate(r)); // let callbacks and signals in
      }
    }
  } finally {
    await producer.close().catch(() => undefined);
    printEvent('shutdown_complete');
    const elapsed = Math.max(Date.now() - started, 1);
    printEvent('tool_data', { sent, acked, target_throughput: throughput, avg_throughput: (1000 * acked) / elapsed });
  }
  if (unreachable) throw unreachable;
  return 0;
}

runTool(TOOL, main);
