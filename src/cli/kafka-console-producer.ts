#!/usr/bin/env node
/**
 * kafka-console-producer.sh: one record per input line, from a pipe or a terminal (with a `>`
 * prompt). parse.key / key.separator split keys off; parse.headers reads `h1:v1,h2:v2<TAB>`
 * before them. Without --sync records are batched (linger 1000 ms, as Kafka's --timeout);
 * end of input flushes everything before exit.
 */
import { createInterface } from 'node:readline';
import { Producer, type ProducerRecord } from '../client/index.js';
import { collect, createProgram, parseArgs, closeAtExit, runTool, CliError, describeError } from './common/tool.js';
import { loadPropertiesFile, merged, parseKeyValues, producerOptionsFrom } from './common/config.js';

const TOOL = 'kafka-console-producer.sh';

interface Opts {
  bootstrapServer?: string;
  brokerList?: string;
  topic?: string;
  property?: string[];
  producerProperty?: string[];
  'producer.config'?: string;
  requestRequiredAcks?: string;
  compressionCodec?: string | boolean;
  sync?: boolean;
  timeout?: string;
  batchSize?: string;
  messageSendMaxRetries?: string;
  requestTimeoutMs?: string;
}

export interface LineParser {
  parseKey: boolean;
  keySeparator: string;
  parseHeaders: boolean;
  headersDelimiter: string;
  headersSeparator: string;
  headersKeySeparator: string;
  ignoreError: boolean;
  nullMarker: string | null;
}

function lineParser(props: Map<string, string>): LineParser {
  const flag = (k: string) => props.get(k)?.trim().toLowerCase() === 'true';
  return {
    parseKey: flag('parse.key'),
    keySeparator: props.get('key.separator') ?? '\t',
    parseHeaders: flag('parse.headers'),
    headersDelimiter: props.get('headers.delimiter') ?? '\t',
    headersSeparator: props.get('headers.separator') ?? ',',
    headersKeySeparator: props.get('headers.key.separator') ?? ':',
    ignoreError: flag('ignore.error'),
    nullMarker: props.get('null.marker') ?? null,
  };
}

function splitOnce(s: string, sep: string): [string, string] | null {
  const i = s.indexOf(sep);
  return i < 0 ? null : [s.slice(0, i), s.slice(i + sep.length)];
}

function parseLine(line: string, topic: string, p: LineParser): ProducerRecord {
  let rest = line;
  const headers: { key: string; value: Buffer | null }[] = [];
  if (p.parseHeaders) {
    const parts = splitOnce(rest, p.headersDelimiter);
    if (!parts) {
      if (!p.ignoreError) throw new CliError(`No headers delimiter found on line: ${line}`);
    } else {
      rest = parts[1];
      for (const h of parts[0].split(p.headersSeparator)) {
        if (h === '') continue;
        const kv = splitOnce(h, p.headersKeySeparator);
        const value = kv ? kv[1] : null;
        headers.push({ key: kv ? kv[0] : h, value: value === null || value === p.nullMarker ? null : Buffer.from(value) });
      }
    }
  }
  let key: string | null = null;
  if (p.parseKey) {
    const parts = splitOnce(rest, p.keySeparator);
    if (!parts) {
      if (!p.ignoreError) throw new CliError(`No key separator found on line: ${line}`);
    } else {
      key = parts[0] === p.nullMarker ? null : parts[0];
      rest = parts[1];
    }
  }
  return { topic, key, value: rest === p.nullMarker ? null : rest, headers };
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Read data from standard input and publish it to Kafka.')
    .option('--bootstrap-server <server>', 'REQUIRED unless --broker-list: the server(s) to connect to')
    .option('--broker-list <servers>', 'DEPRECATED, use --bootstrap-server instead')
    .option('--topic <topic>', 'REQUIRED: the topic to produce messages to')
    .option('--property <prop>', 'message reader properties: parse.key, key.separator, parse.headers, ignore.error, null.marker (repeatable)', collect)
    .option('--producer-property <prop>', 'a producer property key=value (repeatable)', collect)
    .option('--producer.config <file>', 'producer config properties file')
    .option('--request-required-acks <acks>', 'the required acks of the producer requests', '-1')
    .option('--compression-codec [codec]', "compression: 'none', 'gzip', 'snappy', 'lz4' or 'zstd' (default gzip when given without a value)")
    .option('--sync', 'send each message synchronously, waiting for the acknowledgement')
    .option('--timeout <ms>', 'linger time in ms when not in --sync mode', '1000')
    .option('--batch-size <n>', 'maximum batch size in bytes', '16384')
    .option('--message-send-max-retries <n>', 'retries before the producer gives up on a message')
    .option('--request-timeout-ms <ms>', 'the ack timeout of the producer requests', '1500');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  const topic = o.topic;
  if (!topic) throw new CliError('missing required argument --topic (see --help)');
  const fromFlags = new Map<string, string>([
    ['acks', o.requestRequiredAcks ?? '-1'],
    ['linger.ms', o.sync ? '0' : (o.timeout ?? '1000')],
    ['batch.size', o.batchSize ?? '16384'],
    ['request.timeout.ms', o.requestTimeoutMs ?? '1500'],
  ]);
  if (o.compressionCodec !== undefined) fromFlags.set('compression.type', typeof o.compressionCodec === 'string' ? o.compressionCodec : 'gzip');
  if (o.messageSendMaxRetries !== undefined) fromFlags.set('retries', o.messageSendMaxRetries);
  const props = merged(fromFlags, loadPropertiesFile(o['producer.config']), parseKeyValues(o.producerProperty, '--producer-property'));
  const options = producerOptionsFrom(props, o.bootstrapServer ?? o.brokerList);
  const producer = closeAtExit(new Producer({ ...options, clientId: options.clientId ?? 'console-producer' }));
  const parser = lineParser(parseKeyValues(o.property, '--property'));
  await producer.connect();

  // Kafka prompts when the JVM has a console: both stdin and stdout are terminals.
  const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const rl = createInterface({ input: process.stdin, terminal: false });
  let failed = 0;
  const report = (err: unknown): void => {
    failed++;
    process.stderr.write(`Error when sending message to topic ${topic}: ${describeError(err)}\n`);
  };
  const prompt = (): void => {
    if (interactive) process.stdout.write('>');
  };
  const stop = (): void => rl.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Sends not yet settled: the exit code counts their failures too.
  const pending = new Set<Promise<void>>();
  prompt();
  for await (const line of rl) {
    const record = parseLine(line, topic, parser);
    const sent = producer.send(record).then(() => undefined, report);
    if (o.sync) await sent;
    else {
      pending.add(sent);
      void sent.finally(() => pending.delete(sent));
    }
    prompt();
  }
  await producer.close();
  await Promise.all(pending);
  return failed > 0 ? 1 : 0;
}

runTool(TOOL, main);
