/**
 * Loading a __consumer_offsets partition that holds batches the coordinator cannot decode (a
 * gzip bomb past the read cap, a corrupt gzip batch): each is logged and skipped, and the load
 * goes on, so the offsets committed before and after them are served after a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Broker } from '../../../src/server/broker.js';
import { buildBrokerConfig } from '../../../src/server/config/index.js';
import {
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  OffsetCommitRequestCodec,
  OffsetCommitResponseCodec,
  OffsetFetchRequestCodec,
  OffsetFetchResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { CRC, CompressionType, RECORD_BATCH_OVERHEAD, computeCrc, encodeBatch } from '../../../src/protocol/records/index.js';
import { gzipValueBomb } from '../../helpers/read-bombs.js';
import { RawClient } from '../../helpers/raw-client.js';

const GROUP = 'g';
const TOPIC = 'orders';

async function startBroker(dir: string, lines: string[]): Promise<Broker> {
  const raw = new Map(
    Object.entries({ listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': dir, 'offsets.topic.num.partitions': '1', 'group.initial.rebalance.delay.ms': '0' }),
  );
  const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
  const broker = new Broker(buildBrokerConfig(raw), logger);
  await broker.start();
  return broker;
}

async function poll<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function commit(c: RawClient, partitionIndex: number, offset: number): Promise<void> {
  await poll(`commit of ${offset}`, async () => {
    const res = await c.request(8, OffsetCommitRequestCodec, OffsetCommitResponseCodec, 2, {
      groupId: GROUP,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      retentionTimeMs: -1n,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex, committedOffset: BigInt(offset) }] }],
    });
    return res.topics[0]!.partitions[0]!.errorCode === 0 ? true : undefined;
  });
}

async function committed(c: RawClient): Promise<number[]> {
  return poll('the offsets to load', async () => {
    const res = await c.request(9, OffsetFetchRequestCodec, OffsetFetchResponseCodec, 1, {
      groupId: GROUP,
      topics: [{ name: TOPIC, partitionIndexes: [0, 1] }],
    });
    const ps = res.topics[0]?.partitions ?? [];
    if (ps.some((p) => p.errorCode !== 0) || ps.length !== 2) return undefined;
    return ps.map((p) => Number(p.committedOffset));
  });
}

async function connectToCoordinator(broker: Broker): Promise<RawClient> {
  const c = await RawClient.connect(broker.boundPorts().get('PLAINTEXT')!);
  await poll('a coordinator', async () => {
    const res = await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 1, { key: GROUP, keyType: 0 });
    return res.errorCode === 0 ? true : undefined;
  });
  return c;
}

test('coordinator load: undecodable batches in __consumer_offsets are logged and skipped, the load goes on', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-coord-'));
  const lines: string[] = [];
  let broker = await startBroker(dir, lines);
  try {
    await broker.services.metadata.createTopic({ name: TOPIC, numPartitions: 2, replicationFactor: 1, configs: {} });
    await broker.services.replicaManager.syncTopic(TOPIC);
    let c = await connectToCoordinator(broker);
    await commit(c, 0, 5);
    // Written into the offsets partition directly, as data from before validation existed.
    const p = broker.services.replicaManager.getPartition('__consumer_offsets', 0)!;
    await p.appendAsLeader(await gzipValueBomb(100_000_000));
    const corrupt = Buffer.from(
      encodeBatch({
        records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: Buffer.from('k'), value: Buffer.alloc(300, 1), headers: [] }],
        compression: CompressionType.Gzip,
      }),
    );
    corrupt.fill(0x5a, RECORD_BATCH_OVERHEAD + 12);
    corrupt.writeUInt32BE(computeCrc(corrupt, 0), CRC);
    await p.appendAsLeader(corrupt);
    await commit(c, 1, 7);
    c.close();
    await broker.stop();

    lines.length = 0;
    broker = await startBroker(dir, lines);
    c = await connectToCoordinator(broker);
    assert.deepEqual(await committed(c), [5, 7]);
    c.close();
    const skipped = lines.filter((l) => l.includes('skipped the batch at offset'));
    assert.equal(skipped.length, 2, lines.join('\n'));
    assert.match(skipped[0]!, /exceeds the limit of \d+ bytes/);
    assert.match(skipped[1]!, /cannot decompress/);
  } finally {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
