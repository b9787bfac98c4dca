/**
 * A topic created (CreateTopics, or auto-created by Metadata) and produced to at once must not be
 * answered "This server does not host this topic-partition": the creating request is answered
 * only once every partition's leader serves it. Found by other clients' suites (about 1 in 100
 * under load). Measured before the fix on three in-process brokers (real ZooKeeper): 3-partition
 * topics (replication factor 2) created on the controller, the controller's Metadata read at once
 * and one acks=1 produce sent to each partition's leader: 30 of 300 produces failed
 * UNKNOWN_TOPIC_OR_PARTITION, all to leaders other than the controller. The controller answered
 * once its own image showed leaders (as Kafka's DelayedCreatePartitions does), while the other
 * leaders were still applying their LeaderAndIsr and UpdateMetadata, which the controller sends
 * each broker on its own queue. Once a leader's own Metadata listed the partition none failed
 * (0 of 525): a broker applies LeaderAndIsr before UpdateMetadata, one at a time. After the fix:
 * 0 of 600 (200 rounds), CreateTopics' median time unchanged (54-61 ms against 61-62 ms).
 * The window is widened honestly here by delaying the controller's LeaderAndIsr to one broker
 * (the test seam on inter-broker requests).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { API, InprocCluster } from '../helpers/inproc-cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { RawClient } from '../helpers/raw-client.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  CreatePartitionsRequestCodec,
  CreatePartitionsResponseCodec,
  CreateTopicsRequestCodec,
  CreateTopicsResponseCodec,
  MetadataRequestCodec,
  MetadataResponseCodec,
  ProduceRequestCodec,
  ProduceResponseCodec,
} from '../../src/protocol/messages/index.js';
import type { CreatableTopic } from '../../src/protocol/messages/19-create-topics.js';
import type { Input } from '../../src/protocol/primitives/index.js';
import { batchOf } from '../server/handlers/data-plane-helpers.js';

/** More for a longer measurement: FJORD_CREATE_PRODUCE_ROUNDS=200. */
const ROUNDS = Number(process.env.FJORD_CREATE_PRODUCE_ROUNDS ?? 30);
const DELAY_MS = 300;

let c: InprocCluster | undefined;
const clients = new Map<number, RawClient>();
let controller = -1;
before(async () => {
  c = await InprocCluster.start({ brokers: 3, props: { 'num.partitions': '3', 'default.replication.factor': '2' } }).catch(() => undefined);
  if (!c) return;
  for (const b of c.brokers) clients.set(b.id, await RawClient.connect(b.port));
  controller = (await metadata(0, [])).controllerId;
});
after(async () => {
  for (const cl of clients.values()) cl.close();
  await c?.stop();
});

const client = (id: number): RawClient => clients.get(id)!;

function metadata(from: number, names: string[], autoCreate = false) {
  return client(from).request(3, MetadataRequestCodec, MetadataResponseCodec, 9, {
    topics: names.map((name) => ({ name })),
    allowAutoTopicCreation: autoCreate,
  });
}

function createTopic(topic: Input<CreatableTopic>, timeoutMs = 30_000) {
  return client(controller)
    .request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, 5, { topics: [topic], timeoutMs, validateOnly: false })
    .then((r) => r.topics[0]!);
}

/** One acks=1 produce to each partition's leader as broker `from` lists it: the error codes that were not NONE, with where they came from. */
async function produceToLeaders(from: number, name: string): Promise<string[]> {
  const md = await metadata(from, [name]);
  const t = md.topics[0]!;
  assert.equal(t.errorCode, ErrorCode.NONE, `broker ${from} lists ${name}`);
  const failures: string[] = [];
  await Promise.all(
    t.partitions.map(async (p) => {
      const r = await client(p.leaderId).request(0, ProduceRequestCodec, ProduceResponseCodec, 7, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 5000,
        topicData: [{ name, partitionData: [{ index: p.partitionIndex, records: batchOf(['v']) }] }],
      });
      const code = r.responses[0]!.partitionResponses[0]!.errorCode;
      if (code !== ErrorCode.NONE) failures.push(`${name}-${p.partitionIndex} on leader ${p.leaderId}: error ${code}`);
    }),
  );
  return failures;
}

test(`${ROUNDS} topics created and produced to at once: every produce to the leaders the controller lists succeeds`, { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const failures: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const name = `at-once-${i}`;
    const created = await createTopic({ name, numPartitions: 3, replicationFactor: 2 });
    assert.equal(created.errorCode, ErrorCode.NONE, created.errorMessage ?? '');
    failures.push(...(await produceToLeaders(controller, name)));
  }
  assert.deepEqual(failures, [], `${failures.length} of ${ROUNDS * 3} produces failed`);
});

