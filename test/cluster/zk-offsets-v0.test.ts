/**
 * OffsetCommit and OffsetFetch version 0 on a ZooKeeper-mode cluster keep a group's offsets in
 * ZooKeeper under /consumers/<group>/offsets/<topic>/<partition> (the offset as decimal text, no
 * metadata), as Kafka 0.8.2's brokers did and Kafka kept doing up to 2.x; any broker answers them
 * (no coordinator, no membership checks). Versions >= 1 keep using __consumer_offsets. With
 * ZooKeeper gone, a v0 commit is answered UNKNOWN_SERVER_ERROR per partition once
 * zookeeper.connection.timeout.ms has passed, other requests are served meanwhile, and commits
 * work again once it is back.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { RawClient } from '../helpers/raw-client.js';
import { kafkaTopics, waitForTopic } from './cluster-clients.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  OffsetCommitRequestCodec,
  OffsetCommitResponseCodec,
  OffsetFetchRequestCodec,
  OffsetFetchResponseCodec,
} from '../../src/protocol/messages/index.js';
import { Admin } from '../../src/client/index.js';
import { moveLine, readGroupHistory } from '../coordinator/offset-history-read.js';

/**
 * This file's zookeeper.connection.timeout.ms: how long a v0 request waits on a lost ZooKeeper,
 * which a test waits out (the cluster helper's 20 s is for start-up on a loaded machine; a
 * broker here connects to a ZooKeeper already up).
 */
const ZK_TIMEOUT_MS = 10_000;
let c: Cluster | undefined;
const clients: RawClient[] = [];
before(async () => {
  if (!Cluster.available()) return;
  // Two brokers: __consumer_offsets (for the versions >= 1) with one replica.
  c = await Cluster.start({ brokers: 2, props: { 'offsets.topic.replication.factor': '1', 'zookeeper.connection.timeout.ms': String(ZK_TIMEOUT_MS) } });
  const created = await kafkaTopics('--create', '--topic', 'bigdata', '--zookeeper', c.zkConnect, '--partitions', '2', '--replication-factor', '1');
  assert.equal(created.code, 0, created.stderr);
  await waitForTopic(c, 'bigdata');
  for (const b of c.brokers)
    await c.waitFor(
      `broker ${b.id} to know bigdata`,
      30_000,
      async () => (await fetchV0(b.id, 'probe', [{ name: 'bigdata', partitions: [0] }]).catch(() => undefined)) !== undefined,
    );
});
after(async () => {
  for (const r of clients) r.close();
  await c?.stop();
});

async function client(brokerId: number): Promise<RawClient> {
  const r = await RawClient.connect(c!.broker(brokerId).port);
  clients.push(r);
  return r;
}

async function commitV0(brokerId: number, groupId: string, topics: { name: string; partitions: [number, bigint][] }[], metadata = 'some metadata') {
  const r = await client(brokerId);
  const res = await r.request(8, OffsetCommitRequestCodec, OffsetCommitResponseCodec, 0, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map(([p, o]) => ({
        partitionIndex: p,
        committedOffset: o,
        committedLeaderEpoch: -1,
        commitTimestamp: -1n,
        committedMetadata: metadata,
      })),
    })),
  });
  return Object.fromEntries(res.topics.flatMap((t) => t.partitions.map((p) => [`${t.name}-${p.partitionIndex}`, p.errorCode])));
}

async function fetchV0(brokerId: number, groupId: string, topics: { name: string; partitions: number[] }[]) {
  const r = await client(brokerId);
  const res = await r.request(9, OffsetFetchRequestCodec, OffsetFetchResponseCodec, 0, {
    groupId,
    topics: topics.map((t) => ({ name: t.name, partitionIndexes: t.partitions })),
    requireStable: false,
  });
  return Object.fromEntries(
    res.topics.flatMap((t) =>
      t.partitions.map((p) => [`${t.name}-${p.partitionIndex}`, { offset: p.committedOffset, error: p.errorCode, metadata: p.metadata }]),
    ),
  );
}

