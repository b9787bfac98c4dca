/**
 * Transactional produce beside non-transactional produce in the same run (issue 14's figures):
 * records/s, MB/s, and what a commit costs.
 *
 *   node --import tsx bench/transactional-produce.ts [records=100000] [repeats=3]
 *
 * - One embedded broker (this process, fresh temp log dir, default configs: __transaction_state
 *   with 50 partitions; 20,000 records of each kind are produced first as an unmeasured warm-up), the librdkafka harness bench/rdkafka-perf.c as client, 1 KiB records
 *   (as the other benches), linger.ms=5, batch.size=1 MB, acks=all, no compression, a fresh
 *   3-partition topic per case and repeat (deleted afterwards, so page-cache reuse is the same
 *   for every case), unkeyed records (librdkafka's default partitioner spreads them).
 * - Cases, run in turn within each repeat (the order rotates between repeats):
 *   `idempotent`: `rdkafka-perf produce` with enable.idempotence=true, no transactions;
 *   `txn 100` / `txn 1000`: `rdkafka-perf txn -T 100|1000` with a transactional.id: begin, produce
 *   the transaction's records, flush, commit_transaction(), next transaction.
 * - records/s and MB/s (payload) from the first send (begin_transaction()) to the last delivery
 *   report (the end of the last commit); init_transactions() and the topic's metadata lookup are
 *   done before the clock starts in `txn` mode, while `produce` mode's clock includes its
 *   InitProducerId and metadata round trips (a few ms of a 0.4-2 s case).
 * - Commit latency: the duration of each commit_transaction() call, p50 and p99 over all the
 *   transactions of the case's repeats. It is timed after rd_kafka_flush(), so it is the commit's
 *   own cost (EndTxn, markers on the partitions, __transaction_state appends) and not the wait for
 *   the transaction's records, which commit_transaction() would otherwise include; the flush is
 *   reported beside it. "commit share" = time in commit_transaction() / total time.
 * The load average is printed before and after: other work on the machine shows in every figure,
 * so compare rows of one run only.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Admin } from '../src/client/index.js';
import { startTestBroker } from '../test/helpers/broker.js';
import { loadAverage } from './suite/measure.js';

const exec = promisify(execFile);
const RECORDS = Number(process.argv[2] ?? 100_000);
const REPEATS = Number(process.argv[3] ?? 3);
const SIZE = 1024;
const PARTITIONS = 3;
const HERE = path.dirname(fileURLToPath(import.meta.url));

interface Case {
  name: string;
  perTxn?: number;
}
const CASES: Case[] = [
  { name: 'idempotent, no transactions' },
  { name: 'transactional, 100 records/txn', perTxn: 100 },
  { name: 'transactional, 1,000 records/txn', perTxn: 1000 },
];

type Result = Record<string, number>;

async function harness(bin: string, args: string[]): Promise<Result> {
  const { stdout } = await exec(bin, args, { maxBuffer: 1 << 20, timeout: 300_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Result;
}

function stats(values: number[], digits = 1): string {
  const s = [...values].sort((a, x) => a - x);
  return `${s[Math.floor(s.length / 2)]!.toFixed(digits)} (${s[0]!.toFixed(digits)}–${s.at(-1)!.toFixed(digits)})`;
}

async function main(): Promise<void> {
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-txn-bench-'));
  const bin = path.join(work, 'rdkafka-perf');
  await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const loadBefore = loadAverage();
  const broker = await startTestBroker({
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
  });
  const admin = new Admin({ bootstrapServers: broker.bootstrap, connectTimeoutMs: 30_000 });
  const results = new Map<string, Result[]>();
  let topicNo = 0;
  try {
    // Warm-up, not measured: the first produce on a fresh broker runs before its JIT has compiled
    // the produce path (the first repeat measured 3-5x slower than the others without this).
    {
      const topic = `txn-bench-warmup`;
      await admin.createTopics([{ name: topic, numPartitions: PARTITIONS, replicationFactor: 1 }]);
      const common = ['-b', broker.bootstrap, '-t', topic, '-n', String(Math.min(RECORDS, 20_000)), '-s', String(SIZE), '-a', '-1', '-l', '5', '-B', '1000000'];
      await harness(bin, ['produce', ...common, '-X', 'enable.idempotence=true']);
      await harness(bin, ['txn', ...common, '-T', '100', '-i', 'txn-bench-warmup']);
      await admin.deleteTopics([topic]);
    }
    for (let r = 0; r < REPEATS; r++) {
      const order = CASES.map((_, i) => CASES[(i + r) % CASES.length]!);
      for (const c of order) {
        const topic = `txn-bench-${topicNo++}`;
        const created = await admin.createTopics([{ name: topic, numPartitions: PARTITIONS, replicationFactor: 1 }]);
        const err = created.get(topic);
        if (err) throw new Error(`cannot create ${topic}: ${err.message}`);
        const common = ['-b', broker.bootstrap, '-t', topic, '-n', String(RECORDS), '-s', String(SIZE), '-a', '-1', '-l', '5', '-B', '1000000'];
        const res = c.perTxn
          ? await harness(bin, ['txn', ...common, '-T', String(c.perTxn), '-i', `txn-bench-${topicNo}`])
          : await harness(bin, ['produce', ...common, '-X', 'enable.idempotence=true']);
        if (res.failed !== 0 || res.records !== RECORDS) throw new Error(`${c.name}: ${res.records} delivered, ${res.failed} failed`);
        results.set(c.name, [...(results.get(c.name) ?? []), res]);
        console.error(`${c.name} repeat ${r + 1}: ${JSON.stringify(res)}`);
        await admin.deleteTopics([topic]);
      }
    }
  } finally {
    await admin.close();
    await broker.stop();
    await rm(work, { recursive: true, force: true });
  }
  const rows = CASES.map((c) => {
    const rs = results.get(c.name)!;
    const col = (k: string, d = 1): string =>
      rs[0]![k] === undefined
        ? '–'
        : stats(
            rs.map((x) => x[k]!),
            d,
          );
    return `| ${c.name} | ${col('records_per_s', 0)} | ${col('mb_per_s')} | ${col('commit_p50_ms', 2)} | ${col('commit_p99_ms', 2)} | ${col('flush_p50_ms', 2)} | ${col('commit_share', 3)} |`;
  });
  console.log(
    `records: ${RECORDS} x ${SIZE} B per case and repeat, ${REPEATS} repeats, ${PARTITIONS} partitions, acks=all, linger.ms=5; ` +
      `load average before ${loadBefore}, after ${loadAverage()}\n` +
      `(median (min–max) over the repeats; commit figures are the per-repeat p50/p99 of commit_transaction() after flush)\n\n` +
      `| case | records/s | MB/s | commit p50 ms | commit p99 ms | flush p50 ms | commit share |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}`,
  );
}

await main();
