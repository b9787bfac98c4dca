/**
 * DescribeTopicPartitions (API 75) over the wire, as Kafka 4 answers it: named topics in name
 * order with their partitions (ELR lists empty: no KRaft controller), unknown and illegal names,
 * every topic with an empty list, the paging cursor across topics (the request's limit and the
 * broker's max.request.partition.size.limit), and the cursors Kafka refuses. The admin client's
 * describeTopicPartitions pages through the same topics, kafka-topics.sh --describe prints from it
 * what it printed from Metadata, and @platformatic/kafka 2.12.1's codec of the API (its Admin does
 * not call it; its raw API does) reads Fjord's answers.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { createTopic } from './data-plane-helpers.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { DescribeTopicPartitionsRequestCodec, DescribeTopicPartitionsResponseCodec } from '../../../src/protocol/messages/index.js';
import type { DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse } from '../../../src/protocol/messages/75-describe-topic-partitions.js';
import { ZERO_UUID, type Input } from '../../../src/protocol/primitives/index.js';
import { Admin } from '../../../src/client/index.js';
import { runCli } from '../../cli/helpers.js';
import type { ApiHandler } from '../../../src/server/handlers/types.js';
import '../../helpers/promise-with-resolvers.js';
import { Connection, describeTopicPartitionsV0 } from '@platformatic/kafka';

let b: TestBroker;
let c: RawClient;

before(async () => {
  // The broker's cap is 6: a request asking for more gets 6 partitions a page.
  b = await startTestBroker({ 'auto.create.topics.enable': 'false', 'max.request.partition.size.limit': '6' });
  await createTopic(b, 'dtp-a', 3);
  await createTopic(b, 'dtp-b', 4);
  await createTopic(b, 'dtp-c', 2);
  c = await RawClient.connect(b.port);
});

after(async () => {
  c.close();
  await b.stop();
});

function describe(body: Input<DescribeTopicPartitionsRequest>): Promise<DescribeTopicPartitionsResponse> {
  return c.request(75, DescribeTopicPartitionsRequestCodec, DescribeTopicPartitionsResponseCodec, 0, body);
}

/** "topic:partition" of every partition a response holds, in order. */
function listed(r: DescribeTopicPartitionsResponse): string[] {
  return r.topics.flatMap((t) => t.partitions.map((p) => `${t.name}:${p.partitionIndex}`));
}

const ours = ['dtp-a', 'dtp-b', 'dtp-c'].map((name) => ({ name }));

