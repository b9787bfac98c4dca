import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeError } from '../../src/cli/common/tool.js';
import { ErrorCode, KafkaError } from '../../src/client/index.js';

test("broker errors read as Kafka's sentences, not raw names", () => {
  assert.equal(
    describeError(new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'UNKNOWN_TOPIC_OR_PARTITION (topic nosuch)')),
    "Topic 'nosuch' does not exist",
  );
  assert.equal(describeError(new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)), 'This server does not host this topic-partition.');
  assert.equal(describeError(new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND)), 'The group id does not exist.');
  assert.equal(describeError(new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, 'TOPIC_ALREADY_EXISTS (topic t)')), "Topic 't' already exists.");
  // The broker's own message is kept; a message saying only what failed gets the reason.
  assert.equal(describeError(new KafkaError(ErrorCode.POLICY_VIOLATION, 'POLICY_VIOLATION: too many partitions')), 'too many partitions');
  assert.equal(
    describeError(new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'fetching offsets of group g failed')),
    'fetching offsets of group g failed: The coordinator is not available.',
  );
  assert.equal(describeError(new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Topic 'x' does not exist")), "Topic 'x' does not exist");
  // A code without a sentence still says something more than its name.
  assert.match(describeError(new KafkaError(ErrorCode.FENCED_LEADER_EPOCH)), /^FENCED_LEADER_EPOCH: the broker refused the request$/);
});
