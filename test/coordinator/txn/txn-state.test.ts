/** The transaction state table and the `__transaction_state` record format. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TxnState, canTransition, transition, txnStateName, type TxnMetadata } from '../../../src/coordinator/txn/txn-state.js';
import { decodeTxnRecord, encodeTxnRecord } from '../../../src/coordinator/txn/records.js';

const meta = (state: TxnMetadata['state']): TxnMetadata => ({
  transactionalId: 'tx',
  producerId: 7n,
  lastProducerId: -1n,
  producerEpoch: 3,
  lastProducerEpoch: 2,
  txnTimeoutMs: 60000,
  state,
  topicPartitions: new Map([['t', new Set([2, 0])]]),
  txnStartTimestamp: 1000,
  txnLastUpdateTimestamp: 2000,
});

test("the transition table is Kafka's", () => {
  const S = TxnState;
  const legal: [number, number][] = [
    [S.Empty, S.Ongoing],
    [S.Ongoing, S.PrepareCommit],
    [S.Ongoing, S.PrepareAbort],
    [S.PrepareCommit, S.CompleteCommit],
    [S.PrepareAbort, S.CompleteAbort],
    [S.CompleteCommit, S.Ongoing],
    [S.CompleteAbort, S.Empty],
    [S.Ongoing, S.PrepareEpochFence],
    [S.PrepareEpochFence, S.PrepareAbort],
    [S.Empty, S.Dead],
    [S.CompleteCommit, S.Dead],
  ];
  const illegal: [number, number][] = [
    [S.Empty, S.PrepareCommit],
    [S.Ongoing, S.CompleteCommit],
    [S.PrepareCommit, S.CompleteAbort],
    [S.PrepareCommit, S.Ongoing],
    [S.PrepareAbort, S.Empty],
    [S.Ongoing, S.Dead],
    [S.Dead, S.Empty],
    [S.PrepareEpochFence, S.PrepareCommit],
    [S.Ongoing, S.Empty],
  ];
  for (const [a, b] of legal) assert.ok(canTransition(a as never, b as never), `${txnStateName(a as never)} -> ${txnStateName(b as never)}`);
  for (const [a, b] of illegal) assert.ok(!canTransition(a as never, b as never), `${txnStateName(a as never)} -/-> ${txnStateName(b as never)}`);
  assert.throws(() => transition(meta(TxnState.Empty), TxnState.CompleteCommit, {}), /illegal transition Empty -> CompleteCommit/);
});

test("records are Kafka's version-0 TransactionLogKey/Value and read back", () => {
  const m = meta(TxnState.Ongoing);
  const enc = encodeTxnRecord({ transactionalId: 'tx', metadata: m });
  // key: int16 version 0, then the id as a (non-compact) string
  assert.deepEqual([...enc.key], [0, 0, 0, 2, 0x74, 0x78]);
  assert.ok(enc.value);
  assert.equal(enc.value.readInt16BE(0), 0, 'value version 0');
  assert.equal(enc.value.readBigInt64BE(2), 7n, 'producer id');
  assert.equal(enc.value.readInt16BE(10), 3, 'epoch');
  assert.equal(enc.value.readInt32BE(12), 60000, 'timeout');
  assert.equal(enc.value.readInt8(16), 1, 'status Ongoing = 1');
  const back = decodeTxnRecord(enc.key, enc.value);
  assert.ok(back?.metadata);
  assert.equal(back.metadata.state, TxnState.Ongoing);
  assert.deepEqual([...back.metadata.topicPartitions.get('t')!].sort(), [0, 2]);
  assert.equal(back.metadata.txnStartTimestamp, 1000);
  assert.equal(back.metadata.txnLastUpdateTimestamp, 2000);
  assert.equal(back.metadata.lastProducerEpoch, -1, 'the last epoch is not in the record (as Kafka)');
  const tomb = encodeTxnRecord({ transactionalId: 'tx', metadata: null });
  assert.equal(tomb.value, null);
  assert.equal(decodeTxnRecord(tomb.key, null)?.metadata, null);
  // Empty/Complete carry no partitions: Kafka writes a null array (-1 length).
  const empty = encodeTxnRecord({ transactionalId: 'tx', metadata: { ...m, state: TxnState.Empty, topicPartitions: new Map() } });
  assert.equal(empty.value!.readInt32BE(17), -1);
});
