#!/usr/bin/env node
/**
 * kafka-delete-records.sh: moves partitions' log start offsets forward, from a JSON file
 * {"partitions":[{"topic":"t","partition":0,"offset":3}],"version":1} (offset -1 = the high
 * watermark), printing each partition's new low watermark.
 */
import { readFileSync } from 'node:fs';
import { Admin } from '../client/index.js';
import { createProgram, parseArgs, requireOption, closeAtExit, runTool, CliError, describeError } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-delete-records.sh';

function readPlan(path: string): { topic: string; partition: number; offset: bigint }[] {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CliError(`cannot read offset JSON file ${path}: ${(err as Error).message}`);
  }
  const parts = (doc as { partitions?: unknown }).partitions;
  if (!Array.isArray(parts) || parts.length === 0) throw new CliError(`${path} has no "partitions" list`);
  return parts.map((p: { topic?: unknown; partition?: unknown; offset?: unknown }) => {
    if (typeof p.topic !== 'string' || !Number.isInteger(p.partition) || !Number.isInteger(p.offset)) {
      throw new CliError(`${path}: each partition needs "topic", "partition" and "offset", got ${JSON.stringify(p)}`);
    }
    return { topic: p.topic, partition: p.partition as number, offset: BigInt(p.offset as number) };
  });
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Delete records of partitions up to given offsets.')
    .option('--bootstrap-server <server>', 'REQUIRED: the server(s) to connect to')
    .option('--offset-json-file <file>', 'REQUIRED: JSON file with the partitions and offsets')
    .option('--command-config <file>', 'property file with configs for the admin client');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as { bootstrapServer?: string; offsetJsonFile?: string; commandConfig?: string };
  const plan = readPlan(requireOption(o.offsetJsonFile, '--offset-json-file'));
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), requireOption(o.bootstrapServer, '--bootstrap-server'))));
  try {
    console.log('Executing records delete operation');
    const results = await admin.deleteRecords(plan);
    console.log('Records delete operation completed:');
    for (const r of results) {
      console.log(
        r.error
          ? `partition: ${r.topic}-${r.partition}\terror: ${describeError(r.error)}`
          : `partition: ${r.topic}-${r.partition}\tlow_watermark: ${r.lowWatermark}`,
      );
    }
    return results.some((r) => r.error) ? 1 : 0;
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
