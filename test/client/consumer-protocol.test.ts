/**
 * Fjord's consumer with group.protocol=consumer (KIP-848) against one in-process broker:
 * three members over six partitions with a producer running, one closing and one dropped
 * without leaving; a regex subscription picking up a topic created later; fencing (removed,
 * or a stale epoch) and what heartbeats and offset fetches carry; commits in the order made;
 * the classic-only keys refused. The tools with group.protocol=consumer:
 * test/cli/console-consumer-848.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { Admin, Consumer, Producer, type ConsumerRecord } from '../../src/client/index.js';
import type { ConsumerOptions, TopicPartition } from '../../src/client/consumer.js';
import { Api, type ApiDef } from '../../src/client/apis.js';
import { Connection } from '../../src/client/connection.js';
import {
  ConsumerGroupDescribeRequestCodec,
  ConsumerGroupDescribeResponseCodec,
  type ConsumerGroupDescribeRequest,
  type ConsumerGroupDescribeResponse,
  type ConsumerGroupHeartbeatRequest,
  type OffsetCommitRequest,
  type OffsetFetchRequest,
} from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { waitFor } from '../helpers/wait-for.js';

const ConsumerGroupDescribe: ApiDef<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> = {
  apiKey: 69,
  name: 'ConsumerGroupDescribe',
  request: ConsumerGroupDescribeRequestCodec,
  response: ConsumerGroupDescribeResponseCodec,
  clientMax: 1,
};

const SESSION_TIMEOUT_MS = 1500;
let b: TestBroker;
let admin: Admin;

before(async () => {
  b = await startTestBroker({
    'group.consumer.session.timeout.ms': String(SESSION_TIMEOUT_MS),
    'group.consumer.min.session.timeout.ms': '1000',
    'group.consumer.heartbeat.interval.ms': '200',
    'group.consumer.min.heartbeat.interval.ms': '100',
  });
  admin = new Admin({ bootstrapServers: b.bootstrap });
});

after(async () => {
  await admin?.close();
  await b?.stop();
});

function memberOptions(groupId: string): ConsumerOptions {
  return { bootstrapServers: b.bootstrap, groupId, groupProtocol: 'consumer', autoOffsetReset: 'earliest', autoCommitIntervalMs: 100 };
}

const until = (pred: () => boolean | Promise<boolean>, timeoutMs: number, what: string) => waitFor(what, timeoutMs, pred, { pollMs: 25 });

test('three members over six partitions: one closes, one is dropped; no record lost, never two owners, commits only forward', { timeout: 60000 }, async () => {
  await admin.createTopics([{ name: 'six', numPartitions: 6, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  // The member to be dropped gives up on its closed connections quickly when closed at the end.
  const members = [0, 1, 2].map((i) => new Consumer({ ...memberOptions('g848'), ...(i === 1 ? { requestTimeoutMs: 2000 } : {}) }));
  const live = new Set(members);
  const polling = new Set(members);
  const seen = new Set<string>();
  /** Per partition, one past the highest offset consumed: where the commits must end. */
  const ends = new Map<number, bigint>();
  const problems: string[] = [];

  // Every 20 ms: the assignments the live members report are disjoint.
  const ownership = setInterval(() => {
    const owner = new Map<number, number>();
    for (const [i, c] of members.entries()) {
      if (!live.has(c)) continue;
      for (const tp of c.assignment()) {
        if (owner.has(tp.partition)) problems.push(`partition ${tp.partition} owned by members ${owner.get(tp.partition)} and ${i}`);
        owner.set(tp.partition, i);
      }
    }
  }, 20);
  // Committed offsets never go backwards.
  const committed = new Map<number, bigint>();
  let checkingCommits = true;
  const commitWatch = (async () => {
    while (checkingCommits) {
      const offsets = await admin.listGroupOffsets('g848').catch(() => null);
      for (const [p, o] of offsets?.get('six') ?? []) {
        if (o.offset < (committed.get(p) ?? -1n)) problems.push(`partition ${p}: commit went back from ${committed.get(p)} to ${o.offset}`);
        committed.set(p, o.offset);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();

  let producing = true;
  let produced = 0;
  const production = (async () => {
    while (producing) {
      await Promise.all(Array.from({ length: 6 }, (_, p) => producer.send({ topic: 'six', partition: p, value: String(produced++) })));
      await new Promise((resolve) => setTimeout(resolve, 10)); // pacing, not synchronisation
    }
  })();

  const loops = members.map(async (c) => {
    c.subscribe(['six']);
    while (polling.has(c)) {
      const records: ConsumerRecord[] = await c.poll(100).catch((err: Error) => {
        problems.push(`member ${members.indexOf(c)}: poll failed: ${err.message}`);
        polling.delete(c);
        return [];
      });
      for (const r of records) {
        seen.add(r.value!.toString());
        if (r.offset + 1n > (ends.get(r.partition) ?? 0n)) ends.set(r.partition, r.offset + 1n);
      }
    }
  });
  const total = () => members.filter((c) => live.has(c)).reduce((n, c) => n + c.assignment().length, 0);
  let droppedClosing: Promise<void> = Promise.resolve();
  try {
    await until(() => members.every((c) => c.assignment().length === 2), 15000, 'three members with two partitions each');

    polling.delete(members[0]!);
    await loops[0];
    await members[0]!.close();
    live.delete(members[0]!);
    await until(() => members[1]!.assignment().length === 3 && members[2]!.assignment().length === 3, 10000, 'the closed member partitions taken over');

    // Dropped: stops polling and its connections go, with no leave; the session timeout removes it.
    polling.delete(members[1]!);
    await loops[1];
    await members[1]!.cluster.close();
    live.delete(members[1]!);
    const droppedAt = Date.now();
    await until(() => members[2]!.assignment().length === 6, SESSION_TIMEOUT_MS + 10000, 'the dropped member partitions taken over');
    assert.ok(Date.now() - droppedAt >= SESSION_TIMEOUT_MS - 200, 'a dropped member keeps its partitions until its session times out');
    droppedClosing = members[1]!.close();

    producing = false;
    await production;
    await until(() => seen.size === produced, 15000, `all ${produced} records consumed`);
    const missing = Array.from({ length: produced }, (_, i) => String(i)).filter((v) => !seen.has(v));
    assert.deepEqual(missing, []);
    assert.equal(total(), 6);
    assert.deepEqual(problems, []);
    await until(
      () => [...ends].every(([p, end]) => committed.get(p) === end),
      10000,
      `offsets committed up to the end ${JSON.stringify([...ends].map(([p, e]) => [p, String(e), String(committed.get(p))]))}`,
    );
    assert.equal(ends.size, 6);
    assert.deepEqual(problems, []);
  } finally {
    producing = false;
    checkingCommits = false;
    clearInterval(ownership);
    polling.clear();
    await Promise.allSettled(loops);
    await production.catch(() => undefined);
    await commitWatch;
    await droppedClosing;
    for (const c of members) await c.close();
    await producer.close();
  }
});

test('a regex subscription picks up a topic created later', { timeout: 30000 }, async () => {
  await admin.createTopics([{ name: 'rx-a', numPartitions: 1, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  const c = new Consumer(memberOptions('g848-rx'));
  const got = new Set<string>();
  try {
    await producer.send({ topic: 'rx-a', partition: 0, value: 'a' });
    c.subscribe(/rx-.*/);
    const pollUntil = async (value: string) => {
      const deadline = Date.now() + 15000;
      while (!got.has(value)) {
        if (Date.now() > deadline) throw new Error(`record ${value} not consumed; assignment ${JSON.stringify(c.assignment())}`);
        for (const r of await c.poll(100)) got.add(`${r.topic}:${r.value!.toString()}`);
      }
    };
    await pollUntil('rx-a:a');
    await admin.createTopics([{ name: 'rx-b', numPartitions: 2, replicationFactor: 1 }]);
    await producer.send({ topic: 'rx-b', partition: 1, value: 'b' });
    await pollUntil('rx-b:b');
    assert.deepEqual(
      c
        .assignment()
        .map((tp) => `${tp.topic}-${tp.partition}`)
        .sort(),
      ['rx-a-0', 'rx-b-0', 'rx-b-1'],
    );
  } finally {
    await c.close();
    await producer.close();
  }
});

test('a member removed behind its back (UNKNOWN_MEMBER_ID) drops its partitions uncommitted and rejoins', { timeout: 30000 }, async () => {
  await admin.createTopics([{ name: 'fence', numPartitions: 2, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  const c = new Consumer(memberOptions('g848-fence'));
  const events: string[] = [];
  const got = new Set<string>();
  const names = (tps: TopicPartition[]) =>
    tps
      .map((tp) => tp.partition)
      .sort()
      .join(',');
  const pollUntil = async (pred: () => boolean, what: string) => {
    const deadline = Date.now() + 10000;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`${what}: not reached; events ${events.join(' ')}`);
      for (const r of await c.poll(100)) got.add(r.value!.toString());
    }
  };
  try {
    c.subscribe(['fence'], {
      onPartitionsRevoked: (tps) => void events.push(`revoked:${names(tps)}`),
      onPartitionsAssigned: (tps) => void events.push(`assigned:${names(tps)}`),
    });
    await producer.send({ topic: 'fence', partition: 0, value: 'before' });
    await pollUntil(() => got.has('before'), 'first record');
    // Another client leaves in this member's name: the coordinator forgets it.
    const conn = await admin.cluster.anyConnection();
    const described = await conn.send(ConsumerGroupDescribe, { groupIds: ['g848-fence'], includeAuthorizedOperations: false });
    const memberId = described.groups[0]!.members[0]!.memberId;
    const left = await conn.send(Api.ConsumerGroupHeartbeat, { groupId: 'g848-fence', memberId, memberEpoch: -1, topicPartitions: null });
    assert.equal(left.errorCode, ErrorCode.NONE);
    await pollUntil(() => events.filter((e) => e === 'assigned:0,1').length === 2, 'assigned again after rejoining');
    assert.deepEqual(events, ['assigned:0,1', 'revoked:0,1', 'assigned:0,1']);
    await producer.send({ topic: 'fence', partition: 1, value: 'after' });
    await pollUntil(() => got.has('after'), 'a record after rejoining');
    await c.commitSync();
    const offsets = await admin.listGroupOffsets('g848-fence');
    assert.deepEqual(
      [...offsets.get('fence')!].sort(([a], [b]) => a - b).map(([, o]) => o.offset),
      [1n, 1n],
    );
    const again = await conn.send(ConsumerGroupDescribe, { groupIds: ['g848-fence'], includeAuthorizedOperations: false });
    assert.equal(again.groups[0]!.members[0]!.memberId, memberId, 'the member keeps its id when it rejoins');
  } finally {
    await c.close();
    await producer.close();
  }
});

/** The requests a client sends of one API (input objects, recorded before encoding). */
function recordRequests<T>(apiKey: number, except: (conn: Connection) => boolean): { requests: T[]; stop(): void } {
  const requests: T[] = [];
  const original = Connection.prototype.send;
  Connection.prototype.send = function (this: Connection, api: ApiDef<unknown, unknown>, request: unknown, opts?: object) {
    if (api.apiKey === apiKey && !except(this)) requests.push(structuredClone(request) as T);
    return (original as (...args: unknown[]) => Promise<unknown>).call(this, api, request, opts);
  } as typeof original;
  return { requests, stop: () => void (Connection.prototype.send = original) };
}

type SentHeartbeat = ConsumerGroupHeartbeatRequest;

test('FENCED_MEMBER_EPOCH: the member drops its partitions uncommitted, rejoins at epoch 0 with its full subscription; heartbeats otherwise carry only what changed', {
  timeout: 30000,
}, async () => {
  await admin.createTopics([{ name: 'fenced', numPartitions: 2, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  const conn = await admin.cluster.anyConnection();
  const heartbeats = recordRequests<SentHeartbeat>(68, (c) => c === conn);
  const fetches = recordRequests<OffsetFetchRequest>(9, () => false);
  // Auto-commit on, but not before the end: a revocation would commit, a loss must not.
  const c = new Consumer({ ...memberOptions('g848-fenced'), autoCommitIntervalMs: 60000 });
  const events: string[] = [];
  const got = new Set<string>();
  const pollUntil = async (pred: () => boolean, what: string) => {
    const deadline = Date.now() + 10000;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`${what}: not reached; events ${events.join(' ')}`);
      for (const r of await c.poll(100)) got.add(r.value!.toString());
    }
  };
  const describe = async () =>
    (await conn.send(ConsumerGroupDescribe, { groupIds: ['g848-fenced'], includeAuthorizedOperations: false })).groups[0]!.members[0]!;
  try {
    c.subscribe(['fenced'], {
      onPartitionsRevoked: (tps) => void events.push(`revoked:${tps.length}`),
      onPartitionsAssigned: (tps) => void events.push(`assigned:${tps.length}`),
    });
    await producer.send({ topic: 'fenced', partition: 0, value: 'before' });
    await pollUntil(() => got.has('before'), 'first record');
    const member = await describe();
    // Another client moves the member's epoch on twice behind its back (changing its
    // subscription in its name): the member's next heartbeat carries an epoch the coordinator
    // no longer accepts.
    let epoch = member.memberEpoch;
    for (const extra of ['x1', 'x2']) {
      const r = await conn.send(Api.ConsumerGroupHeartbeat, {
        groupId: 'g848-fenced',
        memberId: member.memberId,
        memberEpoch: epoch,
        subscribedTopicNames: ['fenced', extra],
        topicPartitions: null,
      });
      assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
      epoch = r.memberEpoch;
    }
    await pollUntil(() => events.filter((e) => e === 'assigned:2').length === 2, 'assigned again after rejoining');
    assert.deepEqual(events, ['assigned:2', 'revoked:2', 'assigned:2']);
    const memberFetches = fetches.requests.filter((f) => f.groups?.[0]?.groupId === 'g848-fenced'); // before the admin's
    const offsets = await admin.listGroupOffsets('g848-fenced');
    assert.equal(offsets.get('fenced')?.size ?? 0, 0, `lost partitions are not committed: ${JSON.stringify([...(offsets.get('fenced') ?? [])])}`);
    const again = await describe();
    assert.equal(again.memberId, member.memberId);
    assert.deepEqual(again.subscribedTopicNames, ['fenced'], 'the rejoin restored the subscription');
    assert.ok(again.memberEpoch > epoch);

    const mine = heartbeats.requests.filter((h) => h.groupId === 'g848-fenced' && h.memberEpoch >= 0);
    const joins = mine.filter((h) => h.memberEpoch === 0);
    assert.equal(joins.length, 2, 'the first join and the rejoin after fencing');
    for (const j of joins) {
      assert.deepEqual(j.subscribedTopicNames, ['fenced']);
      assert.deepEqual(j.topicPartitions, []);
      assert.equal(j.rebalanceTimeoutMs, 300000);
    }
    const later = mine.filter((h) => h.memberEpoch > 0);
    assert.ok(later.length >= 2);
    for (const h of later) {
      assert.equal(h.subscribedTopicNames, null, 'the subscription did not change');
      assert.equal(h.rebalanceTimeoutMs, -1);
    }
    // Owned partitions go when they changed (the acknowledgement after an assignment), not every time.
    assert.ok(later.some((h) => h.topicPartitions === null));
    assert.ok(later.some((h) => h.topicPartitions !== null && h.topicPartitions.length === 1 && h.topicPartitions[0]!.partitions.length === 2));

    // OffsetFetch (positions of newly assigned partitions) carries the member id and its epoch.
    assert.ok(memberFetches.length >= 2, 'a fetch when first assigned and one after rejoining');
    for (const f of memberFetches) {
      assert.equal(f.groups![0]!.memberId, member.memberId);
      assert.ok(f.groups![0]!.memberEpoch > 0);
    }
  } finally {
    heartbeats.stop();
    fetches.stop();
    await c.close();
    await producer.close();
  }
});

test('keys of the other protocol are refused as Java refuses them', () => {
  const base = { bootstrapServers: b.bootstrap, groupId: 'g' };
  assert.throws(
    () => new Consumer({ ...base, groupProtocol: 'consumer', partitionAssignmentStrategy: ['range'], heartbeatIntervalMs: 100, sessionTimeoutMs: 1000 }),
    { message: 'partition.assignment.strategy, heartbeat.interval.ms, session.timeout.ms cannot be set when group.protocol=CONSUMER' },
  );
  assert.throws(() => new Consumer({ ...base, groupRemoteAssignor: 'range' }), { message: 'group.remote.assignor cannot be set when group.protocol=CLASSIC' });
});

test('a static member (group.instance.id) leaves with epoch -2: kept for its successor', { timeout: 30000 }, async () => {
  await admin.createTopics([{ name: 'static', numPartitions: 2, replicationFactor: 1 }]);
  const first = new Consumer({ ...memberOptions('g848-static'), groupInstanceId: 'i1' });
  const second = new Consumer({ ...memberOptions('g848-static'), groupInstanceId: 'i1' });
  try {
    first.subscribe(['static']);
    await until(async () => (await first.poll(50), first.assignment().length === 2), 10000, 'the static member assigned');
    await first.close();
    const conn = await admin.cluster.anyConnection();
    const described = await conn.send(ConsumerGroupDescribe, { groupIds: ['g848-static'], includeAuthorizedOperations: false });
    assert.deepEqual(
      described.groups[0]!.members.map((m) => [m.instanceId, m.memberEpoch]),
      [['i1', -2]],
    );
    second.subscribe(['static']);
    await until(async () => (await second.poll(50), second.assignment().length === 2), 10000, 'the successor takes the partitions');
  } finally {
    await first.close();
    await second.close();
  }
});

test('commits land in the order made: one held up on its way (as while a coordinator moves) is not overtaken by a later one', { timeout: 30000 }, async () => {
  const tp = { topic: 'ordered', partition: 0 };
  await admin.createTopics([{ name: tp.topic, numPartitions: 1, replicationFactor: 1 }]);
  const c = new Consumer({ ...memberOptions('g848-ordered'), enableAutoCommit: false });
  const sent: bigint[] = [];
  const original = Connection.prototype.send;
  // The first commit is held 300 ms on its way, as one retrying until a new coordinator answers.
  Connection.prototype.send = function (this: Connection, api: ApiDef<unknown, unknown>, request: unknown, opts?: object) {
    const send = () => (original as (...args: unknown[]) => Promise<unknown>).call(this, api, request, opts);
    const commit = request as OffsetCommitRequest;
    if (api.apiKey !== Api.OffsetCommit.apiKey || commit.groupId !== 'g848-ordered') return send();
    sent.push(commit.topics[0]!.partitions[0]!.committedOffset);
    return sent.length === 1 ? new Promise((resolve) => setTimeout(resolve, 300)).then(send) : send();
  } as typeof original;
  try {
    const outcomes: string[] = [];
    c.commitAsync(new Map([[tp, { offset: 5n, metadata: '' }]]), (err) => void outcomes.push(`5: ${err?.message ?? 'ok'}`));
    await c.commitSync(new Map([[tp, { offset: 10n, metadata: '' }]]));
    outcomes.push('10: ok');
    assert.deepEqual(outcomes, ['5: ok', '10: ok'], "commitSync completes after the commitAsync made before it (Java's guarantee)");
    assert.deepEqual(sent, [5n, 10n]);
    assert.equal((await admin.listGroupOffsets('g848-ordered')).get(tp.topic)?.get(0)?.offset, 10n);
  } finally {
    Connection.prototype.send = original;
    await c.close();
  }
});
