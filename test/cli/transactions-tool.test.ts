/**
 * kafka-transactions.sh against a real broker: a transaction left open (a producer that died
 * before its coordinator ended it) shows in describe-producers with its start offset, holds a
 * read_committed consumer's last stable offset, and `abort --start-offset` clears it. Bad
 * input is one line and a non-zero exit.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { InitProducerIdRequestCodec, InitProducerIdResponseCodec, ListOffsetsRequestCodec, ListOffsetsResponseCodec } from '../../src/protocol/messages/index.js';
import { encodeBatch } from '../../src/protocol/records/index.js';
import { createTopic, produce } from '../server/handlers/data-plane-helpers.js';
import { runCli } from './helpers.js';

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

async function lso(topic: string): Promise<bigint> {
  const r = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 7, {
    replicaId: -1, isolationLevel: 1, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: -1 }] }],
  });
  return r.topics[0]!.partitions[0]!.offset;
}

test('describe-producers shows a hanging transaction; abort --start-offset clears it and the LSO moves on', async () => {
  await createTopic(b, 'hang');
  const init = await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, { transactionalId: null, transactionTimeoutMs: -1, producerId: -1n, producerEpoch: -1 });
  const pid = init.producerId;
  await produce(c, 9, 'hang', 0, encodeBatch({ records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('plain'), headers: [] }], baseTimestamp: BigInt(Date.now()) }));
  const txn = encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('left open'), headers: [] }],
    baseTimestamp: BigInt(Date.now()), producerId: pid, producerEpoch: 0, baseSequence: 0, isTransactional: true,
  });
  assert.equal((await produce(c, 9, 'hang', 0, txn)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  assert.equal(await lso('hang'), 1n);

  const d = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'describe-producers', '--topic', 'hang', '--partition', '0']);
  assert.equal(d.code, 0, d.stderr);
  const lines = d.stdout.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[0]!.split('\t').map((s) => s.trim()).filter((s) => s !== ''), ['ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset']);
  const row = lines[1]!.split('\t').map((s) => s.trim());
  assert.deepEqual([row[0], row[1], row[2], row[3], row[5]], [String(pid), '0', '-1', '0', '1']);
  assert.equal(lines[0]!.indexOf('ProducerEpoch'), 'ProducerId'.padEnd(Math.max(10, String(pid).length)).length + 1, 'columns padded, then a tab, as Kafka prints');

  const missing = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'abort', '--topic', 'hang', '--partition', '0', '--start-offset', '0']);
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr.trim(), 'kafka-transactions.sh: Could not find any open transactions starting at offset 0 on partition hang-0');

  const abort = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'abort', '--topic', 'hang', '--partition', '0', '--start-offset', '1']);
  assert.equal(abort.code, 0, abort.stderr);
  assert.equal(await lso('hang'), 3n, 'the abort marker at 2 ended it');
  const after = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'describe-producers', '--topic', 'hang', '--partition', '0']);
  assert.match(after.stdout.split('\n')[1]!, /\tNone\s*\t$/);
});

test('bad input: one line, exit 1', async () => {
  for (const args of [
    ['--bootstrap-server', b.bootstrap],
    ['--bootstrap-server', b.bootstrap, 'bogus'],
    ['--bootstrap-server', b.bootstrap, 'describe-producers', '--topic', 'nope', '--partition', '0'],
    ['--bootstrap-server', b.bootstrap, 'abort', '--topic', 'hang', '--partition', 'x', '--start-offset', '1'],
    ['--bootstrap-server', b.bootstrap, 'abort', '--topic', 'hang', '--partition', '0'],
    ['--bootstrap-server', b.bootstrap, 'list'],
  ]) {
    const r = await runCli('kafka-transactions', args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/);
  }
});
