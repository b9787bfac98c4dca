import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { LogAdmin, type PartitionAccess } from '../../../src/server/admin/index.js';
import type { MetadataStore } from '../../../src/metadata/metadata-store.js';
import type { TopicInfo } from '../../../src/metadata/cluster-model.js';

const topic: TopicInfo = {
  name: 't',
  topicId: 'x',
  internal: false,
  configs: {},
  partitions: [{ partition: 0, leader: 0, leaderEpoch: 0, replicas: [0], isr: [0], offlineReplicas: [] }],
};
const metadata = { topic: (n: string) => (n === 't' ? topic : undefined) } as unknown as MetadataStore;

function access(over: Partial<PartitionAccess>): PartitionAccess {
  return { localPartition: () => undefined, logDirsState: () => [], syncTopic: async () => {}, ...over };
}

test('DescribeLogDirs reports an offline directory as KAFKA_STORAGE_ERROR without partitions', async () => {
  const admin = new LogAdmin(metadata, () =>
    access({
      logDirsState: () => [
        { dir: '/nonexistent/offline', online: false, error: 'EIO', logs: [] },
        {
          dir: process.cwd(),
          online: true,
          logs: [
            { topic: 't', partition: 0, size: 10, offsetLag: 0 },
            { topic: 'u', partition: 1, size: 5, offsetLag: 0 },
          ],
        },
      ],
    }),
  );
  const [offline, online] = await admin.describeLogDirs(null);
  assert.deepEqual(offline, { dir: '/nonexistent/offline', errorCode: ErrorCode.KAFKA_STORAGE_ERROR, topics: [], totalBytes: -1, usableBytes: -1 });
  assert.equal(online!.errorCode, ErrorCode.NONE);
  assert.deepEqual(
    online!.topics.map((t) => t.name),
    ['t', 'u'],
  );
  assert.ok(online!.totalBytes > 0);
  const filtered = await admin.describeLogDirs(new Map([['u', new Set([1])]]));
  assert.deepEqual(filtered[1]!.topics, [{ name: 'u', partitions: [{ partition: 1, size: 5, offsetLag: 0 }] }]);
});

test('DeleteRecords on a partition not hosted here is NOT_LEADER_OR_FOLLOWER; unknown partitions are UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const admin = new LogAdmin(metadata, () => access({}));
  assert.deepEqual(await admin.deleteRecords('t', 0, 0), { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1 });
  assert.deepEqual(await admin.deleteRecords('t', 1, 0), { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1 });
  assert.deepEqual(await admin.deleteRecords('nope', 0, 0), { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1 });
});
