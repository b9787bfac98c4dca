/**
 * The hostile inputs of issue 9, each a reusable bomb: what it sends, and what it saw come back.
 * The harness (fuzz.ts) runs each under a deadline, then probes on the bomb's own connection
 * (when it left one open) and on a fresh one, and judges the broker by its RSS and loop delay.
 *
 * `scale` 'short' caps the expensive ones for the test suite; 'full' is the issue's size.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  ApiVersionsRequest,
  CreatePartitionsRequest,
  CreatePartitionsResponse,
  CreateTopicsRequest,
  CreateTopicsResponse,
  FetchRequest,
  FetchResponse,
  ListOffsetsRequest,
  ListOffsetsResponse,
  ProduceRequest,
  ProduceResponse,
} from '../../src/protocol/messages/index.js';
import { gzipHugeValueBatch, legacyGzipBombMessageSet, zstdDeclaredHugeBatch } from './bomb-payloads.js';
import { FuzzConnection } from './wire.js';

export type BombScale = 'short' | 'full';

export interface BombContext {
  host: string;
  port: number;
  scale: BombScale;
  /** Resolves when the bomb's time is up: long-running bombs stop sending then. */
  deadline: Promise<void>;
  deadlineMs: number;
  note(s: string): void;
}

export interface BombRun {
  /** A connection the bomb leaves open for the same-connection probe (the harness closes it). */
  conn?: FuzzConnection;
  /** Kafka error codes and other answers seen, for the report. */
  answers: string[];
  /** A failure the bomb itself detects (e.g. a response ignoring max_bytes). */
  failures: string[];
  /** Extra connections to close after the probes. */
  cleanup?: () => void;
}

export interface Bomb {
  name: string;
  description: string;
  run(ctx: BombContext): Promise<BombRun>;
}

const MB = 1024 * 1024;
let correlation = 1;

/** Payloads are cached in the temp dir: the big ones take seconds to deflate. */
async function cached(name: string, make: () => Promise<Buffer> | Buffer): Promise<Buffer> {
  const file = join(tmpdir(), `fjord-fuzz-v1-${name}.bin`); // bump v1 when a generator changes
  if (existsSync(file)) return readFileSync(file);
  const b = await make();
  writeFileSync(file, b);
  return b;
}

function errorsOf(res: unknown): string[] {
  const codes = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object' && !Buffer.isBuffer(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'errorCode' && typeof x === 'number') codes.add(String(x));
        else if (k === 'errorMessage' && typeof x === 'string') codes.add(x.slice(0, 120));
        else walk(x);
      }
    }
  };
  walk(res);
  return [...codes];
}

async function createTopic(conn: FuzzConnection, name: string, partitions: number, timeoutMs: number): Promise<string[]> {
  const res = await conn.request<CreateTopicsRequest>(
    19,
    7,
    { topics: [{ name, numPartitions: partitions, replicationFactor: 1 }], timeoutMs: 30_000 },
    timeoutMs,
    correlation++,
  );
  return errorsOf(res);
}

async function produce(conn: FuzzConnection, version: number, topic: string, records: Buffer, timeoutMs: number): Promise<ProduceResponse> {
  return (await conn.request<ProduceRequest>(
    0,
    version,
    { acks: 1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] },
    timeoutMs,
    correlation++,
  )) as ProduceResponse;
}

function answerOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function legacyGzip(name: string, inflatedMb: number): Bomb {
  return {
    name,
    description: `Produce v2, one legacy magic-1 gzip message inflating to ${inflatedMb} MB of tiny messages`,
    async run(ctx) {
      const set = await cached(`legacy-gzip-${inflatedMb}m`, async () => (await legacyGzipBombMessageSet(inflatedMb * MB)).messageSet);
      ctx.note(`${Math.round(set.length / 1024)} KB compressed`);
      const conn = await FuzzConnection.connect(ctx.port, ctx.host);
      await createTopic(conn, name, 1, ctx.deadlineMs).catch(() => undefined);
      const answers: string[] = [];
      try {
        answers.push(...errorsOf(await produce(conn, 2, name, set, ctx.deadlineMs)).map((c) => `produce: ${c}`));
      } catch (e) {
        answers.push(`produce: ${answerOf(e)}`);
      }
      return { conn, answers, failures: [] };
    },
  };
}

