#!/usr/bin/env node
/**
 * kafka-get-offsets.sh: prints `topic:partition:offset` for the earliest (-2), latest (-1),
 * max-timestamp (-3) or first-at-timestamp offsets of the selected partitions.
 */
import { Admin } from '../client/index.js';
import { createProgram, parseArgs, requireOption, closeAtExit, runTool, CliError } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-get-offsets.sh';

interface Opts {
  bootstrapServer?: string;
  brokerList?: string;
  commandConfig?: string;
  topic?: string;
  partitions?: string;
  topicPartitions?: string;
  time?: string;
  excludeInternalTopics?: boolean;
}

function parseTime(t: string): bigint {
  const named: Record<string, bigint> = { earliest: -2n, latest: -1n, 'max-timestamp': -3n };
  if (t in named) return named[t]!;
  if (!/^-?\d+$/.test(t)) throw new CliError(`--time must be -1/latest, -2/earliest, -3/max-timestamp or a timestamp in ms, got "${t}"`);
  return BigInt(t);
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Print the offsets of topic partitions.')
    .option('--bootstrap-server <server>', 'REQUIRED: the server(s) to connect to')
    .option('--broker-list <servers>', 'DEPRECATED, use --bootstrap-server')
    .option('--command-config <file>', 'property file with configs for the admin client')
    .option('--topic <regex>', 'the topic(s) to get offsets of (a regular expression)')
    .option('--partitions <list>', 'comma separated partition ids (default all)')
    .option('--topic-partitions <list>', 'topic:partition pairs, e.g. t1:0,t2:1-3')
    .option('--time <time>', '-1 or latest, -2 or earliest, -3 or max-timestamp, or a timestamp in ms', '-1')
    .option('--exclude-internal-topics', 'leave internal topics out');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  const admin = closeAtExit(
    new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), requireOption(o.bootstrapServer ?? o.brokerList, '--bootstrap-server'))),
  );
  try {
    const time = parseTime(o.time ?? '-1');
    const topics = await admin.describeTopics();
    const wanted: { topic: string; partition: number }[] = [];
    const onlyParts = o.partitions ? new Set(o.partitions.split(',').map((p) => Number(p.trim()))) : null;
    if (o.topicPartitions) {
      for (const spec of o.topicPartitions.split(',')) {
        const [t, range] = spec.split(':');
        const tm = topics.find((x) => x.name === t);
        if (!tm) throw new CliError(`Topic '${t}' does not exist`);
        const [lo, hi] = (range ?? '').split('-').map((x) => (x === '' ? undefined : Number(x)));
        for (const p of tm.partitions)
          if (range === undefined || (p.partition >= (lo ?? 0) && p.partition <= (hi ?? lo ?? Infinity)))
            wanted.push({ topic: tm.name, partition: p.partition });
      }
    } else {
      const re = o.topic ? new RegExp(`^(?:${o.topic})$`) : null;
      for (const tm of topics) {
        if (re && !re.test(tm.name)) continue;
        if (o.excludeInternalTopics && tm.isInternal) continue;
        for (const p of tm.partitions) if (!onlyParts || onlyParts.has(p.partition)) wanted.push({ topic: tm.name, partition: p.partition });
      }
    }
    if (wanted.length === 0) throw new CliError('Could not match any topic-partitions with the specified filters');
    const answers = await admin.listOffsets(wanted.map((w) => ({ ...w, timestamp: time })));
    for (const a of answers) console.log(`${a.topic}:${a.partition}:${a.offset >= 0n ? a.offset : ''}`);
    return 0;
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