test('OffsetCommit v0 writes /consumers/<group>/offsets/<topic>/<partition> as decimal text; unknown topics and partitions are refused', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const codes = await commitV0(0, 'console-consumer-90976', [
    {
      name: 'bigdata',
      partitions: [
        [0, 1n],
        [1, 42n],
        [2, 3n],
      ],
    },
    { name: 'no-such-topic', partitions: [[0, 1n]] },
  ]);
  assert.deepEqual(codes, {
    'bigdata-0': ErrorCode.NONE,
    'bigdata-1': ErrorCode.NONE,
    'bigdata-2': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    'no-such-topic-0': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  });
  const zk = await c!.zk();
  // The offset only: Kafka 0.8.2 stored no metadata in ZooKeeper.
  assert.equal((await zk.get('/consumers/console-consumer-90976/offsets/bigdata/0')).data.toString(), '1');
  assert.equal((await zk.get('/consumers/console-consumer-90976/offsets/bigdata/1')).data.toString(), '42');
  assert.deepEqual((await zk.children('/consumers/console-consumer-90976/offsets/bigdata')).sort(), ['0', '1']);
  assert.equal(await zk.exists('/consumers/console-consumer-90976/offsets/no-such-topic'), null);
  assert.equal(await c!.zkCliGet('/consumers/console-consumer-90976/offsets/bigdata/1'), '42');

  // Committing again overwrites (any broker: v0 needs no coordinator).
  assert.deepEqual(await commitV0(1, 'console-consumer-90976', [{ name: 'bigdata', partitions: [[0, 7n]] }]), { 'bigdata-0': ErrorCode.NONE });
  assert.equal((await zk.get('/consumers/console-consumer-90976/offsets/bigdata/0')).data.toString(), '7');

  // The offset history (issue 25) has every change, whichever broker took it: the history
  // partition is led by one of the two brokers, so one of the commits went there by Produce.
  assert.deepEqual(await commitV0(0, 'console-consumer-90976', [{ name: 'bigdata', partitions: [[0, 7n]] }]), { 'bigdata-0': ErrorCode.NONE });
  const history = await readGroupHistory(c!.bootstrap(), 'console-consumer-90976', (e) => e.length >= 3);
  assert.deepEqual(history.map(moveLine), ['bigdata-0 -1->1 commit', 'bigdata-1 -1->42 commit', 'bigdata-0 1->7 commit'], 'an unmoved commit is not repeated');
});

test('OffsetFetch v0 reads ZooKeeper: the stored offset, or -1 with UNKNOWN_TOPIC_OR_PARTITION when none is stored, as Kafka', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zk = await c!.zk();
  await zk.ensurePath('/consumers/written-by-zk-consumer/offsets/bigdata');
  await zk.create('/consumers/written-by-zk-consumer/offsets/bigdata/1', '12345');
  for (const id of [0, 1]) {
    const got = await fetchV0(id, 'written-by-zk-consumer', [
      { name: 'bigdata', partitions: [0, 1, 5] },
      { name: 'no-such-topic', partitions: [0] },
    ]);
    assert.deepEqual(
      got,
      {
        'bigdata-0': { offset: -1n, error: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, metadata: '' },
        'bigdata-1': { offset: 12345n, error: ErrorCode.NONE, metadata: '' },
        'bigdata-5': { offset: -1n, error: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, metadata: '' },
        'no-such-topic-0': { offset: -1n, error: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, metadata: '' },
      },
      `broker ${id}`,
    );
  }
});

