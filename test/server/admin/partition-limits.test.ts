/**
 * Limits on creating partitions: the per-request cap (max.partitions.per.request), the
 * per-broker and per-cluster caps (KIP-578's max.broker.partitions and max.partitions), the same
 * answers for validateOnly, and all-or-nothing creation (a failure part-way leaves nothing in
 * metadata or on disk).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { hostedPartitionsOf, openLogsOf } from '../../helpers/partition-state.js';
import {
  CreatePartitionsRequestCodec,
  CreatePartitionsResponseCodec,
  CreateTopicsRequestCodec,
  CreateTopicsResponseCodec,
  ProduceRequestCodec,
  ProduceResponseCodec,
} from '../../../src/protocol/messages/index.js';
import type { CreatableTopic } from '../../../src/protocol/messages/19-create-topics.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { Input } from '../../../src/protocol/primitives/index.js';
import { encodeBatch } from '../../../src/protocol/records/index.js';

function createTopics(c: RawClient, topics: Input<CreatableTopic>[], validateOnly = false) {
  return c.request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, 5, { topics, timeoutMs: 60000, validateOnly });
}
function createPartitions(c: RawClient, topics: { name: string; count: number }[], validateOnly = false) {
  return c.request(37, CreatePartitionsRequestCodec, CreatePartitionsResponseCodec, 1, {
    topics: topics.map((t) => ({ ...t, assignments: null })),
    timeoutMs: 60000,
    validateOnly,
  });
}

/** Partition directories of `topic` in the log dir (deleted ones, renamed `*-delete`, excluded). */
async function partitionDirs(dir: string, topic: string): Promise<string[]> {
  const names = await readdir(dir);
  return names.filter((n) => new RegExp(`^${topic}-\\d+$`).test(n)).sort();
}

/** Polls until `read` returns `expected` (deleted logs leave asynchronously) or the deadline passes. */
async function eventually<T>(read: () => Promise<T>, expected: T, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  let last = await read();
  while (JSON.stringify(last) !== JSON.stringify(expected)) {
    if (Date.now() > deadline) assert.deepEqual(last, expected, what);
    await new Promise((r) => setTimeout(r, 50));
    last = await read();
  }
}

async function withBroker(props: Record<string, string>, fn: (b: TestBroker, c: RawClient) => Promise<void>): Promise<void> {
  const b = await startTestBroker(props);
  const c = await RawClient.connect(b.port);
  try {
    await fn(b, c);
  } finally {
    c.close();
    await b.stop();
  }
}

test('a CreateTopics or CreatePartitions of 25,000 partitions is refused with POLICY_VIOLATION, validateOnly too, and leaves nothing behind', {
  timeout: 120_000,
}, async () => {
  await withBroker({}, async (b, c) => {
    for (const validateOnly of [true, false]) {
      const res = await createTopics(c, [{ name: 'huge', numPartitions: 25_000, replicationFactor: 1 }], validateOnly);
      const t = res.topics[0]!;
      assert.equal(t.errorCode, ErrorCode.POLICY_VIOLATION, `validateOnly=${validateOnly}: ${t.errorMessage}`);
      assert.match(t.errorMessage ?? '', /Excessively large number of partitions per request: 25000 requested, max\.partitions\.per\.request is 10000/);
    }
    assert.equal(b.broker.services.metadata.topic('huge'), undefined);
    assert.deepEqual(await partitionDirs(b.dir, 'huge'), []);

    assert.equal((await createTopics(c, [{ name: 'grow', numPartitions: 1, replicationFactor: 1 }])).topics[0]!.errorCode, ErrorCode.NONE);
    for (const validateOnly of [true, false]) {
      const res = await createPartitions(c, [{ name: 'grow', count: 25_000 }], validateOnly);
      assert.equal(res.results[0]!.errorCode, ErrorCode.POLICY_VIOLATION, `validateOnly=${validateOnly}: ${res.results[0]!.errorMessage}`);
      assert.match(res.results[0]!.errorMessage ?? '', /24999 requested, max\.partitions\.per\.request is 10000/);
    }
    assert.equal(b.broker.services.metadata.topic('grow')!.partitions.length, 1);
    assert.deepEqual(await partitionDirs(b.dir, 'grow'), ['grow-0']);
    assert.deepEqual(await hostedPartitionsOf(b, 'grow'), [0]);

    // The cap is over the whole request: two topics of 6,000 each fail together.
    const both = await createTopics(c, [
      { name: 'left', numPartitions: 6000, replicationFactor: 1 },
      { name: 'right', numPartitions: 6000, replicationFactor: 1 },
    ]);
    assert.deepEqual(
      both.topics.map((t) => [t.name, t.errorCode]),
      [
        ['left', ErrorCode.POLICY_VIOLATION],
        ['right', ErrorCode.POLICY_VIOLATION],
      ],
    );
    assert.equal(b.broker.services.metadata.topic('left'), undefined);
  });
});

