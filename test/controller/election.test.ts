/** The elections are pure: replicas, ISR and liveness in, leader and ISR out. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  controlledShutdownPartitionLeaderElection,
  imbalancedPartitions,
  offlinePartitionLeaderElection,
  preferredReplicaPartitionLeaderElection,
  reassignPartitionLeaderElection,
} from '../../src/controller/election.js';

const live =
  (...ids: number[]) =>
  (b: number) =>
    ids.includes(b);

test('offline election picks the first live ISR member in assignment order', () => {
  assert.deepEqual(offlinePartitionLeaderElection([1, 2, 3], [3, 2], live(2, 3), false), { leader: 2, isr: [3, 2], unclean: false });
  assert.deepEqual(offlinePartitionLeaderElection([1, 2, 3], [1, 2, 3], live(3), false), { leader: 3, isr: [3], unclean: false });
});

test('offline election goes outside the ISR only when unclean is allowed', () => {
  assert.equal(offlinePartitionLeaderElection([1, 2], [1], live(2), false), undefined);
  assert.deepEqual(offlinePartitionLeaderElection([1, 2], [1], live(2), true), { leader: 2, isr: [2], unclean: true });
  assert.equal(offlinePartitionLeaderElection([1, 2], [1], live(), true), undefined);
});

test('reassignment election picks the first live ISR member of the target replicas', () => {
  assert.deepEqual(reassignPartitionLeaderElection([4, 3], [1, 3, 4], live(3, 4)), { leader: 4, isr: [1, 3, 4] });
  assert.equal(reassignPartitionLeaderElection([4], [1], live(1, 4)), undefined);
});

test('preferred election needs the first replica live and in sync', () => {
  assert.deepEqual(preferredReplicaPartitionLeaderElection([1, 2], [2, 1], live(1, 2)), { leader: 1, isr: [2, 1] });
  assert.equal(preferredReplicaPartitionLeaderElection([1, 2], [2], live(1, 2)), undefined);
  assert.equal(preferredReplicaPartitionLeaderElection([1, 2], [2, 1], live(2)), undefined);
});

test('controlled shutdown election avoids and drops the brokers shutting down', () => {
  assert.deepEqual(controlledShutdownPartitionLeaderElection([1, 2, 3], [1, 2, 3], live(1, 2, 3), new Set([1])), { leader: 2, isr: [2, 3] });
  assert.equal(controlledShutdownPartitionLeaderElection([1, 2], [1], live(1, 2), new Set([1])), undefined);
});

test('imbalance: a broker over the threshold gets the partitions it should lead', () => {
  const parts = [
    { tp: 'a', assignment: [1, 2], leader: 2 },
    { tp: 'b', assignment: [1, 2], leader: 1 },
    { tp: 'c', assignment: [2, 1], leader: 2 },
  ];
  assert.deepEqual([...imbalancedPartitions(parts, 10)], [[1, ['a']]]);
  assert.deepEqual([...imbalancedPartitions(parts, 50)], [], '50% is not over 50%');
});
