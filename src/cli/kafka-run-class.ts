#!/usr/bin/env node
/**
 * kafka-run-class.sh <class> [args]: Kafka's way to run a tool by its class name, for the tools
 * that had no script of their own. Fjord knows Kafka's ZooKeeper offset tools (removed in Kafka
 * 2.x with the ZooKeeper consumer):
 *
 *   kafka.tools.ExportZkOffsets --zkconnect zk:2181 [--group g]... --output-file f
 *     writes `/consumers/<group>/offsets/<topic>/<partition>:<offset>`, one line per stored
 *     offset, of the groups given (every group under /consumers without --group);
 *   kafka.tools.ImportZkOffsets --zkconnect zk:2181 --input-file f
 *     writes each line's offset to its znode (created when missing). The whole file is checked
 *     before anything is written.
 *
 * Any other class name gets one line saying which classes are known.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ZkConsumerOffsets, legacyGroupIdError } from '../metadata/zk/zk-consumer-offsets.js';
import { consumerOffsetPath } from '../metadata/zk/zk-paths.js';
import { topicNameError } from '../metadata/topic-names.js';
import { collect, createProgram, parseArgs, requireOption, runTool, CliError } from './common/tool.js';
import { openZk } from './common/zk-admin.js';
import { messageOf } from '../common/errors.js';

const TOOL = 'kafka-run-class.sh';
const ZK_TIMEOUT_MS = 30_000;

async function exportZkOffsets(argv: string[]): Promise<number> {
  const program = createProgram('kafka.tools.ExportZkOffsets', "Export the offsets of ZooKeeper consumer groups to a file (Kafka's path:offset lines).")
    .option('--zkconnect <zk>', 'REQUIRED: ZooKeeper, host:port[,host:port][/chroot]')
    .option('--group <group>', 'a consumer group (repeatable; default every group under /consumers)', collect)
    .option('--output-file <file>', 'REQUIRED: the file to write');
  const o = parseArgs(program, argv) as { zkconnect?: string; group?: string[]; outputFile?: string } | null;
  if (o === null) return 0;
  const connect = requireOption(o.zkconnect, '--zkconnect');
  const output = requireOption(o.outputFile, '--output-file');
  for (const g of o.group ?? []) {
    const bad = legacyGroupIdError(g);
    if (bad) throw new CliError(bad);
  }
  const store = new ZkConsumerOffsets((await openZk(connect, new Map())).session, ZK_TIMEOUT_MS);
  const groups = o.group ?? (await store.groups());
  let text = '';
  for (const g of groups) {
    for (const [topic, parts] of await store.groupOffsets(g)) {
      for (const [p, offset] of parts) text += `${consumerOffsetPath(g, topic, p)}:${offset}\n`;
    }
  }
  try {
    writeFileSync(output, text);
  } catch (err) {
    throw new CliError(`cannot write ${output}: ${messageOf(err)}`);
  }
  return 0;
}

async function importZkOffsets(argv: string[]): Promise<number> {
  const program = createProgram('kafka.tools.ImportZkOffsets', "Import consumer group offsets into ZooKeeper from a file of Kafka's path:offset lines.")
    .option('--zkconnect <zk>', 'REQUIRED: ZooKeeper, host:port[,host:port][/chroot]')
    .option('--input-file <file>', 'REQUIRED: the file to read');
  const o = parseArgs(program, argv) as { zkconnect?: string; inputFile?: string } | null;
  if (o === null) return 0;
  const connect = requireOption(o.zkconnect, '--zkconnect');
  const input = requireOption(o.inputFile, '--input-file');
  let text: string;
  try {
    text = readFileSync(input, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${input}: ${messageOf(err)}`);
  }
  const entries: { group: string; topic: string; partition: number; offset: bigint }[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const m = /^\/consumers\/([^/]+)\/offsets\/([^/]+)\/(\d+):(-?\d+)$/.exec(line);
    const bad = `${input} line ${i + 1}: expected /consumers/<group>/offsets/<topic>/<partition>:<offset>, got ${JSON.stringify(line.slice(0, 200))}`;
    if (!m) throw new CliError(bad);
    const [, group, topic, partition, offset] = m as unknown as [string, string, string, string, string];
    const invalid = legacyGroupIdError(group) ?? topicNameError(topic);
    if (invalid) throw new CliError(`${input} line ${i + 1}: ${invalid}`);
    entries.push({ group, topic, partition: Number(partition), offset: BigInt(offset) });
  });
  const store = new ZkConsumerOffsets((await openZk(connect, new Map())).session, ZK_TIMEOUT_MS);
  for (const e of entries) await store.commit(e.group, e.topic, e.partition, e.offset);
  return 0;
}

const CLASSES: Record<string, (argv: string[]) => Promise<number>> = {
  'kafka.tools.ExportZkOffsets': exportZkOffsets,
  'kafka.tools.ImportZkOffsets': importZkOffsets,
};

async function main(argv: string[]): Promise<number> {
  const [cls, ...rest] = argv;
  if (cls === undefined || cls === '-h' || cls === '--help') {
    console.log(
      `Usage: ${TOOL} [options] <class> [class options]\n\nRuns one of Kafka's tools by its class name: ${Object.keys(CLASSES).join(', ')} (<class> --help for its options).`,
    );
    return cls === undefined ? 1 : 0;
  }
  const run = CLASSES[cls];
  if (!run)
    throw new CliError(
      `class ${cls} is not one Fjord runs; known: ${Object.keys(CLASSES).join(', ')} (the other Kafka tools have their own kafka-*.sh script)`,
    );
  return run(rest);
}

runTool(TOOL, main);