test('versions >= 1 keep using __consumer_offsets: the two stores do not see each other', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const admin = new Admin({ bootstrapServers: c!.bootstrap() });
  try {
    await admin.alterGroupOffsets('kafka-stored', [{ topic: 'bigdata', partition: 0, offset: 9n }]);
    assert.equal((await admin.listGroupOffsets('kafka-stored')).get('bigdata')?.get(0)?.offset, 9n);
    assert.equal(await (await c!.zk()).exists('/consumers/kafka-stored'), null, 'a v1+ commit writes no znode');
    assert.deepEqual(await fetchV0(0, 'kafka-stored', [{ name: 'bigdata', partitions: [0] }]), {
      'bigdata-0': { offset: -1n, error: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, metadata: '' },
    });

    assert.deepEqual(await commitV0(0, 'zk-stored', [{ name: 'bigdata', partitions: [[0, 4n]] }]), { 'bigdata-0': ErrorCode.NONE });
    assert.equal((await admin.listGroupOffsets('zk-stored')).size, 0, 'a v0 commit writes nothing to __consumer_offsets');
  } finally {
    await admin.close();
  }
});

test('v0 refuses metadata over offset.metadata.max.bytes and group ids that are not one znode name', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  assert.deepEqual(await commitV0(0, 'big-metadata', [{ name: 'bigdata', partitions: [[0, 1n]] }], 'x'.repeat(4097)), {
    'bigdata-0': ErrorCode.OFFSET_METADATA_TOO_LARGE,
  });
  assert.equal(await (await c!.zk()).exists('/consumers/big-metadata'), null);
  for (const bad of ['a/b', '', '..']) {
    assert.deepEqual(await commitV0(0, bad, [{ name: 'bigdata', partitions: [[0, 1n]] }]), { 'bigdata-0': ErrorCode.INVALID_GROUP_ID }, JSON.stringify(bad));
    assert.deepEqual(
      await fetchV0(0, bad, [{ name: 'bigdata', partitions: [0] }]),
      { 'bigdata-0': { offset: -1n, error: ErrorCode.INVALID_GROUP_ID, metadata: '' } },
      JSON.stringify(bad),
    );
  }
  assert.equal(await (await c!.zk()).exists('/consumers/a'), null);
});

test('ZooKeeper down: v0 commits and fetches answer UNKNOWN_SERVER_ERROR per partition, other requests are served meanwhile', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const other = await client(0);
  await c!.stopZooKeeper();
  try {
    const started = Date.now();
    const pending = commitV0(0, 'while-down', [
      {
        name: 'bigdata',
        partitions: [
          [0, 1n],
          [1, 2n],
        ],
      },
    ]);
    const fetched = fetchV0(1, 'while-down', [{ name: 'bigdata', partitions: [0] }]);
    // While the commit waits on ZooKeeper, the broker answers other requests promptly.
    let slowest = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = Date.now();
      const v = await other.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
      assert.equal(v.errorCode, ErrorCode.NONE);
      slowest = Math.max(slowest, Date.now() - t0);
      assert.ok(Date.now() - t0 < 3000, `ApiVersions took ${Date.now() - t0} ms while a v0 commit waited on ZooKeeper`);
    }
    assert.deepEqual(await pending, { 'bigdata-0': ErrorCode.UNKNOWN_SERVER_ERROR, 'bigdata-1': ErrorCode.UNKNOWN_SERVER_ERROR });
    const waited = Date.now() - started;
    assert.ok(waited >= ZK_TIMEOUT_MS - 500 && waited < 60_000, `answered after ${waited} ms`);
    t.diagnostic(`v0 commit answered UNKNOWN_SERVER_ERROR after ${waited} ms; slowest of 5 ApiVersions meanwhile: ${slowest} ms`);
    assert.deepEqual(await fetched, { 'bigdata-0': { offset: -1n, error: ErrorCode.UNKNOWN_SERVER_ERROR, metadata: '' } });
  } finally {
    await c!.startZooKeeper();
  }
  // Back: the broker's session reconnects (or is renewed) and v0 commits are written again.
  await c!.waitFor(
    'a v0 commit to succeed once ZooKeeper is back',
    60_000,
    async () => (await commitV0(0, 'after-restart', [{ name: 'bigdata', partitions: [[0, 6n]] }]))['bigdata-0'] === ErrorCode.NONE,
  );
  assert.equal((await (await c!.zk()).get('/consumers/after-restart/offsets/bigdata/0')).data.toString(), '6');
});
