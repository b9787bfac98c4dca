#!/usr/bin/env node
/**
 * kafka-e2e-latency.sh (Kafka's kafka.tools.EndToEndLatency): sends num_messages messages one at
 * a time, each produced synchronously and then polled back by a consumer assigned to every
 * partition of the topic, and measures the time from send to receipt. Prints `i<TAB>latency-ms`
 * every 1000 messages, then `Avg latency: X ms` and the 50th/99th/99.9th percentiles in whole
 * milliseconds, as Kafka's tool does. A topic that does not exist is created (1 partition,
 * replication factor 1) as Kafka's tool creates it. Positional arguments, as Kafka's:
 *   broker_list topic num_messages producer_acks message_size_bytes [properties_file]
 */
import { randomInt } from 'node:crypto';
import { Admin, Consumer, ErrorCode, Producer, type ConsumerRecord } from '../client/index.js';
import { CliError, closeAtExit, createProgram, parseArgs, runTool } from './common/tool.js';
import { consumerOptionsFrom, loadPropertiesFile, merged, producerOptionsFrom } from './common/config.js';

const TOOL = 'kafka-e2e-latency.sh';
const ARGUMENTS = 'broker_list topic num_messages producer_acks message_size_bytes [optional] properties_file';
/** How long one poll waits for the message just sent (Kafka's POLL_TIMEOUT_MS). */
const POLL_TIMEOUT_MS = 60000;

function intArgument(value: string, name: string, min: number): number {
  if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > 0x7fffffff) {
    throw new CliError(`${name} must be an integer of at least ${min}, got "${value}"`);
  }
  return Number(value);
}

/** Java's Double.toString for the progress lines: a whole number still shows ".0". */
function javaDouble(n: number): string {
  return Number.isInteger(n) ? `${n}.0` : String(n);
}

/** The one check Kafka's tool makes of each poll: exactly the message sent came back. */
function checkReceived(sent: Buffer, records: ConsumerRecord[]): void {
  if (records.length === 0) throw new CliError(`poll() timed out before finding a result (timeout:[${POLL_TIMEOUT_MS}])`);
  const read = records[0]!.value ?? Buffer.alloc(0);
  if (!read.equals(sent)) throw new CliError(`The message read [${read.toString()}] did not match the message sent [${sent.toString()}]`);
  if (records.length !== 1) throw new CliError(`Only one result was expected during this test. We found [${records.length}]`);
}

async function createTopic(props: Map<string, string>, topic: string): Promise<void> {
  console.log(`Topic "${topic}" does not exist. Will create topic with 1 partition(s) and replication factor = 1`);
  const admin = closeAtExit(new Admin(consumerOptionsFrom(props, undefined)));
  const err = (await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }])).get(topic);
  await admin.close();
  if (err && err.code !== ErrorCode.TOPIC_ALREADY_EXISTS) {
    console.log(`Creation of topic ${topic} failed`);
    throw err;
  }
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Measures the end-to-end latency of single messages: each is produced synchronously, then consumed back.')
    .usage(`[options] ${ARGUMENTS}`)
    .argument('[arguments...]')
    .allowExcessArguments(true)
    .allowUnknownOption(true); // positional, as Kafka's: acks may be -1 (refused below with Kafka's line, not as an option)
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const args = program.args;
  if (args.length !== 5 && args.length !== 6) throw new CliError(`USAGE: ${TOOL} ${ARGUMENTS}`);
  const [brokers, topic, numArg, acks, sizeArg, propsFile] = args as [string, string, string, string, string, string | undefined];
  const numMessages = intArgument(numArg, 'num_messages', 1);
  const messageSize = intArgument(sizeArg, 'message_size_bytes', 0);
  // Kafka's rule: the latency of a send is only meaningful when the send waits for the broker.
  if (acks !== '1' && acks !== 'all') throw new CliError('Latency testing requires synchronous acknowledgement. Please use 1 or all');

  const props = merged(loadPropertiesFile(propsFile?.trim() ? propsFile : undefined), new Map([['bootstrap.servers', brokers]]));
  const consumerProps = merged(
    props,
    new Map([
      ['group.id', `test-group-${Date.now()}`],
      ['enable.auto.commit', 'false'],
      ['auto.offset.reset', 'latest'],
      ['fetch.max.wait.ms', '0'], // no temporal batching: the fetch answers as soon as it can
    ]),
  );
  const consumer = closeAtExit(new Consumer(consumerOptionsFrom(consumerProps, undefined)));
  const producer = closeAtExit(
    new Producer(
      producerOptionsFrom(
        merged(
          props,
          new Map([
            ['linger.ms', '0'],
            ['acks', acks],
          ]),
        ),
        undefined,
      ),
    ),
  );

  const known = (await consumer.cluster.topicsMetadata([topic])).get(topic);
  if (!known || known.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || known.errorCode === ErrorCode.INVALID_TOPIC_EXCEPTION) {
    await createTopic(props, topic);
  }
  const partitions = (await consumer.cluster.partitionsFor(topic)).partitions.map((p) => ({ topic, partition: p.partition }));
  consumer.assign(partitions);
  await consumer.seekToEnd(partitions);

  const latenciesMs = new Float64Array(numMessages);
  let totalNs = 0n;
  for (let i = 0; i < numMessages; i++) {
    const message = Buffer.alloc(messageSize, 65 + randomInt(26)); // one random capital letter, repeated
    const begin = process.hrtime.bigint();
    await producer.send({ topic, value: message });
    const records = await consumer.poll(POLL_TIMEOUT_MS);
    const elapsedNs = process.hrtime.bigint() - begin;
    checkReceived(message, records);
    const elapsedMs = Number(elapsedNs) / 1e6;
    if (i % 1000 === 0) console.log(`${i}\t${javaDouble(elapsedMs)}`);
    totalNs += elapsedNs;
    latenciesMs[i] = Math.floor(elapsedMs);
  }
  console.log(`Avg latency: ${(Number(totalNs) / numMessages / 1e6).toFixed(4)} ms`);
  latenciesMs.sort();
  const at = (p: number): number => latenciesMs[Math.floor(numMessages * p)]!;
  console.log(`Percentiles: 50th = ${at(0.5)}, 99th = ${at(0.99)}, 99.9th = ${at(0.999)}`);
  return 0;
}

runTool(TOOL, main);
