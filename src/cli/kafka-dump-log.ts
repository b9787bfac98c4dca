#!/usr/bin/env node
/**
 * kafka-dump-log: prints the batches and records of segment files, or the entries of index
 * files, in the format of Kafka's DumpLogSegments tool.
 */
import { Command, CommanderError } from 'commander';
import { DumpError, dumpFile } from '../storage/dump/dump-log.js';
import { readDecompressionCap } from '../protocol/records/read-limits.js';

async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('kafka-dump-log.sh')
    .description('Dump the contents of Kafka log segments and index files')
    .requiredOption('--files <files>', 'comma separated list of data and index log files to be dumped')
    .option('--print-data-log', 'print the messages content when dumping data logs', false)
    .option('--index-sanity-check', 'only check the integrity of index files', false)
    .option('--offsets-decoder', 'decode __consumer_offsets records (implies --print-data-log)', false)
    .option('--transaction-log-decoder', 'decode __transaction_state records (implies --print-data-log)', false)
    .option('--deep-iteration', 'accepted for compatibility: records are always iterated', false)
    .option(
      '--max-decompressed-bytes <bytes>',
      `largest size one batch's records may inflate to (default ${readDecompressionCap()}, from the default max.message.bytes)`,
    )
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: (s) => process.stdout.write(s) });
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0;
      process.stderr.write(`kafka-dump-log: ${err.message.replace(/^error: /, '')}\n`);
      return 1;
    }
    throw err;
  }
  const opts = program.opts<{
    files: string;
    printDataLog: boolean;
    indexSanityCheck: boolean;
    offsetsDecoder: boolean;
    transactionLogDecoder: boolean;
    maxDecompressedBytes?: string;
  }>();
  let maxDecompressedBytes: number | undefined;
  if (opts.maxDecompressedBytes !== undefined) {
    maxDecompressedBytes = Number(opts.maxDecompressedBytes);
    if (!/^\d+$/.test(opts.maxDecompressedBytes) || !Number.isSafeInteger(maxDecompressedBytes) || maxDecompressedBytes < 1) {
      process.stderr.write(`kafka-dump-log: --max-decompressed-bytes must be a positive integer, not ${opts.maxDecompressedBytes}\n`);
      return 1;
    }
  }
  const files = opts.files
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  if (files.length === 0) {
    process.stderr.write('kafka-dump-log: --files needs at least one file\n');
    return 1;
  }
  const lines: string[] = [];
  const flush = (): void => {
    if (lines.length > 0) process.stdout.write(lines.join('\n') + '\n');
    lines.length = 0;
  };
  let undecodable = 0;
  for (const file of files) {
    try {
      const summary = await dumpFile(file, { ...opts, maxDecompressedBytes }, (l) => {
        lines.push(l);
        if (lines.length >= 1000) flush();
      });
      undecodable += summary.undecodableBatches;
    } catch (err) {
      flush();
      process.stderr.write(`kafka-dump-log: ${err instanceof DumpError ? err.message : (err as Error).message}\n`);
      return 1;
    }
    flush();
  }
  if (undecodable > 0) {
    process.stderr.write(`kafka-dump-log: ${undecodable} batch${undecodable === 1 ? '' : 'es'} could not be decoded (see 'records not decoded' lines)\n`);
    return 2;
  }
  return 0;
}

main(process.argv).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`kafka-dump-log: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
