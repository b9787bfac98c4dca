import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { CONFIG_SOURCE_CODES } from '../../../src/config/index.js';
import {
  TOPIC_CONFIG_DEFS,
  effectiveTopicConfigs,
  resolveTopicConfig,
  topicConfigDef,
  validateTopicConfig,
  type BrokerConfigLayers,
} from '../../../src/config/topic-configs.js';
import { AlterConfigOp, applyIncrementalOps, replaceAll } from '../../../src/server/admin/config-alteration.js';
import { logConfigFromProps } from '../../../src/storage/config.js';

const layers = (stat: Record<string, string> = {}, dyn: Record<string, string> = {}, dflt: Record<string, string> = {}): BrokerConfigLayers => ({
  static: new Map(Object.entries(stat)),
  dynamicBroker: new Map(Object.entries(dyn)),
  dynamicDefault: new Map(Object.entries(dflt)),
});

function invalidConfig(fn: () => void, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KafkaError);
    assert.equal(err.code, ErrorCode.INVALID_CONFIG);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

test('unknown names and bad values are INVALID_CONFIG with Kafka wording', () => {
  invalidConfig(() => validateTopicConfig('retention.mss', '1'), 'Unknown topic config name: retention.mss');
  invalidConfig(() => validateTopicConfig('retention.ms', 'abc'), 'Invalid value abc for configuration retention.ms: Not a number of type LONG');
  invalidConfig(() => validateTopicConfig('retention.ms', '-2'), 'Invalid value -2 for configuration retention.ms: Value must be at least -1');
  invalidConfig(() => validateTopicConfig('cleanup.policy', 'delete,squash'), /String must be one of: delete, compact/);
  invalidConfig(() => validateTopicConfig('min.cleanable.dirty.ratio', '1.5'), /Value must be no more than 1/);
  invalidConfig(() => validateTopicConfig('preallocate', 'yes'), /Expected value to be either true or false/);
  invalidConfig(() => validateTopicConfig('segment.bytes', '10'), /at least 14/);
  invalidConfig(() => validateTopicConfig('message.timestamp.type', 'Now'), /one of: CreateTime, LogAppendTime/);
  validateTopicConfig('cleanup.policy', 'compact,delete');
  validateTopicConfig('retention.ms', '-1');
  validateTopicConfig('compression.type', 'zstd');
});

test('every topic config default is valid and storage understands the effective set', () => {
  for (const def of TOPIC_CONFIG_DEFS) {
    if (def.default !== null) validateTopicConfig(def.name, def.default);
  }
  const cfg = logConfigFromProps(effectiveTopicConfigs({}, layers()));
  assert.equal(cfg.retentionMs, 604800000);
  assert.equal(cfg.segmentBytes, 1073741824);
  assert.deepEqual(cfg.cleanupPolicy, ['delete']);
});

test('retention.ms resolves override > dynamic broker > dynamic default > static, with synonyms in that order', () => {
  const def = topicConfigDef('retention.ms')!;
  let r = resolveTopicConfig(def, {}, layers());
  assert.equal(r.value, '604800000');
  assert.equal(r.source, CONFIG_SOURCE_CODES.DEFAULT_CONFIG);
  assert.deepEqual(r.synonyms, [], 'Kafka lists no synonym while log.retention.ms is set nowhere');

  r = resolveTopicConfig(def, {}, layers({ 'log.retention.hours': '2' }));
  assert.equal(r.value, '7200000');
  assert.equal(r.source, CONFIG_SOURCE_CODES.DEFAULT_CONFIG, 'as Kafka: the synonyms before log.retention.ms are dropped');
  assert.deepEqual(r.synonyms, []);

  r = resolveTopicConfig(def, {}, layers({ 'log.retention.hours': '2', 'log.retention.minutes': '3' }));
  assert.equal(r.value, '180000', 'minutes beat hours');

  r = resolveTopicConfig(def, { 'retention.ms': '5' }, layers({ 'log.retention.hours': '2' }, { 'log.retention.ms': '9' }, { 'log.retention.ms': '8' }));
  assert.equal(r.value, '5');
  assert.equal(r.source, CONFIG_SOURCE_CODES.TOPIC_CONFIG);
  assert.deepEqual(
    r.synonyms.map((s) => [s.name, s.value, s.source]),
    [
      ['retention.ms', '5', 1],
      ['log.retention.ms', '9', 2],
      ['log.retention.ms', '8', 3],
      ['log.retention.hours', '2', 4],
      ['log.retention.hours', '168', 5],
    ],
  );
  r = resolveTopicConfig(def, {}, layers({}, {}, { 'log.retention.ms': '8' }));
  assert.equal(r.value, '8');
  assert.equal(r.source, CONFIG_SOURCE_CODES.DYNAMIC_DEFAULT_BROKER_CONFIG);

  // The value is KafkaConfig's: each key at its highest layer, then ms over minutes over hours.
  r = resolveTopicConfig(def, {}, layers({ 'log.retention.ms': '7' }, { 'log.retention.hours': '1' }));
  assert.equal(r.value, '7', 'a static log.retention.ms beats a dynamic log.retention.hours');
  assert.deepEqual(
    r.synonyms.map((s) => [s.name, s.source]),
    [
      ['log.retention.ms', CONFIG_SOURCE_CODES.STATIC_BROKER_CONFIG],
      ['log.retention.hours', CONFIG_SOURCE_CODES.DEFAULT_CONFIG],
    ],
  );
});

