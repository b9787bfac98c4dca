/**
 * DeleteTopics while produces and fetches of that topic are in flight (issue 9: a fuzz soak's
 * mutated DeleteTopics took the broker's only log directory offline this way, and from then on
 * every produce of every client was refused with KAFKA_STORAGE_ERROR). Those requests may fail,
 * retriably; the directory stays online and other topics keep being written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { DeleteTopicsRequestCodec, DeleteTopicsResponseCodec, ProduceRequestCodec, ProduceResponseCodec } from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { batchOf, createTopic, fetchOne } from './handlers/data-plane-helpers.js';

const VALUE = 'v'.repeat(4000);

function produce(c: RawClient, topic: string) {
  return c
    .request(0, ProduceRequestCodec, ProduceResponseCodec, 7, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 30_000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records: batchOf(Array.from({ length: 16 }, () => VALUE)) }] }],
    })
    .then((r) => r.responses[0]!.partitionResponses[0]!.errorCode);
}

test('produces and fetches racing the deletion of their topic never take the log directory offline', async () => {
  // Small segments: the in-flight produces roll segments while the deletion closes and renames them.
  const b = await startTestBroker({ 'log.segment.bytes': '65536' });
  const clients = await Promise.all(Array.from({ length: 4 }, () => RawClient.connect(b.port)));
  const admin = await RawClient.connect(b.port);
  try {
    await createTopic(b, 'steady');
    const codes = new Map<number, number>();
    for (let round = 0; round < 15; round++) {
      const topic = `doomed-${round}`;
      await createTopic(b, topic);
      for (let i = 0; i < 3; i++) assert.equal(await produce(clients[0]!, topic), ErrorCode.NONE);
      const inFlight: Promise<number>[] = [];
      for (const c of clients) {
        for (let i = 0; i < 8; i++) {
          inFlight.push(produce(c, topic));
          inFlight.push(fetchOne(c, 12, topic, 0, i % 3).then((r) => r.responses[0]!.partitions[0]!.errorCode));
        }
      }
      const del = await admin.request(20, DeleteTopicsRequestCodec, DeleteTopicsResponseCodec, 4, { topicNames: [topic], timeoutMs: 30_000 });
      for (const code of await Promise.all(inFlight)) codes.set(code, (codes.get(code) ?? 0) + 1);
      const offline = b.broker.services.logManager.logDirsState().filter((d) => !d.online);
      assert.deepEqual(
        offline.map((d) => d.error),
        [],
        `round ${round}: a log dir went offline`,
      );
      assert.equal(del.responses[0]!.errorCode, ErrorCode.NONE, `round ${round}: DeleteTopics failed: ${del.responses[0]!.errorMessage}`);
      assert.equal(await produce(admin, 'steady'), ErrorCode.NONE, `round ${round}: the log dir went offline (codes seen: ${JSON.stringify([...codes])})`);
    }
    assert.ok(!codes.has(ErrorCode.KAFKA_STORAGE_ERROR), `KAFKA_STORAGE_ERROR answered: ${JSON.stringify([...codes])}`);
  } finally {
    for (const c of [...clients, admin]) c.close();
    await b.stop();
  }
});
