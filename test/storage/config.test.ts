import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidConfigError, defaultLogConfig, logConfigFromProps } from '../../src/storage/config.js';

test('defaults match Kafka', () => {
  const d = defaultLogConfig();
  assert.equal(d.segmentBytes, 1073741824);
  assert.equal(d.segmentMs, 604800000);
  assert.equal(d.segmentIndexBytes, 10485760);
  assert.equal(d.indexIntervalBytes, 4096);
  assert.equal(d.maxMessageBytes, 1048588);
  assert.equal(d.retentionMs, 604800000);
  assert.equal(d.retentionBytes, -1);
  assert.deepEqual(d.cleanupPolicy, ['delete']);
  assert.equal(d.deleteRetentionMs, 86400000);
  assert.equal(d.minCleanableDirtyRatio, 0.5);
  assert.equal(d.fileDeleteDelayMs, 60000);
  assert.equal(d.flushMessages, Number.MAX_SAFE_INTEGER);
});

test('topic and broker property names map onto LogConfig', () => {
  const cfg = logConfigFromProps({
    'segment.bytes': '1000',
    'cleanup.policy': 'compact,delete',
    'message.timestamp.type': 'LogAppendTime',
    'flush.messages': '9223372036854775807',
    'log.retention.hours': '1',
    'unknown.thing': 'x',
  });
  assert.equal(cfg.segmentBytes, 1000);
  assert.deepEqual(cfg.cleanupPolicy, ['compact', 'delete']);
  assert.equal(cfg.messageTimestampType, 'LogAppendTime');
  assert.equal(cfg.flushMessages, Number.MAX_SAFE_INTEGER);
  assert.equal(cfg.retentionMs, 3600000);
  assert.equal(logConfigFromProps({ 'log.retention.ms': '5', 'log.retention.hours': '1' }).retentionMs, 5);
  assert.throws(() => logConfigFromProps({ 'cleanup.policy': 'shred' }), InvalidConfigError);
  assert.throws(() => logConfigFromProps({ 'segment.bytes': 'lots' }), InvalidConfigError);
  assert.throws(() => logConfigFromProps({ 'min.cleanable.dirty.ratio': '2' }), InvalidConfigError);
});
