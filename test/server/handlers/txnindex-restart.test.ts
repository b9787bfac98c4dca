/**
 * A .txnindex deleted while the broker was down (issue 14), end to end: aborted and committed
 * transactions over several segments, the broker stopped (its producer snapshot then covers the
 * whole log, so the replay after the restart reads nothing), the .txnindex of the older segment
 * holding the abort deleted, the broker restarted cleanly and uncleanly. A read_committed Fetch
 * must still report the aborted transaction, so a consumer drops its records.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  WriteTxnMarkersRequestCodec,
  WriteTxnMarkersResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { decodeBatch, encodeBatch, iterateBatches } from '../../../src/protocol/records/index.js';
import { CLEAN_SHUTDOWN_MARKER } from '../../../src/storage/checkpoint/checkpoint-files.js';
import { createTopic, fetchOne, produce } from './data-plane-helpers.js';

const TOPIC = 'txn-restart';

async function write(b: TestBroker): Promise<void> {
  const c = await RawClient.connect(b.port);
  try {
    const pid = async (): Promise<bigint> =>
      (
        await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
          transactionalId: null,
          transactionTimeoutMs: -1,
          producerId: -1n,
          producerEpoch: -1,
        })
      ).producerId;
    const [A, B] = [await pid(), await pid()];
    const seqs = new Map<bigint, number>();
    const send = async (value: string, producerId = -1n): Promise<void> => {
      const seq = seqs.get(producerId) ?? 0;
      seqs.set(producerId, seq + 1);
      const batch = encodeBatch({
        records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(value), headers: [] }],
        baseTimestamp: BigInt(Date.now()),
        producerId,
        producerEpoch: producerId < 0n ? -1 : 0,
        baseSequence: producerId < 0n ? -1 : seq,
        isTransactional: producerId >= 0n,
      });
      assert.equal((await produce(c, 9, TOPIC, 0, batch)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    };
    const marker = async (producerId: bigint, commit: boolean): Promise<void> => {
      const r = await c.request(27, WriteTxnMarkersRequestCodec, WriteTxnMarkersResponseCodec, 1, {
        markers: [{ producerId, producerEpoch: 0, transactionResult: commit, coordinatorEpoch: 0, topics: [{ name: TOPIC, partitionIndexes: [0] }] }],
      });
      assert.equal(r.markers[0]!.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    };
    for (let i = 0; i < 3; i++) await send(`aborted-${i}`, A);
    await send('committed-0', B);
    await marker(A, false);
    await marker(B, true);
    for (let i = 0; i < 6; i++) await send(`plain-${i}`);
  } finally {
    c.close();
  }
}

/** What a read_committed consumer keeps: every data record below the LSO but those the aborted transactions cover. */
async function readCommitted(b: TestBroker): Promise<{ values: string[]; aborted: [bigint, number][] }> {
  const c = await RawClient.connect(b.port);
  try {
    const values: string[] = [];
    const aborted: [bigint, number][] = [];
    let offset = 0;
    for (;;) {
      const p = (await fetchOne(c, 11, TOPIC, 0, offset, { isolationLevel: 1 })).responses[0]!.partitions[0]!;
      assert.equal(p.errorCode, ErrorCode.NONE);
      for (const t of p.abortedTransactions ?? [])
        if (!aborted.some(([id, f]) => id === t.producerId && f === Number(t.firstOffset))) aborted.push([t.producerId, Number(t.firstOffset)]);
      if (!p.records || p.records.length === 0) break;
      for (const e of iterateBatches(p.records)) {
        const batch = decodeBatch(p.records, e.start, { maxBytes: 1 << 20 });
        offset = Number(batch.baseOffset) + batch.lastOffsetDelta + 1;
        if (batch.isControl) continue;
        if (aborted.some(([id, first]) => id === batch.producerId && Number(batch.baseOffset) >= first)) continue;
        for (const r of batch.records) values.push(r.value!.toString());
      }
      if (offset >= Number(p.lastStableOffset)) break;
    }
    return { values, aborted };
  } finally {
    c.close();
  }
}

for (const how of ['clean', 'unclean'] as const) {
  test(`the .txnindex of an older segment deleted while the broker was down is rebuilt on a ${how} restart`, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-txnindex-'));
    try {
      let b = await startTestBroker({ 'auto.create.topics.enable': 'false' }, dir);
      await createTopic(b, TOPIC, 1, { 'segment.bytes': '250' });
      await write(b);
      const before = await readCommitted(b);
      assert.deepEqual(before.values, ['committed-0', ...[0, 1, 2, 3, 4, 5].map((i) => `plain-${i}`)]);
      assert.equal(before.aborted.length, 1);
      await b.stop();

      const partDir = path.join(dir, `${TOPIC}-0`);
      const names = (await readdir(partDir)).sort();
      const indexes = names.filter((n) => n.endsWith('.txnindex'));
      assert.equal(indexes.length, 1, names.join(' '));
      const logs = names.filter((n) => n.endsWith('.log'));
      assert.notEqual(indexes[0]!.replace('.txnindex', '.log'), logs.at(-1), 'the abort is in an older segment, not the active one');
      await rm(path.join(partDir, indexes[0]!));
      if (how === 'unclean') await rm(path.join(dir, CLEAN_SHUTDOWN_MARKER));

      b = await startTestBroker({ 'auto.create.topics.enable': 'false' }, dir);
      try {
        const after = await readCommitted(b);
        assert.deepEqual(after, before, 'read_committed still filters the aborted records');
      } finally {
        await b.stop();
      }
      assert.ok((await readdir(partDir)).includes(indexes[0]!), 'the index file is back');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