test('named topics come back in name order with every partition field; unknown and illegal names answered per topic', async () => {
  const r = await describe({ topics: [{ name: 'dtp-c' }, { name: 'nope' }, { name: 'dtp-a' }, { name: 'bad/name' }], responsePartitionLimit: 2000 });
  assert.deepEqual(
    r.topics.map((t) => [t.name, t.errorCode]),
    [
      ['bad/name', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['dtp-a', ErrorCode.NONE],
      ['dtp-c', ErrorCode.NONE],
      ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ],
  );
  assert.equal(r.nextCursor, null);
  const a = r.topics[1]!;
  assert.equal(a.topicId, b.broker.services.metadata.topic('dtp-a')!.topicId);
  assert.equal(a.isInternal, false);
  assert.notEqual(a.topicAuthorizedOperations, -2147483648, 'authorized operations are always reported');
  assert.deepEqual(a.partitions[2], {
    errorCode: ErrorCode.NONE,
    partitionIndex: 2,
    leaderId: b.broker.config.brokerId,
    leaderEpoch: 0,
    replicaNodes: [b.broker.config.brokerId],
    isrNodes: [b.broker.config.brokerId],
    eligibleLeaderReplicas: [],
    lastKnownElr: [],
    offlineReplicas: [],
  });
  assert.equal(r.topics[3]!.topicId, ZERO_UUID, 'no topic id for an unknown topic');
});

test('pages across topics: the cursor names the next partition, also at a topic boundary', async () => {
  const pages: string[][] = [];
  const cursors: unknown[] = [];
  let cursor: { topicName: string; partitionIndex: number } | null = null;
  do {
    const r = await describe({ topics: ours, responsePartitionLimit: 4, cursor });
    pages.push(listed(r));
    cursor = r.nextCursor;
    cursors.push(cursor);
  } while (cursor !== null && pages.length < 10);
  assert.deepEqual(pages, [['dtp-a:0', 'dtp-a:1', 'dtp-a:2', 'dtp-b:0'], ['dtp-b:1', 'dtp-b:2', 'dtp-b:3', 'dtp-c:0'], ['dtp-c:1']]);
  assert.deepEqual(cursors, [{ topicName: 'dtp-b', partitionIndex: 1 }, { topicName: 'dtp-c', partitionIndex: 1 }, null]);
  // A limit that ends exactly with a topic points at the next topic's partition 0.
  const r = await describe({ topics: ours, responsePartitionLimit: 3 });
  assert.deepEqual(listed(r), ['dtp-a:0', 'dtp-a:1', 'dtp-a:2']);
  assert.deepEqual(r.nextCursor, { topicName: 'dtp-b', partitionIndex: 0 });
});

test("the broker's max.request.partition.size.limit caps the request's limit; a limit below 1 counts as 1", async () => {
  const r = await describe({ topics: ours, responsePartitionLimit: 2000 });
  assert.deepEqual(listed(r), ['dtp-a:0', 'dtp-a:1', 'dtp-a:2', 'dtp-b:0', 'dtp-b:1', 'dtp-b:2']);
  assert.deepEqual(r.nextCursor, { topicName: 'dtp-b', partitionIndex: 3 });
  const one = await describe({ topics: ours, responsePartitionLimit: 0 });
  assert.deepEqual(listed(one), ['dtp-a:0']);
});

test('an empty topic list describes every topic, from the cursor on', async () => {
  const r = await describe({ topics: [], responsePartitionLimit: 2000, cursor: { topicName: 'dtp-b', partitionIndex: 2 } });
  assert.deepEqual(listed(r), ['dtp-b:2', 'dtp-b:3', 'dtp-c:0', 'dtp-c:1']);
  assert.equal(r.nextCursor, null);
  const first = await describe({ topics: [], responsePartitionLimit: 1 });
  assert.deepEqual(listed(first), ['dtp-a:0']);
});

test('a cursor on a topic not asked for, or on a negative partition, is INVALID_REQUEST for every named topic', async () => {
  const notAsked = await describe({ topics: [{ name: 'dtp-a' }, { name: 'dtp-c' }], cursor: { topicName: 'dtp-b', partitionIndex: 0 } });
  assert.deepEqual(
    notAsked.topics.map((t) => [t.name, t.errorCode, t.partitions.length]),
    [
      ['dtp-a', ErrorCode.INVALID_REQUEST, 0],
      ['dtp-c', ErrorCode.INVALID_REQUEST, 0],
    ],
  );
  const negative = await describe({ topics: [{ name: 'dtp-a' }], cursor: { topicName: 'dtp-a', partitionIndex: -1 } });
  assert.deepEqual(
    negative.topics.map((t) => t.errorCode),
    [ErrorCode.INVALID_REQUEST],
  );
});

test("the admin client's describeTopicPartitions follows the cursor to the end", async () => {
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  try {
    const topics = await admin.describeTopicPartitions(['dtp-c', 'dtp-a', 'dtp-b'], { partitionSizeLimitPerResponse: 2 });
    assert.deepEqual(
      topics.map((t) => [t.name, t.partitions.map((p) => p.partition)]),
      [
        ['dtp-a', [0, 1, 2]],
        ['dtp-b', [0, 1, 2, 3]],
        ['dtp-c', [0, 1]],
      ],
    );
    assert.deepEqual(topics[0]!.partitions[0]!.eligibleLeaderReplicas, []);
    await assert.rejects(
      admin.describeTopicPartitions(['dtp-a', 'missing']),
      (e: Error & { code?: number }) => e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    );
  } finally {
    await admin.close();
  }
});

test('kafka-topics.sh --describe pages with DescribeTopicPartitions, and prints the same as over Metadata from a broker without it', async () => {
  const out = await runCli('kafka-topics', ['--describe', '--topic', 'dtp-.*', '--partition-size-limit-per-response', '1', '--bootstrap-server', b.bootstrap]);
  assert.equal(out.code, 0, out.stderr);
  const id = (t: string): string => b.broker.services.metadata.topic(t)!.topicId;
  const me = b.broker.config.brokerId;
  const expected = (
    [
      ['dtp-a', 3],
      ['dtp-b', 4],
      ['dtp-c', 2],
    ] as const
  ).flatMap(([t, n]) => [
    `Topic: ${t}\tTopicId: ${id(t)}\tPartitionCount: ${n}\tReplicationFactor: 1\tConfigs: `,
    ...Array.from({ length: n }, (_, p) => `\tTopic: ${t}\tPartition: ${p}\tLeader: ${me}\tReplicas: ${me}\tIsr: ${me}`),
  ]);
  assert.deepEqual(out.stdout.trimEnd().split('\n'), expected);
  // A broker without DescribeTopicPartitions (before Kafka 3.8): the Metadata path, the same lines.
  const handlers = b.broker.services.handlers as Map<number, ApiHandler>;
  const dtp = handlers.get(75)!;
  handlers.delete(75);
  try {
    const old = await runCli('kafka-topics', ['--describe', '--topic', 'dtp-.*', '--bootstrap-server', b.bootstrap]);
    assert.equal(old.code, 0, old.stderr);
    assert.deepEqual(old.stdout.trimEnd().split('\n'), expected);
  } finally {
    handlers.set(75, dtp);
  }
  const bad = await runCli('kafka-topics', ['--describe', '--partition-size-limit-per-response', '0', '--bootstrap-server', b.bootstrap]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^kafka-topics\.sh: --partition-size-limit-per-response must be a positive integer/);
});

test("@platformatic/kafka 2.12.1's DescribeTopicPartitions v0 reads Fjord's pages, the cursor included", async () => {
  const conn = new Connection('dtp-interop');
  await conn.connect('127.0.0.1', b.port);
  try {
    const api = describeTopicPartitionsV0.api;
    const topics = [{ name: 'dtp-a' }, { name: 'dtp-b' }];
    const first = await api.async(conn, topics, 4, undefined);
    assert.deepEqual(
      first.topics.flatMap((t) => t.partitions.map((p) => `${t.name}:${p.partitionIndex}`)),
      ['dtp-a:0', 'dtp-a:1', 'dtp-a:2', 'dtp-b:0'],
    );
    assert.deepEqual(first.topics[0]!.partitions[0]!.eligibleLeaderReplicas, []);
    assert.deepEqual(first.nextCursor, { topicName: 'dtp-b', partitionIndex: 1 });
    const second = await api.async(conn, topics, 4, first.nextCursor);
    assert.deepEqual(
      second.topics.flatMap((t) => t.partitions.map((p) => `${t.name}:${p.partitionIndex}`)),
      ['dtp-b:1', 'dtp-b:2', 'dtp-b:3'],
    );
    assert.equal(second.nextCursor, null);
  } finally {
    await conn.close();
  }
});