function gzipDownConvert(name: string, valueMb: number): Bomb {
  return {
    name,
    description: `a v2 gzip batch holding one ${valueMb} MB value, then Fetch v3 (down-conversion) with max_bytes 1 MB`,
    async run(ctx) {
      const batch = await cached(`gzip-value-${valueMb}m`, () => gzipHugeValueBatch(valueMb * MB));
      ctx.note(`${Math.round(batch.length / 1024)} KB compressed`);
      const conn = await FuzzConnection.connect(ctx.port, ctx.host);
      await createTopic(conn, name, 1, ctx.deadlineMs).catch(() => undefined);
      const answers: string[] = [];
      const failures: string[] = [];
      try {
        answers.push(...errorsOf(await produce(conn, 7, name, batch, ctx.deadlineMs)).map((c) => `produce: ${c}`));
        const fetch = (await conn.request<FetchRequest>(
          1,
          3,
          {
            replicaId: -1,
            maxWaitMs: 0,
            minBytes: 1,
            maxBytes: MB,
            topics: [{ topic: name, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: MB }] }],
          },
          ctx.deadlineMs,
          correlation++,
        )) as FetchResponse;
        const p = fetch.responses[0]?.partitions[0];
        const size = p?.records?.length ?? 0;
        answers.push(`fetch v3: error ${p?.errorCode}, ${size} bytes of records`);
        // Kafka returns at least one whole batch even over max_bytes, but not a 900 MB conversion.
        if (size > 2 * MB) failures.push(`Fetch v3 with max_bytes 1 MB returned ${Math.round(size / MB)} MB`);
      } catch (e) {
        answers.push(answerOf(e));
      }
      return { conn, answers, failures };
    },
  };
}

function zstdTimestamp(name: string): Bomb {
  return {
    name,
    description: 'a 64 KB zstd v2 batch whose frame declares 2 GB of content, then ListOffsets by timestamp over it (3 times)',
    async run(ctx) {
      const batch = zstdDeclaredHugeBatch(2 ** 31 - 1);
      ctx.note(`${Math.round(batch.length / 1024)} KB compressed`);
      const conn = await FuzzConnection.connect(ctx.port, ctx.host);
      await createTopic(conn, name, 1, ctx.deadlineMs).catch(() => undefined);
      const answers: string[] = [];
      try {
        answers.push(...errorsOf(await produce(conn, 7, name, batch, ctx.deadlineMs)).map((c) => `produce: ${c}`));
        const ts = batch.readBigInt64BE(27);
        for (let i = 0; i < 3; i++) {
          const t0 = performance.now();
          const lo = (await conn.request<ListOffsetsRequest>(
            2,
            1,
            { replicaId: -1, topics: [{ name, partitions: [{ partitionIndex: 0, timestamp: ts }] }] },
            ctx.deadlineMs,
            correlation++,
          )) as ListOffsetsResponse;
          const p = lo.topics[0]?.partitions[0];
          answers.push(`list-offsets: error ${p?.errorCode} offset ${p?.offset} in ${Math.round(performance.now() - t0)} ms`);
        }
      } catch (e) {
        answers.push(answerOf(e));
      }
      return { conn, answers, failures: [] };
    },
  };
}

function createPartitions(name: string, count: number): Bomb {
  return {
    name,
    description: `CreatePartitions growing a topic to ${count} partitions`,
    async run(ctx) {
      const conn = await FuzzConnection.connect(ctx.port, ctx.host);
      const answers: string[] = [];
      try {
        await createTopic(conn, name, 1, ctx.deadlineMs);
        const res = (await conn.request<CreatePartitionsRequest>(
          37,
          3,
          { topics: [{ name, count, assignments: null }], timeoutMs: 30_000, validateOnly: false },
          ctx.deadlineMs,
          correlation++,
        )) as CreatePartitionsResponse;
        answers.push(...errorsOf(res).map((c) => `create-partitions: ${c}`));
      } catch (e) {
        answers.push(answerOf(e));
      }
      return { conn, answers, failures: [] };
    },
  };
}

function createTopics(name: string, count: number): Bomb {
  return {
    name,
    description: `CreateTopics asking for ${count} partitions`,
    async run(ctx) {
      const conn = await FuzzConnection.connect(ctx.port, ctx.host);
      const answers: string[] = [];
      try {
        const res = (await conn.request<CreateTopicsRequest>(
          19,
          7,
          { topics: [{ name, numPartitions: count, replicationFactor: 1 }], timeoutMs: 30_000 },
          ctx.deadlineMs,
          correlation++,
        )) as CreateTopicsResponse;
        answers.push(...errorsOf(res).map((c) => `create-topics: ${c}`));
      } catch (e) {
        answers.push(answerOf(e));
      }
      return { conn, answers, failures: [] };
    },
  };
}