test('CreateTopics waits for a leader whose LeaderAndIsr is late, and the produce to it succeeds', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const late = (controller + 1) % 3;
  const rule = c.faults.delay({ api: API.LeaderAndIsr, to: late }, DELAY_MS);
  try {
    const t0 = Date.now();
    // Partition 0 led by the late broker, partition 1 by the controller.
    const created = await createTopic({
      name: 'late-leader',
      assignments: [
        { partitionIndex: 0, brokerIds: [late, controller] },
        { partitionIndex: 1, brokerIds: [controller, late] },
      ],
      numPartitions: -1,
      replicationFactor: -1,
    });
    const took = Date.now() - t0;
    assert.equal(created.errorCode, ErrorCode.NONE, created.errorMessage ?? '');
    assert.ok(rule.hits >= 1, 'the LeaderAndIsr to the late broker was delayed');
    assert.deepEqual(await produceToLeaders(controller, 'late-leader'), []);
    assert.ok(took >= DELAY_MS - 50, `answered after ${took} ms, before the late leader could serve`);
  } finally {
    rule.remove();
  }
});

test("CreatePartitions waits for the new partition's late leader, and the produce to it succeeds", { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const late = (controller + 1) % 3;
  const created = await createTopic({ name: 'grown', assignments: [{ partitionIndex: 0, brokerIds: [controller] }], numPartitions: -1, replicationFactor: -1 });
  assert.equal(created.errorCode, ErrorCode.NONE, created.errorMessage ?? '');
  const rule = c.faults.delay({ api: API.LeaderAndIsr, to: late }, DELAY_MS);
  try {
    const res = await client(controller).request(37, CreatePartitionsRequestCodec, CreatePartitionsResponseCodec, 1, {
      topics: [{ name: 'grown', count: 2, assignments: [{ brokerIds: [late] }] }],
      timeoutMs: 30_000,
      validateOnly: false,
    });
    assert.equal(res.results[0]!.errorCode, ErrorCode.NONE, res.results[0]!.errorMessage ?? '');
    assert.ok(rule.hits >= 1, 'the LeaderAndIsr to the late broker was delayed');
    assert.deepEqual(await produceToLeaders(controller, 'grown'), []);
  } finally {
    rule.remove();
  }
});

test("CreateTopics whose leader cannot serve within the request's timeout_ms: REQUEST_TIMED_OUT (Kafka's answer), the topic created anyway", {
  timeout: 60_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cluster = c;
  const late = (controller + 2) % 3;
  const held = cluster.faults.hold({ api: API.LeaderAndIsr, to: late });
  try {
    const t0 = Date.now();
    const created = await createTopic(
      { name: 'held-leader', assignments: [{ partitionIndex: 0, brokerIds: [late] }], numPartitions: -1, replicationFactor: -1 },
      1000,
    );
    const took = Date.now() - t0;
    assert.equal(created.errorCode, ErrorCode.REQUEST_TIMED_OUT, created.errorMessage ?? '');
    assert.ok(took >= 900 && took < 10_000, `answered after ${took} ms`);
  } finally {
    held.release();
  }
  await cluster.waitFor(
    'held-leader served by its leader',
    20_000,
    async () => (await produceToLeaders(controller, 'held-leader').catch(() => ['not listed'])).length === 0,
  );
});

test('Metadata auto-creating a topic answers once its leaders serve it: every produce to them succeeds', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  // Asked of a broker that is not the controller; both other brokers get their LeaderAndIsr late.
  const asked = (controller + 1) % 3;
  const rules = [0, 1, 2].filter((b) => b !== asked).map((b) => c!.faults.delay({ api: API.LeaderAndIsr, to: b }, DELAY_MS));
  try {
    const md = await metadata(asked, ['auto-created'], true);
    const topic = md.topics[0]!;
    assert.equal(topic.errorCode, ErrorCode.NONE);
    assert.equal(topic.partitions.length, 3);
    assert.ok(
      topic.partitions.some((p) => p.leaderId !== asked),
      'some partition is led by a broker whose LeaderAndIsr was late',
    );
    assert.deepEqual(await produceToLeaders(asked, 'auto-created'), []);
  } finally {
    for (const r of rules) r.remove();
  }
});
