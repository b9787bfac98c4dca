/** The legal-move tables (Kafka's validPreviousStates) and the refusal of illegal moves. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ControllerContext } from '../../src/controller/context.js';
import { isLegalPartitionMove, legalForPartitionMove, setPartitionState } from '../../src/controller/partition-state-machine.js';
import { isLegalReplicaMove, legalForReplicaMove } from '../../src/controller/replica-state-machine.js';

test("partition moves follow Kafka's table", () => {
  assert.ok(isLegalPartitionMove('NonExistentPartition', 'NewPartition'));
  assert.ok(isLegalPartitionMove('NewPartition', 'OnlinePartition'));
  assert.ok(isLegalPartitionMove('OnlinePartition', 'OnlinePartition'), 'a re-election');
  assert.ok(isLegalPartitionMove('OfflinePartition', 'NonExistentPartition'));
  assert.ok(!isLegalPartitionMove('OnlinePartition', 'NonExistentPartition'), 'must go offline first');
  assert.ok(!isLegalPartitionMove('OnlinePartition', 'NewPartition'));
  assert.ok(!isLegalPartitionMove('NonExistentPartition', 'OnlinePartition'));
});

test("replica moves follow Kafka's table", () => {
  assert.ok(isLegalReplicaMove('NonExistentReplica', 'NewReplica'));
  assert.ok(isLegalReplicaMove('OfflineReplica', 'ReplicaDeletionStarted'));
  assert.ok(isLegalReplicaMove('ReplicaDeletionStarted', 'ReplicaDeletionIneligible'));
  assert.ok(isLegalReplicaMove('ReplicaDeletionIneligible', 'OnlineReplica'));
  assert.ok(!isLegalReplicaMove('OnlineReplica', 'ReplicaDeletionStarted'), 'must be offline first');
  assert.ok(!isLegalReplicaMove('ReplicaDeletionSuccessful', 'OnlineReplica'));
  assert.ok(!isLegalReplicaMove('OfflineReplica', 'NonExistentReplica'));
});

test('illegal moves are refused and logged, legal ones kept', () => {
  const ctx = new ControllerContext();
  const lines: string[] = [];
  const log = pino({ level: 'error' }, { write: (s: string) => void lines.push(s) });
  setPartitionState(ctx, { topic: 't', partition: 0 }, 'OnlinePartition');
  const ok = legalForPartitionMove(
    ctx,
    [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ],
    'NewPartition',
    log,
  );
  assert.deepEqual(ok, [{ topic: 't', partition: 1 }]);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /illegal partition state change refused/);
  const r = legalForReplicaMove(ctx, [{ topic: 't', partition: 0, replica: 1 }], 'ReplicaDeletionSuccessful', log);
  assert.deepEqual(r, []);
  assert.equal(lines.length, 2);
});