test('max.message.bytes derives from message.max.bytes', () => {
  const r = resolveTopicConfig(topicConfigDef('max.message.bytes')!, {}, layers({ 'message.max.bytes': '2000' }));
  assert.equal(r.value, '2000');
  assert.deepEqual(r.synonyms[0], { name: 'message.max.bytes', value: '2000', source: CONFIG_SOURCE_CODES.STATIC_BROKER_CONFIG });
});

test('incremental SET/DELETE/APPEND/SUBTRACT', () => {
  const info = (n: string) => topicConfigDef(n);
  assert.deepEqual(applyIncrementalOps({ 'retention.ms': '1' }, [{ name: 'retention.ms', op: AlterConfigOp.DELETE, value: null }], info), {});
  assert.deepEqual(applyIncrementalOps({}, [{ name: 'cleanup.policy', op: AlterConfigOp.APPEND, value: 'compact' }], info), {
    'cleanup.policy': 'delete,compact',
  });
  assert.deepEqual(
    applyIncrementalOps({ 'cleanup.policy': 'delete,compact' }, [{ name: 'cleanup.policy', op: AlterConfigOp.SUBTRACT, value: 'delete' }], info),
    { 'cleanup.policy': 'compact' },
  );
  invalidConfig(
    () => applyIncrementalOps({}, [{ name: 'retention.ms', op: AlterConfigOp.APPEND, value: '1' }], info),
    'Config value append is not allowed for config key: retention.ms',
  );
  assert.throws(
    () =>
      applyIncrementalOps(
        {},
        [
          { name: 'retention.ms', op: AlterConfigOp.SET, value: '1' },
          { name: 'retention.ms', op: AlterConfigOp.DELETE, value: null },
        ],
        info,
      ),
    (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REQUEST,
  );
  assert.throws(
    () => applyIncrementalOps({}, [{ name: 'retention.ms', op: 7, value: '1' }], info),
    (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REQUEST,
  );
  assert.deepEqual(
    replaceAll([
      { name: 'a', value: '1' },
      { name: 'b', value: null },
    ]),
    { a: '1' },
  );
});

test('property: APPEND then SUBTRACT of fresh items restores the list; APPEND is idempotent', () => {
  const item = fc.stringMatching(/^[a-z0-9]{1,6}$/);
  const info = () => ({ type: 'list' as const, default: '' });
  fc.assert(
    fc.property(fc.uniqueArray(item, { maxLength: 6 }), fc.uniqueArray(item, { maxLength: 6 }), (base, extra) => {
      const fresh = extra.filter((e) => !base.includes(e));
      const start: Record<string, string> = base.length > 0 ? { l: base.join(',') } : {};
      const appended = applyIncrementalOps(start, [{ name: 'l', op: AlterConfigOp.APPEND, value: extra.join(',') }], info);
      assert.deepEqual(
        appended.l!.split(',').filter((s) => s !== ''),
        [...base, ...fresh],
      );
      const again = applyIncrementalOps(appended, [{ name: 'l', op: AlterConfigOp.APPEND, value: extra.join(',') }], info);
      assert.equal(again.l, appended.l);
      const back = applyIncrementalOps(appended, [{ name: 'l', op: AlterConfigOp.SUBTRACT, value: fresh.join(',') }], info);
      assert.deepEqual(
        (back.l ?? '').split(',').filter((s) => s !== ''),
        base,
      );
    }),
  );
});
