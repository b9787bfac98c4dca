/**
 * The log's single-pass append step (storage/append/append-step.ts) and the trusted path of a
 * coordinator's own batches (prepareTrustedRecords).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CompressionType, encodeBatch } from '../../src/protocol/records/index.js';
import { baseOffsetAt, isCrcValid, maxTimestampAt, partitionLeaderEpochOf } from '../../src/protocol/records/batch-header.js';
import { planAppend, type AppendStepOptions, type ProducerVerdict } from '../../src/storage/append/append-step.js';
import { prepareProducedRecords, prepareTrustedRecords, type ProduceLimits } from '../../src/storage/append/produce-validation.js';
import { CorruptRecordError, UnexpectedAppendOffsetError } from '../../src/storage/errors.js';
import { makeBatch } from './helpers.js';

const leader: AppendStepOptions = {
  assignOffsets: true,
  logEndOffset: 10,
  leaderEpoch: 4,
  logAppendTime: undefined,
  validated: false,
  crcVerified: false,
  maxMessageBytes: 1 << 20,
  logName: 't-0',
};

function idempotentBatch(producerId: bigint, baseSequence: number, values: string[]): Buffer {
  return encodeBatch({
    baseTimestamp: 1700000000000n,
    producerId,
    producerEpoch: 2,
    baseSequence,
    compression: CompressionType.None,
    records: values.map((v, i) => ({ attributes: 0, timestampDelta: i, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
  });
}

test('a leader append assigns offsets and the leader epoch, stamps LogAppendTime with a fresh CRC, and sums what the log needs', () => {
  const buf = Buffer.concat([makeBatch(['a', 'b'], { timestamp: 5 }), makeBatch(['c'], { timestamp: 9 })]);
  const second = buf.readInt32BE(8) + 12;
  const plan = planAppend(buf, { ...leader, logAppendTime: 1800000000000 });
  assert.deepEqual([plan.firstOffset, plan.lastOffset, plan.recordCount], [10, 12, 3]);
  assert.deepEqual([plan.maxTimestamp, plan.firstBatchMaxTimestamp], [1800000000000, 1800000000000]);
  assert.deepEqual([baseOffsetAt(buf, 0), baseOffsetAt(buf, second)], [10, 12]);
  assert.equal(partitionLeaderEpochOf(buf, second), 4);
  assert.ok(isCrcValid(buf, 0) && isCrcValid(buf, second));
  const createTime = planAppend(makeBatch(['x'], { timestamp: 7 }), leader);
  assert.deepEqual([createTime.maxTimestamp, createTime.firstBatchMaxTimestamp], [7, 7]);
});

test('the producer state is asked once per idempotent batch, in the same walk; a refusal or a retry stops the append', () => {
  const asked: unknown[][] = [];
  let answer: ProducerVerdict = { kind: 'append' };
  const producers = {
    check: (...args: unknown[]): ProducerVerdict => {
      asked.push(args);
      return answer;
    },
  };
  const buf = Buffer.concat([idempotentBatch(7n, 3, ['a', 'b']), makeBatch(['plain'])]);
  assert.equal(planAppend(buf, { ...leader, producers, fromClient: false }).lastOffset, 12);
  assert.deepEqual(asked, [[7n, 2, 3, 4, false, false]], 'only the batch with a producer id, with its sequence range');
  answer = { kind: 'duplicate', firstOffset: 1, lastOffset: 2 };
  assert.deepEqual(planAppend(buf, { ...leader, producers }).refused, answer);
  answer = { kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, message: 'out of order' };
  assert.deepEqual(planAppend(buf, { ...leader, producers }).refused, answer);
});

test('a follower append keeps the leader offsets, which must increase past the log end; a bad CRC is refused first', () => {
  const follower: AppendStepOptions = { ...leader, assignOffsets: false };
  const buf = Buffer.concat([makeBatch(['a'], { baseOffset: 20 }), makeBatch(['b', 'c'], { baseOffset: 25 })]);
  const plan = planAppend(buf, follower);
  assert.deepEqual([plan.firstOffset, plan.lastOffset, plan.recordCount], [20, 26, 3]);
  assert.throws(() => planAppend(buf, { ...follower, logEndOffset: 21 }), UnexpectedAppendOffsetError);
  const backwards = Buffer.concat([makeBatch(['a'], { baseOffset: 30 }), makeBatch(['b'], { baseOffset: 30 })]);
  assert.throws(() => planAppend(backwards, follower), UnexpectedAppendOffsetError);
  const corrupt = Buffer.concat([makeBatch(['a'], { baseOffset: 5 })]);
  corrupt[corrupt.length - 1]! ^= 1;
  assert.throws(() => planAppend(corrupt, follower), CorruptRecordError, 'the CRC is checked before the offsets');
});

test('validated batches are not checked again: a CRC the caller vouched for is neither verified nor recomputed', () => {
  const buf = makeBatch(['a']);
  buf[buf.length - 1]! ^= 1;
  const crc = buf.readUInt32BE(17);
  assert.throws(() => planAppend(Buffer.from(buf), leader), CorruptRecordError);
  assert.equal(planAppend(buf, { ...leader, validated: true }).lastOffset, 10);
  assert.equal(buf.readUInt32BE(17), crc);
});

const limits: ProduceLimits = { maxMessageBytes: 200, maxUncompressedBytes: 6400, compacted: false, topicPartition: 't-0' };

test("a coordinator's batch is trusted: not walked nor re-CRCed, but max.message.bytes holds with the client path's message", async () => {
  const own = makeBatch(['offset commit'], { timestamp: 3 });
  own[own.length - 1]! ^= 1; // would fail a client's CRC check
  const trusted = await prepareTrustedRecords(own, limits);
  assert.ok(trusted.ok && trusted.batches === own);
  assert.equal((await prepareProducedRecords(Buffer.from(own), { fromClient: false, limits })).ok, false);
  const big = makeBatch(['x'.repeat(300)]);
  const [viaTrusted, viaClient] = [await prepareTrustedRecords(big, limits), await prepareProducedRecords(big, { fromClient: true, limits })];
  assert.ok(!viaTrusted.ok && !viaClient.ok);
  assert.equal(viaTrusted.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  assert.equal(viaTrusted.message, viaClient.message);
  const truncated = await prepareTrustedRecords(own.subarray(0, 70), limits);
  assert.ok(!truncated.ok && truncated.errorCode === ErrorCode.CORRUPT_MESSAGE, 'what is not a whole v2 batch takes the full path');
  assert.equal(maxTimestampAt(own, 0), 3);
});
