#!/usr/bin/env node
/**
 * kafka-consumer-perf-test.sh: consumes --messages records (or until --timeout ms without any)
 * and prints Kafka's CSV summary: start/end time, MB and messages consumed and per second,
 * rebalance time and fetch-phase rates.
 */
import { Consumer } from '../client/index.js';
import { createProgram, parseArgs, requireOption, closeAtExit, runTool, CliError } from './common/tool.js';
import { consumerOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-consumer-perf-test.sh';

interface Opts {
  bootstrapServer?: string;
  brokerList?: string;
  topic?: string;
  messages?: string;
  group?: string;
  timeout?: string;
  fromLatest?: boolean;
  showDetailedStats?: boolean;
  reportingInterval?: string;
  hideHeader?: boolean;
  'consumer.config'?: string;
  printMetrics?: boolean;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
export function kafkaDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}:${pad(d.getMilliseconds(), 3)}`;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Measure consumer throughput.')
    .option('--bootstrap-server <server>', 'REQUIRED: the server(s) to connect to')
    .option('--broker-list <servers>', 'DEPRECATED, use --bootstrap-server')
    .option('--topic <topic>', 'REQUIRED: the topic to consume')
    .option('--messages <n>', 'REQUIRED: the number of messages to consume')
    .option('--group <group>', 'the consumer group id', `perf-consumer-${10000 + Math.floor(Math.random() * 90000)}`)
    .option('--timeout <ms>', 'give up after this long without a message', '10000')
    .option('--from-latest', 'start from the latest offset instead of the earliest')
    .option('--show-detailed-stats', 'print a line every --reporting-interval')
    .option('--reporting-interval <ms>', 'interval of the detailed stats', '5000')
    .option('--hide-header', 'do not print the header line')
    .option('--consumer.config <file>', 'consumer config properties file')
    .option('--print-metrics', 'accepted for compatibility');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  const topic = requireOption(o.topic, '--topic');
  const target = Number(requireOption(o.messages, '--messages'));
  if (!Number.isInteger(target) || target < 0) throw new CliError('--messages must be a non-negative integer');
  const timeoutMs = Number(o.timeout ?? 10000);
  const props = loadPropertiesFile(o['consumer.config']);
  props.set('group.id', o.group!);
  if (!props.has('auto.offset.reset')) props.set('auto.offset.reset', o.fromLatest ? 'latest' : 'earliest');
  const options = consumerOptionsFrom(props, o.bootstrapServer ?? o.brokerList);
  const consumer = closeAtExit(new Consumer({ ...options, clientId: options.clientId ?? 'perf-consumer-client' }));
  await consumer.cluster.partitionsFor(topic);
  const start = Date.now();
  consumer.subscribe([topic]);
  let count = 0;
  let bytes = 0;
  let firstRecordAt = 0;
  let lastRecordAt = Date.now();
  const interval = Number(o.reportingInterval ?? 5000);
  let lastReport = Date.now();
  let end = 0;
  let lastCount = 0;
  let lastBytes = 0;
  if (o.showDetailedStats && !o.hideHeader)
    console.log('time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec');
  // A live progress line on a terminal (stderr, so piped stdout keeps only Kafka's summary).
  const live = process.stderr.isTTY
    ? setInterval(() => process.stderr.write(`\r${count}/${target} records consumed, ${(bytes / 1048576).toFixed(1)} MB`), 1000)
    : null;
  try {
    while (count < target && Date.now() - lastRecordAt < timeoutMs) {
      const records = await consumer.poll(Math.min(1000, timeoutMs));
      if (records.length > 0) {
        lastRecordAt = Date.now();
        if (firstRecordAt === 0) firstRecordAt = lastRecordAt;
      }
      for (const r of records) {
        count++;
        bytes += (r.value?.length ?? 0) + (r.key?.length ?? 0);
      }
      if (o.showDetailedStats && Date.now() - lastReport >= interval) {
        const secs = (Date.now() - lastReport) / 1000;
        console.log(
          `${kafkaDate(Date.now())}, 0, ${(bytes / 1048576).toFixed(4)}, ${((bytes - lastBytes) / 1048576 / secs).toFixed(4)}, ${count}, ${((count - lastCount) / secs).toFixed(4)}, 0, ${Date.now() - lastReport}, ${((bytes - lastBytes) / 1048576 / secs).toFixed(4)}, ${((count - lastCount) / secs).toFixed(4)}`,
        );
        [lastReport, lastCount, lastBytes] = [Date.now(), count, bytes];
      }
    }
  } finally {
    // Like Kafka's tool, the clock stops when the last record is in, before the close (commit
    // and leaving the group) that follows.
    end = Date.now();
    if (live) {
      clearInterval(live);
      process.stderr.write('\n');
    }
    await consumer.close();
  }
  if (count < target)
    process.stderr.write(
      `WARNING: Exiting before consuming the expected number of messages: timeout (${timeoutMs} ms) exceeded. You can use the --timeout option to increase the timeout.\n`,
    );
  const secs = Math.max(end - start, 1) / 1000;
  const rebalanceMs = firstRecordAt > 0 ? firstRecordAt - start : end - start;
  const fetchSecs = Math.max(end - start - rebalanceMs, 1) / 1000;
  const mb = bytes / 1048576;
  if (!o.showDetailedStats) {
    if (!o.hideHeader)
      console.log(
        'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec',
      );
    console.log(
      `${kafkaDate(start)}, ${kafkaDate(end)}, ${mb.toFixed(4)}, ${(mb / secs).toFixed(4)}, ${count}, ${(count / secs).toFixed(4)}, ${rebalanceMs}, ${Math.round(fetchSecs * 1000)}, ${(mb / fetchSecs).toFixed(4)}, ${(count / fetchSecs).toFixed(4)}`,
    );
  }
  return 0;
}

runTool(TOOL, main);
