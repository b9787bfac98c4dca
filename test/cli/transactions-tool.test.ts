/**
 * kafka-transactions.sh against a real broker: a transaction left open (a producer that died
 * before its coordinator ended it) shows in describe-producers with its start offset, holds a
 * read_committed consumer's last stable offset, and `abort --start-offset` clears it. A
 * transaction opened at the real coordinator shows in list and describe; find-hanging reports
 * the open transaction no coordinator knows and leaves the coordinated one alone. Bad input is
 * one line and a non-zero exit.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  AddPartitionsToTxnRequestCodec,
  AddPartitionsToTxnResponseCodec,
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  ListOffsetsRequestCodec,
  ListOffsetsResponseCodec,
} from '../../src/protocol/messages/index.js';
import { encodeBatch } from '../../src/protocol/records/index.js';
import { createTopic, produce } from '../server/handlers/data-plane-helpers.js';
import { runCli } from './helpers.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false', 'transaction.state.log.num.partitions': '3' });
  c = await RawClient.connect(b.port);
});
after(async () => {
  c.close();
  await b.stop();
});

async function lso(topic: string): Promise<bigint> {
  const r = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 7, {
    replicaId: -1,
    isolationLevel: 1,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: -1 }] }],
  });
  return r.topics[0]!.partitions[0]!.offset;
}

test('describe-producers shows a hanging transaction; abort --start-offset clears it and the LSO moves on', async () => {
  await createTopic(b, 'hang');
  const init = await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
    transactionalId: null,
    transactionTimeoutMs: -1,
    producerId: -1n,
    producerEpoch: -1,
  });
  const pid = init.producerId;
  await produce(
    c,
    9,
    'hang',
    0,
    encodeBatch({
      records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('plain'), headers: [] }],
      baseTimestamp: BigInt(Date.now()),
    }),
  );
  const txn = encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('left open'), headers: [] }],
    baseTimestamp: BigInt(Date.now()),
    producerId: pid,
    producerEpoch: 0,
    baseSequence: 0,
    isTransactional: true,
  });
  assert.equal((await produce(c, 9, 'hang', 0, txn)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  assert.equal(await lso('hang'), 1n);

  const d = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'describe-producers', '--topic', 'hang', '--partition', '0']);
  assert.equal(d.code, 0, d.stderr);
  const lines = d.stdout.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 2);
  assert.deepEqual(
    lines[0]!
      .split('\t')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    ['ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset'],
  );
  const row = lines[1]!.split('\t').map((s) => s.trim());
  assert.deepEqual([row[0], row[1], row[2], row[3], row[5]], [String(pid), '0', '-1', '0', '1']);
  assert.equal(
    lines[0]!.indexOf('ProducerEpoch'),
    'ProducerId'.padEnd(Math.max(10, String(pid).length)).length + 1,
    'columns padded, then a tab, as Kafka prints',
  );

  const missing = await runCli('kafka-transactions', [
    '--bootstrap-server',
    b.bootstrap,
    'abort',
    '--topic',
    'hang',
    '--partition',
    '0',
    '--start-offset',
    '0',
  ]);
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
    ['--bootstrap-server', b.bootstrap, 'list', '--duration-filter', 'soon'],
    ['--bootstrap-server', b.bootstrap, 'describe'],
    ['--bootstrap-server', b.bootstrap, 'describe', '--transactional-id', 'never-seen'],
    ['--bootstrap-server', b.bootstrap, 'find-hanging'],
    ['--bootstrap-server', b.bootstrap, 'find-hanging', '--broker-id', '0', '--partition', '0'],
    ['--bootstrap-server', b.bootstrap, 'find-hanging', '--topic', 'nope'],
    ['--bootstrap-server', b.bootstrap, 'find-hanging', '--broker-id', '0', '--max-transaction-timeout', 'x'],
  ]) {
    const r = await runCli('kafka-transactions', args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/);
  }
  const unknown = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'describe', '--transactional-id', 'never-seen']);
  assert.match(unknown.stderr, /^kafka-transactions\.sh: Failed to describe transaction state of transactional-id `never-seen`: TRANSACTIONAL_ID_NOT_FOUND/);
  const partitionOnly = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'find-hanging', '--broker-id', '0', '--partition', '0']);
  assert.equal(partitionOnly.stderr.trim(), 'kafka-transactions.sh: The --partition argument requires --topic to be provided');
});

const cells = (line: string): string[] =>
  line
    .split('\t')
    .map((x) => x.trim())
    .slice(0, -1);
const table = (out: string): string[][] =>
  out
    .split('\n')
    .filter((l) => l !== '')
    .map(cells);

test('list and describe show a transaction open at the coordinator; find-hanging reports only the one no coordinator knows', async () => {
  await createTopic(b, 'open', 2);
  const id = 'tool-tx';
  const brokerId = String(b.broker.config.brokerId);
  const deadline = Date.now() + 20000;
  for (;;) {
    const f = await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key: id, keyType: 1 });
    if (f.errorCode === ErrorCode.NONE) break;
    assert.ok(Date.now() < deadline, `no transaction coordinator: ${f.errorCode}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const init = await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
    transactionalId: id,
    transactionTimeoutMs: 60000,
    producerId: -1n,
    producerEpoch: -1,
  });
  assert.equal(init.errorCode, ErrorCode.NONE);
  const add = await c.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 3, {
    v3AndBelowTransactionalId: id,
    v3AndBelowProducerId: init.producerId,
    v3AndBelowProducerEpoch: 0,
    v3AndBelowTopics: [{ name: 'open', partitions: [0] }],
  });
  assert.equal(add.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode, ErrorCode.NONE);
  const batch = (pid: bigint, value: string) =>
    encodeBatch({
      records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(value), headers: [] }],
      baseTimestamp: BigInt(Date.now()),
      producerId: pid,
      producerEpoch: 0,
      baseSequence: 0,
      isTransactional: true,
    });
  assert.equal((await produce(c, 9, 'open', 0, batch(init.producerId, 'coordinated'))).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  // A transactional batch from a producer id no coordinator holds: nothing will ever end it.
  const orphan = (
    await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
      transactionalId: null,
      transactionTimeoutMs: -1,
      producerId: -1n,
      producerEpoch: -1,
    })
  ).producerId;
  assert.equal((await produce(c, 9, 'open', 1, batch(orphan, 'orphan'))).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);

  const list = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'list']);
  assert.equal(list.code, 0, list.stderr);
  const rows = table(list.stdout);
  assert.deepEqual(rows[0], ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState']);
  assert.deepEqual(
    rows.slice(1).filter((r) => r[0] === id),
    [[id, brokerId, String(init.producerId), 'Ongoing']],
  );
  const longer = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'list', '--duration-filter', '3600000']);
  assert.equal(longer.code, 0, longer.stderr);
  assert.deepEqual(table(longer.stdout).slice(1), [], 'nothing has run for an hour');

  const before = Date.now();
  const d = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'describe', '--transactional-id', id]);
  assert.equal(d.code, 0, d.stderr);
  const [head, row] = table(d.stdout);
  assert.deepEqual(head, [
    'CoordinatorId',
    'TransactionalId',
    'ProducerId',
    'ProducerEpoch',
    'TransactionState',
    'TransactionTimeoutMs',
    'CurrentTransactionStartTimeMs',
    'TransactionDurationMs',
    'TopicPartitions',
  ]);
  assert.deepEqual([row![0], row![1], row![2], row![3], row![4], row![5], row![8]], [brokerId, id, String(init.producerId), '0', 'Ongoing', '60000', 'open-0']);
  const start = Number(row![6]);
  assert.ok(start > 0 && start <= before, `start ${row![6]}`);
  assert.ok(Number(row![7]) >= before - start, `duration ${row![7]} since ${start}`);

  // Both transactions are open and (with a 0-minute bound) old enough to be candidates; only
  // the orphan is hanging, since the coordinator's transaction covers open-0.
  const hanging = await runCli('kafka-transactions', [
    '--bootstrap-server',
    b.bootstrap,
    'find-hanging',
    '--broker-id',
    brokerId,
    '--max-transaction-timeout',
    '0',
  ]);
  assert.equal(hanging.code, 0, hanging.stderr);
  const h = table(hanging.stdout);
  assert.deepEqual(h[0], ['Topic', 'Partition', 'ProducerId', 'ProducerEpoch', 'CoordinatorEpoch', 'StartOffset', 'LastTimestamp', 'Duration(min)']);
  assert.deepEqual(
    h.slice(1).map((r) => [r[0], r[1], r[2], r[3], r[4], r[5], r[7]]),
    [['open', '1', String(orphan), '0', '-1', '0', '0']],
  );
  const byTopic = await runCli('kafka-transactions', [
    '--bootstrap-server',
    b.bootstrap,
    'find-hanging',
    '--topic',
    'open',
    '--partition',
    '1',
    '--max-transaction-timeout',
    '0',
  ]);
  assert.deepEqual(
    table(byTopic.stdout)
      .slice(1)
      .map((r) => r[2]),
    [String(orphan)],
  );
  const young = await runCli('kafka-transactions', ['--bootstrap-server', b.bootstrap, 'find-hanging', '--topic', 'open']);
  assert.equal(young.code, 0, young.stderr);
  assert.deepEqual(table(young.stdout).slice(1), [], 'younger than the default 15 minutes: not a candidate');
});
