#!/usr/bin/env node
/**
 * kafka-run-class.sh <class> [args]: Kafka's way to run a tool by its class name. The class
 * names users still type (kafka.tools.GetOffsetShell, kafka.admin.ConsumerGroupCommand, ...,
 * under both the kafka.* name and the org.apache.kafka.tools.* one where Kafka moved the class)
 * run the Fjord tool of the same job (common/tool-classes.ts has the table), with the arguments,
 * signals and exit code a user of its own kafka-*.sh script sees (bin/kafka-run-class.sh execs
 * the tool; run directly, this file runs it as a child). kafka.Kafka runs the broker, as
 * kafka-server-start.sh. Fjord also knows
 * Kafka's ZooKeeper offset tools (removed in Kafka 2.x with the ZooKeeper consumer):
 *
 *   kafka.tools.ExportZkOffsets --zkconnect zk:2181 [--group g]... --output-file f
 *     writes `/consumers/<group>/offsets/<topic>/<partition>:<offset>`, one line per stored
 *     offset, of the groups given (every group under /consumers without --group);
 *   kafka.tools.ImportZkOffsets --zkconnect zk:2181 --input-file f
 *     writes each line's offset to its znode (created when missing). The whole file is checked
 *     before anything is written.
 *
 * Any other class gets the JVM's `Error: Could not find or load main class X` and exit code 1.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { extname } from 'node:path';
import { ZkConsumerOffsets, legacyGroupIdError } from '../metadata/zk/zk-consumer-offsets.js';
import { consumerOffsetPath } from '../metadata/zk/zk-paths.js';
import { topicNameError } from '../metadata/topic-names.js';
import { collect, createProgram, parseArgs, requireOption, runTool, CliError } from './common/tool.js';
import { openZk } from './common/zk-admin.js';
import { messageOf } from '../common/errors.js';
import { BROKER_CLASS, TOOL_CLASSES } from './common/tool-classes.js';

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

/** kafka.Kafka: the broker, through kafka-server-start.sh (cli/ does not load server/). */
function runBroker(argv: string[]): Promise<number> {
  const script = fileURLToPath(new URL('../../bin/kafka-server-start.sh', import.meta.url));
  const child = spawn(script, argv, { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  return new Promise((resolve, reject) => {
    child.on('error', (err) => reject(new CliError(`cannot run ${script}: ${messageOf(err)}`)));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

const OWN_CLASSES: Record<string, (argv: string[]) => Promise<number>> = {
  'kafka.tools.ExportZkOffsets': exportZkOffsets,
  'kafka.tools.ImportZkOffsets': importZkOffsets,
  [BROKER_CLASS]: runBroker,
};

/** What the JVM answers for a class it cannot load (Kafka's script then exits 1). */
const notFound = (cls: string): CliError => new CliError(`Error: Could not find or load main class ${cls}`);

async function main(argv: string[]): Promise<number> {
  const [cls, ...rest] = argv;
  if (cls === undefined || cls === '-h' || cls === '--help') {
    const classes = [...Object.keys(OWN_CLASSES), ...Object.keys(TOOL_CLASSES)].sort();
    console.log(
      `Usage: ${TOOL} [options] <class> [class options]\n\nRuns one of Kafka's tools by its class name (<class> --help for its options):\n  ${classes.join('\n  ')}`,
    );
    return cls === undefined ? 1 : 0;
  }
  const run = OWN_CLASSES[cls];
  if (!run) throw notFound(cls);
  return run(rest);
}

/**
 * A tool's class, when this file is run directly (bin/kafka-run-class.sh execs the tool itself):
 * the tool runs as a child with this process's stdio, arguments after the class name, and exit
 * status. A terminal's Ctrl-C reaches both processes, so only SIGTERM and SIGHUP are passed on.
 */
function runToolClass(cls: string, tool: string): void {
  const file = fileURLToPath(new URL(`./${tool}${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  if (!existsSync(file)) {
    // A tool another branch adds and this build lacks: the class cannot be loaded, as in a JVM.
    process.stderr.write(`${notFound(cls).message}\n`);
    process.exit(1);
  }
  const child = spawn(process.execPath, [...process.execArgv, file, ...process.argv.slice(3)], { stdio: 'inherit' });
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    process.stderr.write(`${TOOL}: cannot run ${file}: ${messageOf(err)}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : 1)));
}

// The error line of an unknown class is the JVM's, without the tool's name in front.
const requested = process.argv[2];
const tool = requested === undefined ? undefined : TOOL_CLASSES[requested];
if (tool !== undefined) runToolClass(requested!, tool);
else
  runTool(TOOL, async (argv) => {
    try {
      return await main(argv);
    } catch (err) {
      if (err instanceof CliError && err.message.startsWith('Error: Could not find')) {
        process.stderr.write(`${err.message}\n`);
        return 1;
      }
      throw err;
    }
  });
