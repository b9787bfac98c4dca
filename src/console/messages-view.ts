/**
 * The messages page's reads and writes: browse one partition from an offset, a time, or its
 * newest records, and produce a test message. Reads are bounded on the server: a fetch asks for
 * at most FETCH_BYTES, a browse scans at most SCAN_RECORDS records or SCAN_BYTES bytes (a filter
 * that matches nothing stops there and says where it got to), and what reaches the page is cut
 * by record-format.ts. It reads with the client library's Fetcher on the Admin's own
 * connections, so it works against any cluster the console is pointed at.
 */
import type { Admin, Producer } from '../client/index.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../client/index.js';
import { Fetcher } from '../client/fetcher.js';
import type { ConsumerRecord } from '../client/consumer.js';
import { badRequest, notFound } from './console-error.js';
import { recordMatches, showBytes, type ShownBytes } from './record-format.js';

export const MAX_LIMIT = 500;
const FETCH_BYTES = 512 * 1024;
const SCAN_RECORDS = 10_000;
const SCAN_BYTES = 8 * 1024 * 1024;
const BROWSE_DEADLINE_MS = 5000;

export interface BrowseQuery {
  topic: string;
  partition: number;
  /** newest: the last `limit` records (newest first); offset or time: forward from that point. */
  from: 'newest' | 'offset' | 'time';
  offset?: bigint;
  /** Milliseconds since the epoch. */
  time?: bigint;
  limit: number;
  filter?: string;
}

export interface ShownRecord {
  offset: string;
  timestamp: string;
  timestampType: string;
  key: ShownBytes;
  value: ShownBytes;
  headers: { key: string; value: ShownBytes }[];
}

export interface BrowseResult {
  topic: string;
  partition: number;
  earliest: string;
  latest: string;
  /** The first offset read. */
  start: string;
  /** Where a next page (forward) would start. */
  next: string;
  scanned: number;
  records: ShownRecord[];
  notice?: string;
}

/** The partition's metadata, or a 404 naming what is missing. */
async function checkPartition(admin: Admin, topic: string, partition: number): Promise<void> {
  const md = await admin.cluster.refreshMetadata([topic]);
  const t = md.topics.get(topic);
  if (!t || t.errorCode !== 0) throw notFound(`topic ${topic} does not exist`);
  if (!t.partitions.some((p) => p.partition === partition))
    throw notFound(`partition ${partition} of topic ${topic} does not exist (it has ${t.partitions.length})`);
}

export async function browse(admin: Admin, q: BrowseQuery): Promise<BrowseResult> {
  await checkPartition(admin, q.topic, q.partition);
  const tp = { topic: q.topic, partition: q.partition };
  // One query per partition and request (ListOffsets answers a partition once).
  const [[first], [end]] = await Promise.all([
    admin.listOffsets([{ ...tp, timestamp: EARLIEST_TIMESTAMP }]),
    admin.listOffsets([{ ...tp, timestamp: LATEST_TIMESTAMP }]),
  ]);
  const earliest = first!.offset;
  const latest = end!.offset;
  let start: bigint;
  let notice: string | undefined;
  if (q.from === 'newest') {
    const window = BigInt(q.filter ? SCAN_RECORDS : q.limit);
    start = latest - window > earliest ? latest - window : earliest;
  } else if (q.from === 'offset') {
    const offset = q.offset!;
    if (offset > latest) throw badRequest(`offset ${offset} is past the end of ${q.topic}-${q.partition} (its latest offset is ${latest})`);
    start = offset < earliest ? earliest : offset;
    if (offset < earliest) notice = `offset ${offset} is before the earliest offset ${earliest}: reading from ${earliest}`;
  } else {
    const [at] = await admin.listOffsets([{ ...tp, timestamp: q.time! }]);
    start = at!.offset < 0n ? latest : at!.offset;
    if (at!.offset < 0n) notice = `no message at or after ${new Date(Number(q.time!)).toISOString()}`;
  }
  const read = await readRange(admin, q, start, latest);
  const records = q.from === 'newest' ? read.matched.slice(-q.limit).reverse() : read.matched;
  if (read.cut && records.length < q.limit) notice = `scanned ${read.scanned} records up to offset ${read.next} (the bound of one read); continue from there`;
  return {
    topic: q.topic,
    partition: q.partition,
    earliest: String(earliest),
    latest: String(latest),
    start: String(start),
    next: String(read.next),
    scanned: read.scanned,
    records: records.map(shown),
    ...(notice ? { notice } : {}),
  };
}

/** Reads forward from `start` to `end`, keeping matches, within the scan bounds. */
async function readRange(admin: Admin, q: BrowseQuery, start: bigint, end: bigint) {
  const matched: ConsumerRecord[] = [];
  let scanned = 0;
  let bytes = 0;
  let next = start;
  let cut = false;
  if (start >= end) return { matched, scanned, next, cut };
  const fetcher = new Fetcher(admin.cluster, { maxWaitMs: 100, minBytes: 1, maxBytes: FETCH_BYTES, maxPartitionBytes: FETCH_BYTES, isolationLevel: 0 });
  fetcher.setAssignment([{ topic: q.topic, partition: q.partition }]);
  fetcher.state(q.topic, q.partition)!.seek(start);
  const deadline = Date.now() + BROWSE_DEADLINE_MS;
  // Forward reads stop at `limit` matches; newest-first reads the whole (bounded) window.
  const enough = () => q.from !== 'newest' && matched.length >= q.limit;
  while (next < end && !enough()) {
    if (scanned >= SCAN_RECORDS || bytes >= SCAN_BYTES || Date.now() > deadline) {
      cut = true;
      break;
    }
    await fetcher.fetch(Math.max(1, deadline - Date.now()));
    for (const r of fetcher.take(SCAN_RECORDS)) {
      if (r.offset >= end || enough()) break;
      scanned++;
      bytes += (r.key?.length ?? 0) + (r.value?.length ?? 0);
      next = r.offset + 1n;
      if (!q.filter || recordMatches(q.filter, r.key, r.value, r.headers)) matched.push(r);
    }
    // Past compacted-away or transaction-marker offsets the position moves without records.
    const position = fetcher.state(q.topic, q.partition)!.position;
    if (position !== null && position > next && matched.length < q.limit) next = position < end ? position : end;
  }
  return { matched, scanned, next, cut };
}

function shown(r: ConsumerRecord): ShownRecord {
  return {
    offset: String(r.offset),
    timestamp: String(r.timestamp),
    timestampType: r.timestampType,
    key: showBytes(r.key),
    value: showBytes(r.value),
    headers: r.headers.map((h) => ({ key: h.key, value: showBytes(h.value) })),
  };
}

export interface ProduceRequest {
  topic: string;
  partition?: number;
  key?: string | null;
  value: string | null;
  headers?: Record<string, string>;
}

/** Produces one message (acks=all, the producer's default) and says where it landed. */
export async function produce(admin: Admin, producer: Producer, r: ProduceRequest): Promise<{ partition: number; offset: string }> {
  if (r.partition !== undefined) await checkPartition(admin, r.topic, r.partition);
  else {
    const md = await admin.cluster.refreshMetadata([r.topic]);
    if (md.topics.get(r.topic)?.errorCode !== 0) throw notFound(`topic ${r.topic} does not exist`);
  }
  const meta = await producer.send({
    topic: r.topic,
    value: r.value,
    ...(r.key !== undefined ? { key: r.key } : {}),
    ...(r.partition !== undefined ? { partition: r.partition } : {}),
    ...(r.headers ? { headers: r.headers } : {}),
  });
  return { partition: meta.partition, offset: String(meta.offset) };
}