test('max.broker.partitions and max.partitions refuse what would pass them, validateOnly answering the same', async () => {
  await withBroker({ 'max.broker.partitions': '20', 'max.partitions.per.request': '30', 'num.partitions': '4' }, async (b, c) => {
    assert.equal((await createTopics(c, [{ name: 'a', numPartitions: 10, replicationFactor: 1 }])).topics[0]!.errorCode, ErrorCode.NONE);
    // 10 hosted: 8 more fit, a second 8 in the same request does not, dry run or not.
    for (const validateOnly of [true, false]) {
      const res = await createTopics(
        c,
        [
          { name: 'b', numPartitions: 8, replicationFactor: 1 },
          { name: 'c', numPartitions: 8, replicationFactor: 1 },
        ],
        validateOnly,
      );
      assert.deepEqual(
        res.topics.map((t) => [t.name, t.errorCode]),
        [
          ['b', ErrorCode.NONE],
          ['c', ErrorCode.POLICY_VIOLATION],
        ],
        `validateOnly=${validateOnly}`,
      );
      assert.match(res.topics[1]!.errorMessage ?? '', /would take broker 0 to 26 partitions, above max\.broker\.partitions 20 \(it hosts 18\)/);
    }
    assert.equal(b.broker.services.metadata.topic('c'), undefined);
    assert.deepEqual(await partitionDirs(b.dir, 'c'), []);
    // 18 hosted now.
    const grow = await createPartitions(c, [{ name: 'a', count: 13 }], true);
    assert.equal(grow.results[0]!.errorCode, ErrorCode.POLICY_VIOLATION);
    assert.equal((await createPartitions(c, [{ name: 'a', count: 13 }])).results[0]!.errorCode, ErrorCode.POLICY_VIOLATION);
    assert.equal((await createPartitions(c, [{ name: 'a', count: 12 }])).results[0]!.errorCode, ErrorCode.NONE);
    assert.equal(b.broker.services.metadata.topic('a')!.partitions.length, 12);
    // Auto-creation (num.partitions=4) is held to the same cap.
    const { MetadataRequestCodec, MetadataResponseCodec } = await import('../../../src/protocol/messages/index.js');
    const md = await c.request(3, MetadataRequestCodec, MetadataResponseCodec, 4, { topics: [{ name: 'auto' }], allowAutoTopicCreation: true });
    assert.equal(md.topics[0]!.errorCode, ErrorCode.POLICY_VIOLATION);
    assert.equal(b.broker.services.metadata.topic('auto'), undefined);
  });
  await withBroker({ 'max.partitions': '5' }, async (b, c) => {
    const res = await createTopics(c, [{ name: 'x', numPartitions: 6, replicationFactor: 1 }]);
    assert.equal(res.topics[0]!.errorCode, ErrorCode.POLICY_VIOLATION);
    assert.match(res.topics[0]!.errorMessage ?? '', /above max\.partitions 5/);
    assert.equal(b.broker.services.metadata.topic('x'), undefined);
  });
});

test('creation is all or nothing: a partition that cannot be created removes the others, from metadata and disk', async () => {
  await withBroker({}, async (b, c) => {
    // A plain file where partition 3's directory must go: its mkdir fails part-way through.
    await writeFile(join(b.dir, 'boom-3'), 'in the way');
    const res = await createTopics(c, [{ name: 'boom', numPartitions: 6, replicationFactor: 1 }]);
    assert.notEqual(res.topics[0]!.errorCode, ErrorCode.NONE);
    assert.match(res.topics[0]!.errorMessage ?? '', /Topic 'boom' was not created/);
    assert.equal(b.broker.services.metadata.topic('boom'), undefined);
    assert.deepEqual(await hostedPartitionsOf(b, 'boom'), []);
    assert.deepEqual(await openLogsOf(b, 'boom'), []);
    await eventually(() => partitionDirs(b.dir, 'boom'), ['boom-3'], 'only the foreign file is left');
    await eventually(async () => (await readdir(b.dir)).filter((n) => n.startsWith('boom-') && n.endsWith('-delete')), [], 'deleted logs are gone');

    // CreatePartitions: the topic keeps exactly what it had, and still works.
    assert.equal((await createTopics(c, [{ name: 'grow', numPartitions: 2, replicationFactor: 1 }])).topics[0]!.errorCode, ErrorCode.NONE);
    await writeFile(join(b.dir, 'grow-4'), 'in the way');
    const grown = await createPartitions(c, [{ name: 'grow', count: 6 }]);
    assert.notEqual(grown.results[0]!.errorCode, ErrorCode.NONE);
    assert.match(grown.results[0]!.errorMessage ?? '', /No partitions were added to 'grow'/);
    assert.equal(b.broker.services.metadata.topic('grow')!.partitions.length, 2);
    assert.deepEqual(await hostedPartitionsOf(b, 'grow'), [0, 1]);
    await eventually(() => partitionDirs(b.dir, 'grow'), ['grow-0', 'grow-1', 'grow-4'], 'new partition dirs removed');
    const produced = await c.request(0, ProduceRequestCodec, ProduceResponseCodec, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        {
          name: 'grow',
          partitionData: [
            {
              index: 1,
              records: encodeBatch({
                records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('still here'), headers: [] }],
                baseTimestamp: BigInt(Date.now()),
              }),
            },
          ],
        },
      ],
    });
    assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    // With the obstacle gone the same request succeeds.
    const { rm } = await import('node:fs/promises');
    await rm(join(b.dir, 'grow-4'));
    assert.equal((await createPartitions(c, [{ name: 'grow', count: 6 }])).results[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(await hostedPartitionsOf(b, 'grow'), [0, 1, 2, 3, 4, 5]);
  });
});
