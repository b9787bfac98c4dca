/**
 * librdkafka's read_committed consumer against Fjord's partition side of transactions (issue
 * 14): two transactions interleaved on one partition, one aborted and one committed by
 * WriteTxnMarkers (the test plays the transaction coordinator), then plain records, then a
 * transaction left open. A read_committed consumer must see the committed and plain records
 * only, and nothing of the open one; read_uncommitted sees every data record.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  WriteTxnMarkersRequestCodec,
  WriteTxnMarkersResponseCodec,
} from '../../src/protocol/messages/index.js';
import { encodeBatch } from '../../src/protocol/records/index.js';
import { createTopic, produce } from '../server/handlers/data-plane-helpers.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  c = await RawClient.connect(b.port);
});
after(async () => {
  c.close();
  await b.stop();
});

const CONSUME = `
import sys, json
from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
bootstrap, topic, isolation = sys.argv[1], sys.argv[2], sys.argv[3]
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'rc-' + isolation, 'enable.auto.commit': False,
              'enable.partition.eof': True, 'isolation.level': isolation})
c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
out, errors = [], []
while True:
    m = c.poll(10)
    if m is None: errors.append('timed out'); break
    if m.error():
        if m.error().code() == -191: break
        errors.append(str(m.error())); break
    out.append(m.value().decode())
lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), cached=True)
c.close()
print(json.dumps({'values': out, 'errors': errors, 'hi': hi}))
`;

function batch(value: string, producerId: bigint, seq: number, transactional: boolean): Buffer {
  return encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(value), headers: [] }],
    baseTimestamp: BigInt(Date.now()),
    producerId,
    producerEpoch: 0,
    baseSequence: seq,
    isTransactional: transactional,
  });
}

async function pid(): Promise<bigint> {
  return (
    await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
      transactionalId: null,
      transactionTimeoutMs: -1,
      producerId: -1n,
      producerEpoch: -1,
    })
  ).producerId;
}

async function marker(topic: string, producerId: bigint, commit: boolean): Promise<void> {
  const r = await c.request(27, WriteTxnMarkersRequestCodec, WriteTxnMarkersResponseCodec, 1, {
    markers: [{ producerId, producerEpoch: 0, transactionResult: commit, coordinatorEpoch: 0, topics: [{ name: topic, partitionIndexes: [0] }] }],
  });
  assert.equal(r.markers[0]!.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
}

test('confluent-kafka read_committed skips an aborted transaction and stops before an open one; read_uncommitted sees all', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const topic = 'read-committed';
  await createTopic(b, topic);
  const [A, B, C] = [await pid(), await pid(), await pid()];
  const send = async (records: Buffer): Promise<void> => {
    const r = (await produce(c, 9, topic, 0, records)).responses[0]!.partitionResponses[0]!;
    assert.equal(r.errorCode, ErrorCode.NONE);
  };
  for (let i = 0; i < 5; i++) {
    await send(batch(`aborted-${i}`, A, i, true));
    await send(batch(`committed-${i}`, B, i, true));
  }
  await marker(topic, A, false);
  await marker(topic, B, true);
  for (let i = 0; i < 3; i++) await send(batch(`plain-${i}`, -1n, -1, false));
  await send(batch('open-0', C, 0, true));

  const consume = async (isolation: string): Promise<{ values: string[]; errors: string[]; hi: number }> => {
    const res = await run(PYTHON, ['-c', CONSUME, b.bootstrap, topic, isolation], { timeoutMs: 60_000 });
    assert.equal(res.code, 0, res.stderr);
    return JSON.parse(res.stdout) as { values: string[]; errors: string[]; hi: number };
  };
  const committed = await consume('read_committed');
  assert.deepEqual(committed.errors, []);
  assert.deepEqual(committed.values, [...[0, 1, 2, 3, 4].map((i) => `committed-${i}`), 'plain-0', 'plain-1', 'plain-2']);
  // Reaching partition EOF without 'open-0' means librdkafka took the LSO (15) as the end.
  const all = await consume('read_uncommitted');
  assert.deepEqual(all.errors, []);
  assert.deepEqual(all.values, [...[0, 1, 2, 3, 4].flatMap((i) => [`aborted-${i}`, `committed-${i}`]), 'plain-0', 'plain-1', 'plain-2', 'open-0']);
  assert.equal(all.hi, 16);
});
