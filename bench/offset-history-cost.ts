/**
 * Issue 25's measurement: what the offset history costs a commit. Two child brokers from this
 * work tree's dist/ (node dist/server/main.js), the same settings but offsets.history.enable
 * (true on one, false on the other), each on its own temporary log dir, in the same run; each
 * round runs every row on both, alternating which goes first. Rows:
 * - latency: one connection commits one partition of one group, one OffsetCommit (v8, as Kafka's
 *   reset tool: no member, generation -1) at a time, the offset moving each time (every commit
 *   makes one history record): p50 / p99 / mean round trip;
 * - unmoved: the same, the offset never moving (the seed's console consumer: only `alive` records);
 * - throughput: 16 connections, one group each, commit 8 partitions per request as fast as
 *   answers come, offsets moving: commits (requests) per second.
 * Then, on the history broker only, the history's disk use: bytes of its partition's .log
 * segments per record, for a group committing 1 partition per request (one record per batch) and
 * 8 partitions per request (8 per batch), paced past the writer's 50 ms linger as one commit a
 * second is, and what one commit per second per partition makes in a day (bytes per record x
 * 86,400 per partition).
 *
 *   node --import tsx bench/offset-history-cost.ts [commits=2000] [rounds=3]
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Api } from '../src/client/apis.js';
import { Connection } from '../src/client/connection.js';
import { OFFSET_HISTORY_TOPIC, historyPartitionFor } from '../src/protocol/offset-history/history-record.js';
import { type FjordChild, startFjordChild } from './suite/fjord-child.js';
import { mean, median } from './suite/stats.js';

const COMMITS = Number(process.argv[2] ?? 2000);
const ROUNDS = Number(process.argv[3] ?? 3);
const OFFSETS_PARTITIONS = 50;

type Broker = FjordChild;

async function startBroker(name: 'history on' | 'history off', work: string): Promise<Broker> {
  const b = await startFjordChild({
    name,
    work,
    props: {
      'offsets.topic.replication.factor': '1',
      'offsets.topic.num.partitions': String(OFFSETS_PARTITIONS),
      'offsets.history.enable': name === 'history on' ? 'true' : 'false',
    },
    env: { FJORD_LOG_LEVEL: 'warn' },
  });
  await b.admin.createTopics([{ name: 'orders', numPartitions: 8, replicationFactor: 1 }]);
  // The offsets topic (and, on the history broker, the history topic) made before measuring.
  await b.admin.alterGroupOffsets('warm-up', [{ topic: 'orders', partition: 0, offset: 1n }]);
  return b;
}

const connect = (b: Broker) => Connection.connect('127.0.0.1', b.port, { clientId: 'history-bench', connectTimeoutMs: 10000, requestTimeoutMs: 30000 });

/** One OffsetCommit v8 of `partitions` partitions of `orders` at `offset`; throws on an error code. */
async function commit(conn: Connection, group: string, partitions: number, offset: bigint): Promise<void> {
  const res = await conn.send(
    Api.OffsetCommit,
    {
      groupId: group,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'orders',
          partitions: Array.from({ length: partitions }, (_, p) => ({
            partitionIndex: p,
            committedOffset: offset,
            committedLeaderEpoch: -1,
            committedMetadata: '',
          })),
        },
      ],
    },
    { version: 8 },
  );
  const code = res.topics[0]?.partitions.find((p) => p.errorCode !== 0)?.errorCode;
  if (code !== undefined) throw new Error(`OffsetCommit answered error ${code}`);
}

let groupSeq = 0;

/** Sequential commits of one partition: round trips in ms. */
async function latency(b: Broker, moving: boolean): Promise<number[]> {
  const conn = await connect(b);
  const group = `lat-${groupSeq++}`;
  const times: number[] = [];
  try {
    for (let i = 0; i < COMMITS; i++) {
      const t0 = performance.now();
      await commit(conn, group, 1, moving ? BigInt(i + 1) : 1n);
      times.push(performance.now() - t0);
    }
  } finally {
    conn.close();
  }
  return times;
}