function partialFrames(name: string, connections: number, mbEach: number): Bomb {
  return {
    name,
    description: `${connections} connections each holding a ${mbEach} MB partial frame (declared 100 MB)`,
    async run(ctx) {
      const conns = await Promise.all(Array.from({ length: connections }, () => FuzzConnection.connect(ctx.port, ctx.host)));
      const chunk = Buffer.alloc(MB, 0x41);
      const header = Buffer.alloc(4);
      header.writeInt32BE(100 * MB, 0); // Kafka's default socket.request.max.bytes
      // A broker that stops reading (a cap on bytes held for requests) is right to: the bomb
      // stops pushing after half its time and reports how much the broker took.
      let timedOut = false;
      const budget = new Promise<void>((r) => setTimeout(r, ctx.deadlineMs / 2).unref());
      void budget.then(() => (timedOut = true));
      let sentTotal = 0;
      await Promise.all(
        conns.map(async (c) => {
          await c.write(header);
          for (let i = 0; i < mbEach && !timedOut && !c.closed; i++) {
            await Promise.race([c.write(chunk), budget]);
            sentTotal += MB;
          }
        }),
      );
      const closed = conns.filter((c) => c.closedByPeer).length;
      const answers = [
        `${Math.round(sentTotal / MB)} MB accepted by the broker's sockets${timedOut ? ` in ${ctx.deadlineMs / 2000} s (the broker stopped reading)` : ''}, ${closed} connections closed by the broker`,
      ];
      return { answers, failures: [], cleanup: () => conns.forEach((c) => c.close()) };
    },
  };
}

function manyConnections(name: string, n: number): Bomb {
  return {
    name,
    description: `${n} connections opened at once, each sending one ApiVersions`,
    async run(ctx) {
      const conns: FuzzConnection[] = [];
      const answers: string[] = [];
      let refused = 0;
      await Promise.all(
        Array.from({ length: n }, async () => {
          try {
            conns.push(await FuzzConnection.connect(ctx.port, ctx.host, ctx.deadlineMs));
          } catch {
            refused++;
          }
        }),
      );
      let answered = 0;
      await Promise.all(
        conns.map(async (c) => {
          try {
            await c.request<ApiVersionsRequest>(18, 3, { clientSoftwareName: 'many', clientSoftwareVersion: '1' }, ctx.deadlineMs, correlation++);
            answered++;
          } catch {
            /* counted below */
          }
        }),
      );
      answers.push(`${conns.length} connected, ${refused} refused, ${answered} answered`);
      return { answers, failures: [], cleanup: () => conns.forEach((c) => c.close()) };
    },
  };
}

/** Every bomb, by name. `scale` picks the issue's sizes or the test suite's capped ones. */
export function bombSet(scale: BombScale): Bomb[] {
  const full = scale === 'full';
  return [
    legacyGzip('legacy-gzip-100m', 100),
    ...(full ? [legacyGzip('legacy-gzip-1g', 1024)] : []),
    gzipDownConvert(full ? 'gzip-900m-fetch-v3' : 'gzip-200m-fetch-v3', full ? 900 : 200),
    zstdTimestamp('zstd-2g-list-offsets'),
    createPartitions('create-partitions-25k', 25_000),
    createTopics('create-topics-25k', 25_000),
    partialFrames(full ? 'partial-frames-12x90m' : 'partial-frames-12x45m', 12, full ? 90 : 45),
    manyConnections('connections-500', 500),
  ];
}

/** The trickle runs beside the fuzzing (it is mostly waiting): a frame sent at one byte a second. */
export const TRICKLE_BOMB = 'trickle';

export interface TrickleResult {
  closedByBroker: boolean;
  afterMs: number;
  bytesSent: number;
}

/** Sends a size prefix then one byte a second until the broker closes the connection or `forMs` passes. */
export async function trickle(host: string, port: number, forMs: number, stop: { stopped: boolean }): Promise<TrickleResult> {
  const conn = await FuzzConnection.connect(port, host);
  const t0 = Date.now();
  const header = Buffer.alloc(4);
  header.writeInt32BE(1000, 0);
  let sent = 0;
  try {
    for (let i = 0; i < 4; i++) {
      await conn.write(header.subarray(i, i + 1)); // even the size prefix, byte by byte
      sent++;
      if (await conn.waitClosed(1000)) break;
    }
    while (!conn.closed && !stop.stopped && Date.now() - t0 < forMs) {
      await conn.write(Buffer.from([0x42]));
      sent++;
      await conn.waitClosed(1000);
    }
    return { closedByBroker: conn.closedByPeer, afterMs: Date.now() - t0, bytesSent: sent };
  } finally {
    conn.close();
  }
}
