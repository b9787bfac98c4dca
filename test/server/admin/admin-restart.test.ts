import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker } from '../../helpers/broker.js';
import { hostedConfig } from '../../helpers/partition-state.js';
import { RawClient } from '../../helpers/raw-client.js';
import {
  CreateTopicsRequestCodec,
  CreateTopicsResponseCodec,
  DescribeConfigsRequestCodec,
  DescribeConfigsResponseCodec,
  IncrementalAlterConfigsRequestCodec,
  IncrementalAlterConfigsResponseCodec,
  DeleteTopicsRequestCodec,
  DeleteTopicsResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';

test('topics, topic configs and dynamic broker configs survive a restart on the same log dir', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-admin-restart-'));
  t.after(() => rm(dir, { recursive: true, force: true }));

  const first = await startTestBroker({}, dir);
  const c1 = await RawClient.connect(first.port);
  const created = await c1.request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, 7, {
    topics: [
      {
        name: 'kept',
        numPartitions: 2,
        replicationFactor: 1,
        configs: [
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'segment.bytes', value: '65536' },
        ],
      },
      { name: 'gone', numPartitions: 1, replicationFactor: 1 },
    ],
    timeoutMs: 1000,
  });
  assert.deepEqual(
    created.topics.map((x) => x.errorCode),
    [0, 0],
  );
  const inc = await c1.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
    resources: [
      {
        resourceType: 4,
        resourceName: '0',
        configs: [
          { name: 'log.retention.ms', configOperation: 0, value: '123456' },
          // A custom property (a topic key given to a broker): kept as Kafka keeps it.
          { name: 'cleanup.policy', configOperation: 0, value: 'compact' },
        ],
      },
    ],
    validateOnly: false,
  });
  assert.equal(inc.responses[0]!.errorCode, 0, inc.responses[0]!.errorMessage ?? '');
  const del = await c1.request(20, DeleteTopicsRequestCodec, DeleteTopicsResponseCodec, 5, { topicNames: ['gone'], timeoutMs: 1000 });
  assert.equal(del.responses[0]!.errorCode, 0);
  c1.close();
  await first.stop();

  const second = await startTestBroker({}, dir);
  const c2 = await RawClient.connect(second.port);
  try {
    assert.equal(second.broker.services.metadata.topic('kept')!.topicId, created.topics[0]!.topicId);
    assert.equal(second.broker.services.metadata.topic('gone'), undefined);
    const res = await c2.request(32, DescribeConfigsRequestCodec, DescribeConfigsResponseCodec, 4, {
      resources: [{ resourceType: 2, resourceName: 'kept', configurationKeys: ['cleanup.policy', 'segment.bytes', 'retention.ms'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.equal(res.results[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      res.results[0]!.configs.map((x) => [x.name, x.value, x.configSource]),
      [
        ['cleanup.policy', 'compact', 1],
        ['retention.ms', '123456', 2],
        ['segment.bytes', '65536', 1],
      ],
    );
    const broker = await c2.request(32, DescribeConfigsRequestCodec, DescribeConfigsResponseCodec, 4, {
      resources: [{ resourceType: 4, resourceName: '0', configurationKeys: ['cleanup.policy'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.deepEqual(
      broker.results[0]!.configs.map((x) => [x.name, x.configSource, x.isSensitive]),
      [['cleanup.policy', 2, true]],
      'the custom property survived the restart',
    );
    const config = await hostedConfig(second, 'kept', 1);
    assert.equal(config.segmentBytes, 65536);
    assert.deepEqual(config.cleanupPolicy, ['compact']);
    assert.equal(config.retentionMs, 123456, 'dynamic broker default applied to the reopened log');
  } finally {
    c2.close();
    await second.stop();
  }
});