/** 16 groups committing 8 partitions per request concurrently: requests per second. */
async function throughput(b: Broker): Promise<number> {
  const conns = await Promise.all(Array.from({ length: 16 }, () => connect(b)));
  const per = Math.ceil(COMMITS / conns.length);
  const t0 = performance.now();
  try {
    await Promise.all(
      conns.map(async (c) => {
        const group = `tp-${groupSeq++}`;
        for (let i = 0; i < per; i++) await commit(c, group, 8, BigInt(i + 1));
      }),
    );
  } finally {
    for (const c of conns) c.close();
  }
  return (per * conns.length) / ((performance.now() - t0) / 1000);
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

/** Bytes of the .log segments of one history partition. */
async function historyLogBytes(b: Broker, partition: number): Promise<number> {
  const dir = path.join(b.logDir, `${OFFSET_HISTORY_TOPIC}-${partition}`);
  let n = 0;
  for (const f of await readdir(dir).catch(() => [] as string[])) if (f.endsWith('.log')) n += (await stat(path.join(dir, f))).size;
  return n;
}

/**
 * Bytes per history record of a group committing `partitions` partitions per request, 300 times,
 * paced past the writer's linger (as one commit per second is): each request's records, one batch.
 */
async function bytesPerRecord(b: Broker, partitions: number): Promise<number> {
  const commits = 300;
  const group = `disk-${partitions}-${groupSeq++}`;
  const p = historyPartitionFor(group, OFFSETS_PARTITIONS);
  const conn = await connect(b);
  const before = await historyLogBytes(b, p);
  try {
    for (let i = 0; i < commits; i++) {
      await commit(conn, group, partitions, BigInt(i + 1));
      await new Promise((r) => setTimeout(r, 60));
    }
  } finally {
    conn.close();
  }
  // The history is written after the commit's answer: wait until the last record is there.
  const deadline = Date.now() + 30000;
  let last = -1;
  for (;;) {
    const now = await historyLogBytes(b, p);
    if (now === last || Date.now() > deadline) break;
    last = now;
    await new Promise((r) => setTimeout(r, 500));
  }
  return (last - before) / (commits * partitions);
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-history-bench-'));
  const load0 = loadavg()[0]!;
  const on = await startBroker('history on', work);
  const off = await startBroker('history off', work);
  const rows = new Map<string, { on: number[]; off: number[] }>();
  const add = (row: string, which: Broker, v: number) => {
    const r = rows.get(row) ?? { on: [], off: [] };
    (which === on ? r.on : r.off).push(v);
    rows.set(row, r);
  };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const b of round % 2 === 0 ? [on, off] : [off, on]) {
        const moving = await latency(b, true);
        add('commit latency p50 (ms), offset moving', b, median(moving));
        add('commit latency p99 (ms), offset moving', b, pct(moving, 99));
        add('commit latency mean (ms), offset moving', b, mean(moving));
        const unmoved = await latency(b, false);
        add('commit latency p50 (ms), offset unmoved', b, median(unmoved));
        add('commit latency p99 (ms), offset unmoved', b, pct(unmoved, 99));
        add('commits/s, 16 groups x 8 partitions, moving', b, await throughput(b));
      }
    }
    const one = await bytesPerRecord(on, 1);
    const eight = await bytesPerRecord(on, 8);
    console.log(
      `# ${COMMITS} commits per row, ${ROUNDS} rounds (alternating order); load average ${load0.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`,
    );
    console.log('| measurement | history off (median, range) | history on (median, range) | on/off |');
    console.log('|---|---|---|---|');
    for (const [row, r] of rows) {
      const f = (xs: number[]) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`;
      console.log(`| ${row} | ${f(r.off)} | ${f(r.on)} | ${(median(r.on) / median(r.off)).toFixed(3)} |`);
    }
    const day = (bytes: number) => `${((bytes * 86_400) / 1024 / 1024).toFixed(2)} MiB`;
    console.log(
      `\nhistory disk use (.log bytes per record): ${one.toFixed(1)} B with 1 partition per commit (1 record per batch), ${eight.toFixed(1)} B with 8 per commit`,
    );
    console.log(`per partition per day at 1 commit/s: ${day(one)} (group committing 1 partition), ${day(eight)} (8 partitions per commit)`);
  } finally {
    await on.stop();
    await off.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
