/**
 * acks=all is answered by the followers' next fetches, not by their long-poll deadline: three
 * broker processes (real ZooKeeper) with replica.fetch.wait.max.ms at 20 s. A caught-up follower's
 * fetch is parked at the leader; an append must wake it at once (its answer carries the records),
 * and the follower's next fetch (sent right after its append) advances the high watermark, which
 * answers the produce. Were either step left to the deadline, every produce would take ~20 s.
 * The high watermark must still wait for the whole ISR: the ISR stays [0, 1, 2] throughout and a
 * consumer reads every acknowledged record from the leader afterwards.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { zkTopic, waitForTopic } from './cluster-clients.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { decodeBatch, encodeBatch, iterateBatches } from '../../src/protocol/records/index.js';

const TOPIC = 'acks-all-latency';
const WAIT_MAX_MS = 20_000;
let c: Cluster | undefined;
before(async () => {
  if (Cluster.available()) {
    c = await Cluster.start({ props: { 'replica.fetch.wait.max.ms': String(WAIT_MAX_MS), 'replica.socket.timeout.ms': '30000' } });
  }
});
after(() => c?.stop());

const connect = (port: number) => Connection.connect('127.0.0.1', port, { clientId: 'acks-all-latency', connectTimeoutMs: 10_000, requestTimeoutMs: 60_000 });

async function produce(conn: Connection, values: string[]): Promise<number> {
  const records = encodeBatch({
    records: values.map((v, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
    baseTimestamp: BigInt(Date.now()),
  });
  const res = await conn.send(Api.Produce, { acks: -1, timeoutMs: 45_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] });
  return res.responses[0]!.partitionResponses[0]!.errorCode;
}

async function countRecords(conn: Connection): Promise<{ count: number; highWatermark: bigint }> {
  let count = 0;
  let offset = 0n;
  for (;;) {
    const res = await conn.send(
      Api.Fetch,
      {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        topics: [{ topic: TOPIC, partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] }],
      },
      { version: 11 },
    );
    const p = res.responses[0]!.partitions[0]!;
    assert.equal(p.errorCode, ErrorCode.NONE);
    const records = p.records ?? Buffer.alloc(0);
    let next = offset;
    for (const e of iterateBatches(records)) {
      const b = decodeBatch(records, e.start, { maxBytes: 1 << 30 });
      count += b.records.length;
      next = b.baseOffset + BigInt(b.records.length);
    }
    if (next === offset || next >= p.highWatermark) return { count, highWatermark: p.highWatermark };
    offset = next;
  }
}

test(`acks=all with caught-up followers completes in far less than replica.fetch.wait.max.ms (${WAIT_MAX_MS} ms), and only once the whole ISR has it`, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cluster = c;
  await cluster.waitForRegistered([0, 1, 2]);
  const ctl = (await cluster.waitForController()).brokerId;
  const toController = await connect(cluster.broker(ctl).port);
  let conn: Connection | undefined;
  try {
    const created = await toController.send(Api.CreateTopics, {
      timeoutMs: 30_000,
      topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '3' }] }],
    });
    assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE, created.topics[0]!.errorMessage ?? '');
    const leader = (await waitForTopic(cluster, TOPIC)).partitions[0]!.leader;
    conn = await connect(cluster.broker(leader).port);
    const leaderConn = conn;
    // The first one may wait for the followers' fetchers to start (and back off once if they asked
    // before the leader was ready).
    await cluster.waitFor('a first acks=all produce', 60_000, async () => ((await produce(leaderConn, ['warm-up'])) === ErrorCode.NONE ? true : undefined));
    let acked = 1;
    const took: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = Date.now();
      assert.equal(await produce(conn, [`v${i}-a`, `v${i}-b`]), ErrorCode.NONE);
      took.push(Date.now() - started);
      acked += 2;
      // Generous for a loaded 2-core machine, still far below the 20 s a deadline would take.
      assert.ok(took[i]! < WAIT_MAX_MS / 4, `acks=all produce ${i} took ${took[i]} ms`);
    }
    took.sort((a, b) => a - b);
    t.diagnostic(`20 acks=all produces: median ${took[10]} ms, max ${took[19]} ms`);
    assert.ok(took[10]! < 1000, `median acks=all produce took ${took[10]} ms`);
    // min.insync.replicas=3: every answer above needed all three replicas in the ISR.
    const tp = await zkTopic(cluster, TOPIC);
    assert.deepEqual([...tp!.partitions[0]!.isr].sort(), [0, 1, 2]);
    const read = await countRecords(conn);
    assert.equal(read.count, acked, 'every acknowledged record is below the high watermark');
    assert.equal(read.highWatermark, BigInt(acked));
  } finally {
    conn?.close();
    toController.close();
  }
});
