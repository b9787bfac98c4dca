import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  OffsetCommitRequestCodec,
  OffsetCommitResponseCodec,
  OffsetFetchRequestCodec,
  OffsetFetchResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { createTopic } from './data-plane-helpers.js';
import { Admin } from '../../../src/client/index.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false', 'offsets.topic.num.partitions': '3' });
  c = await RawClient.connect(b.port);
  await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 1, { key: 'g', keyType: 0 });
  await b.broker.services.groupCoordinator.loaded();
});
after(async () => {
  c.close();
  await b.stop();
});

function commit(version: number, groupId: string, topics: { name: string; partitions: number[] }[]) {
  return c.request(8, OffsetCommitRequestCodec, OffsetCommitResponseCodec, version, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionIndex: p, committedOffset: 5n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' })),
    })),
  });
}

async function committed(groupId: string, topic: string, partitions: number[]): Promise<bigint[]> {
  const res = await c.request(9, OffsetFetchRequestCodec, OffsetFetchResponseCodec, 7, {
    groupId,
    topics: [{ name: topic, partitionIndexes: partitions }],
    requireStable: false,
  });
  return res.topics[0]!.partitions.map((p) => p.committedOffset);
}

const codes = (res: { topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[] }) =>
  Object.fromEntries(res.topics.flatMap((t) => t.partitions.map((p) => [`${t.name}-${p.partitionIndex}`, p.errorCode])));

for (const version of [0, 1, 2, 3, 5, 7, 8, 9]) {
  test(`OffsetCommit v${version}: unknown topics and partitions get UNKNOWN_TOPIC_OR_PARTITION, the rest is committed`, async () => {
    const topic = `oc-known-${version}`;
    await createTopic(b, topic, 2);
    const group = `oc-group-${version}`;
    const res = await commit(version, group, [
      { name: 'oc-no-such-topic', partitions: [0, 1] },
      { name: topic, partitions: [0, 1, 2, 7] },
    ]);
    assert.deepEqual(codes(res), {
      'oc-no-such-topic-0': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      'oc-no-such-topic-1': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      [`${topic}-0`]: ErrorCode.NONE,
      [`${topic}-1`]: ErrorCode.NONE,
      [`${topic}-2`]: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      [`${topic}-7`]: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    });
    assert.deepEqual(await committed(group, topic, [0, 1, 2, 7]), [5n, 5n, -1n, -1n]);
    assert.deepEqual(await committed(group, 'oc-no-such-topic', [0]), [-1n]);
  });
}

test('OffsetCommit with only unknown topics answers without touching the group (no group is created)', async () => {
  const res = await commit(8, 'oc-only-unknown', [{ name: 'oc-missing', partitions: [0] }]);
  assert.deepEqual(codes(res), { 'oc-missing-0': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
  const listed = b.broker.services.groupCoordinator.listGroups([], []).groups.map((g) => g.groupId);
  assert.ok(!listed.includes('oc-only-unknown'), `groups: ${listed.join(',')}`);
});

test('AlterConsumerGroupOffsets (an admin client over OffsetCommit) on a topic that does not exist fails with UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const admin = new Admin({ bootstrapServers: `127.0.0.1:${b.port}` });
  try {
    await createTopic(b, 'oc-admin-exists', 1);
    await assert.rejects(
      admin.alterGroupOffsets('oc-admin-group', [
        { topic: 'oc-admin-missing', partition: 0, offset: 5n },
        { topic: 'oc-admin-exists', partition: 0, offset: 5n },
      ]),
      (err: Error & { code?: number }) => {
        assert.equal(err.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, err.message);
        return true;
      },
    );
    assert.deepEqual(await committed('oc-admin-group', 'oc-admin-missing', [0]), [-1n]);
    assert.deepEqual(await committed('oc-admin-group', 'oc-admin-exists', [0]), [5n], 'the valid partition is committed');
  } finally {
    await admin.close();
  }
});
