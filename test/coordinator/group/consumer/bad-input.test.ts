/**
 * Bad ConsumerGroupHeartbeats on the wire against one broker (issue 24, "Bad input"): stale and
 * wrong epochs, unknown members, an unknown assignor, regexes that do not compile, are too big,
 * or are pathological for a backtracking engine, a group over group.consumer.max.size, joins
 * missing required fields. Each gets Kafka 4's error code, and after each a stable two-member
 * group is exactly as it was (members, epochs, assignments). A pathological regex is answered
 * in bounded time while another group's heartbeats go on being answered: both timed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../../helpers/broker.js';
import { RawClient } from '../../../helpers/raw-client.js';
import {
  ConsumerGroupDescribeRequestCodec,
  ConsumerGroupDescribeResponseCodec,
  ConsumerGroupHeartbeatRequestCodec,
  ConsumerGroupHeartbeatResponseCodec,
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
} from '../../../../src/protocol/messages/index.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';

type HeartbeatBody = Parameters<typeof ConsumerGroupHeartbeatRequestCodec.write>[1];
type Owned = { topicId: string; partitions: number[] }[];

const LONG_TOPICS = 200;
const STEADY = 'steady';
let b: TestBroker;
let c: RawClient;
/** The steady group's members and what they own, as they last heard it. */
const members = new Map<string, { epoch: number; owned: Owned }>();

const heartbeat = (body: Partial<HeartbeatBody>, version = 1, client = c) =>
  client.request(68, ConsumerGroupHeartbeatRequestCodec, ConsumerGroupHeartbeatResponseCodec, version, {
    groupId: STEADY,
    memberId: 'm',
    memberEpoch: 0,
    rebalanceTimeoutMs: 30_000,
    subscribedTopicNames: ['t'],
    topicPartitions: [],
    ...body,
  });

/** A heartbeat from a steady member, carrying what it owns. */
async function steadyBeat(memberId: string, client = c) {
  const m = members.get(memberId)!;
  const r = await heartbeat({ memberId, memberEpoch: m.epoch, rebalanceTimeoutMs: -1, subscribedTopicNames: null, topicPartitions: m.owned }, 1, client);
  assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
  members.set(memberId, { epoch: r.memberEpoch, owned: r.assignment ? r.assignment.topicPartitions : m.owned });
  return r;
}

/** The steady group as ConsumerGroupDescribe shows it: epochs and assignments per member. */
async function describeSteady() {
  const d = await c.request(69, ConsumerGroupDescribeRequestCodec, ConsumerGroupDescribeResponseCodec, 0, {
    groupIds: [STEADY],
    includeAuthorizedOperations: false,
  });
  const g = d.groups[0]!;
  assert.equal(g.errorCode, ErrorCode.NONE);
  return {
    state: g.groupState,
    groupEpoch: g.groupEpoch,
    assignmentEpoch: g.assignmentEpoch,
    members: g.members
      .map((m) => ({ id: m.memberId, epoch: m.memberEpoch, assigned: JSON.stringify(m.assignment), target: JSON.stringify(m.targetAssignment) }))
      .sort((x, y) => x.id.localeCompare(y.id)),
  };
}
let stable: Awaited<ReturnType<typeof describeSteady>>;

before(async () => {
  b = await startTestBroker({ 'offsets.topic.num.partitions': '1', 'group.consumer.max.size': '2' });
  c = await RawClient.connect(b.port);
  const { metadata, replicaManager, groupCoordinator } = b.broker.services;
  await metadata.createTopic({ name: 't', numPartitions: 4, replicationFactor: 1 });
  // Long names that make `(a+)+$` take ~2^230 steps per name in a backtracking engine.
  const created = await metadata.createTopics(
    Array.from({ length: LONG_TOPICS }, (_, i) => ({ name: `${'a'.repeat(230)}-${i}`, numPartitions: 1, replicationFactor: 1 })),
  );
  assert.ok(created.every((t) => !(t instanceof Error)));
  await replicaManager.syncTopic('t');
  await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 4, { keyType: 0, coordinatorKeys: [STEADY] });
  await groupCoordinator.loaded();
  for (const id of ['m1', 'm2']) {
    const r = await heartbeat({ memberId: id });
    assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
    members.set(id, { epoch: r.memberEpoch, owned: r.assignment?.topicPartitions ?? [] });
  }
  // Heartbeat until both own their two partitions at the group's epoch (revocation acknowledged).
  const deadline = Date.now() + 10_000;
  for (;;) {
    for (const id of members.keys()) await steadyBeat(id);
    stable = await describeSteady();
    if (stable.state === 'Stable' && stable.members.every((m) => m.epoch === stable.groupEpoch && m.assigned === m.target)) break;
    assert.ok(Date.now() < deadline, `the steady group never became stable: ${JSON.stringify(stable)}`);
  }
  assert.deepEqual(
    [...members.values()].map((m) => m.owned.flatMap((t) => t.partitions).length),
    [2, 2],
  );
});

after(async () => {
  c?.close();
  await b?.stop();
});

async function assertUndisturbed(after: string) {
  assert.deepEqual(await describeSteady(), stable, `the steady group changed after ${after}`);
  // And its members' next heartbeats pass at the same epoch, with no new assignment.
  for (const id of members.keys()) {
    const r = await steadyBeat(id);
    assert.equal(r.memberEpoch, stable.groupEpoch, after);
    assert.equal(r.assignment, null, after);
  }
}

test('wrong and stale epochs: FENCED_MEMBER_EPOCH; an unknown member: UNKNOWN_MEMBER_ID', async () => {
  const m1 = members.get('m1')!;
  const greater = await heartbeat({ memberId: 'm1', memberEpoch: m1.epoch + 1, rebalanceTimeoutMs: -1, subscribedTopicNames: null, topicPartitions: m1.owned });
  assert.equal(greater.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  assert.match(greater.errorMessage!, /greater member epoch/);
  // The previous epoch without saying what it owns: not a lost response, a stale member.
  const stale = await heartbeat({ memberId: 'm1', memberEpoch: m1.epoch - 1, rebalanceTimeoutMs: -1, subscribedTopicNames: null, topicPartitions: null });
  assert.equal(stale.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  assert.match(stale.errorMessage!, /smaller member epoch/);
  // The previous epoch, but claiming partitions the member was never assigned.
  const all = [{ topicId: m1.owned[0]!.topicId, partitions: [0, 1, 2, 3] }];
  const grabbing = await heartbeat({ memberId: 'm1', memberEpoch: m1.epoch - 1, rebalanceTimeoutMs: -1, subscribedTopicNames: null, topicPartitions: all });
  assert.equal(grabbing.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  const ghost = await heartbeat({ memberId: 'ghost', memberEpoch: 3, rebalanceTimeoutMs: -1, subscribedTopicNames: null, topicPartitions: [] });
  assert.equal(ghost.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const ghostLeave = await heartbeat({ memberId: 'ghost', memberEpoch: -1, rebalanceTimeoutMs: -1, subscribedTopicNames: null, topicPartitions: null });
  assert.equal(ghostLeave.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  await assertUndisturbed('bad epochs');
});

test('an assignor the broker does not offer: UNSUPPORTED_ASSIGNOR with the supported ones', async () => {
  const r = await heartbeat({ memberId: 'm3', serverAssignor: 'sticky' });
  assert.equal(r.errorCode, ErrorCode.UNSUPPORTED_ASSIGNOR);
  assert.equal(r.errorMessage, 'ServerAssignor sticky is not supported. Supported assignors: uniform, range.');
  // Also from a member already in the group.
  const m1 = members.get('m1')!;
  const switching = await heartbeat({
    memberId: 'm1',
    memberEpoch: m1.epoch,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    topicPartitions: m1.owned,
    serverAssignor: 'nope',
  });
  assert.equal(switching.errorCode, ErrorCode.UNSUPPORTED_ASSIGNOR);
  await assertUndisturbed('an unknown assignor');
});

test('regexes that do not compile, and one too big: INVALID_REGULAR_EXPRESSION at once', async () => {
  for (const [regex, why] of [
    ['(', /missing closing \)/],
    ['a(?=b)', /invalid or unsupported Perl syntax/],
    ['(x)\\1', /invalid escape sequence/],
    [`(?:${'ab|'.repeat(400)}c)`, /longer than 1024 characters/],
    ['(?:(?:a{100}){100}){100}', /expand past 4096 instructions/],
  ] as const) {
    const started = performance.now();
    const r = await heartbeat({ memberId: 'm3', subscribedTopicNames: null, subscribedTopicRegex: regex });
    const ms = performance.now() - started;
    assert.equal(r.errorCode, ErrorCode.INVALID_REGULAR_EXPRESSION, regex);
    assert.match(r.errorMessage!, /^SubscribedTopicRegex `.*` is not a valid regular expression: /);
    assert.match(r.errorMessage!, why);
    assert.ok(ms < 2_000, `${regex.slice(0, 30)}: ${ms} ms`);
  }
  // A member of the group changing its subscription to a bad regex is refused the same way.
  const m1 = members.get('m1')!;
  const r = await heartbeat({
    memberId: 'm1',
    memberEpoch: m1.epoch,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    topicPartitions: m1.owned,
    subscribedTopicRegex: '[',
  });
  assert.equal(r.errorCode, ErrorCode.INVALID_REGULAR_EXPRESSION);
  await assertUndisturbed('bad regexes');
});

test('pathological regexes over long topic names are answered in bounded time, and other groups meanwhile', async () => {
  const other = await RawClient.connect(b.port);
  try {
    // (a+)+$ is exponential for a backtracking engine on `aaa…a-1`; the largest program the
    // bounds accept costs the most per name.
    for (const [i, regex] of ['(a+)+$', `(?:.?){650}.*!`, '(?:[a-z-]?){300}(?:a|aa)*(?:[a-z0-9-]?){300}!'].entries()) {
      // Topics change, so the next heartbeat of a regex group matches every name again.
      await b.broker.services.metadata.createTopic({ name: `${'a'.repeat(230)}-new-${i}`, numPartitions: 1, replicationFactor: 1 });
      const started = performance.now();
      let regexMs = -1;
      const pathological = heartbeat({ groupId: `rx-${i}`, memberId: 'r', subscribedTopicNames: null, subscribedTopicRegex: regex }, 1, other).then((r) => {
        regexMs = performance.now() - started;
        return r;
      });
      // The steady group heartbeats all along. Matching is sliced (other requests go in between);
      // compiling is not, so another group's heartbeat may wait for one compile (bounded by the
      // pattern limits: tens of milliseconds for the largest accepted program, more under load).
      const steadyMs: number[] = [];
      let answeredMeanwhile = 0;
      while (regexMs < 0) {
        const s = performance.now();
        await steadyBeat(members.keys().next().value!);
        steadyMs.push(performance.now() - s);
        if (regexMs < 0) answeredMeanwhile++;
      }
      const r = await pathological;
      assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
      assert.equal(r.memberEpoch, 1);
      assert.equal(r.assignment?.topicPartitions.length ?? 0, 0, 'no topic matches');
      console.log(
        `${regex.slice(0, 30)} over ${LONG_TOPICS + i + 2} topics (names of 232+ characters): answered in ${regexMs.toFixed(1)} ms; ` +
          `${answeredMeanwhile} heartbeats of another group answered meanwhile, the slowest in ${Math.max(...steadyMs).toFixed(1)} ms`,
      );
      assert.ok(regexMs < 5_000, `${regex}: ${regexMs} ms`);
      assert.ok(Math.max(...steadyMs) < 2_000, `other group's heartbeats: ${steadyMs.join(', ')} ms`);
    }
    // The steady group's topics did not change: its members are as they were.
    await assertUndisturbed('pathological regexes');
  } finally {
    other.close();
  }
});

test('group.consumer.max.size: a third member gets GROUP_MAX_SIZE_REACHED', async () => {
  const r = await heartbeat({ memberId: 'm3' });
  assert.equal(r.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
  assert.match(r.errorMessage ?? '', /maximum capacity of 2/);
  await assertUndisturbed('a join over the size limit');
});

test('joins missing required fields: INVALID_REQUEST with Kafka 4 messages', async () => {
  const cases: [Partial<HeartbeatBody>, string, number?][] = [
    [{ rebalanceTimeoutMs: -1 }, 'RebalanceTimeoutMs must be provided in first request.'],
    [{ topicPartitions: null }, 'TopicPartitions must be empty when (re-)joining.'],
    [{ subscribedTopicNames: null }, 'SubscribedTopicNames or SubscribedTopicRegex must be set in first request.'],
    [{ subscribedTopicRegex: 't' }, 'SubscribedTopicNames and SubscribedTopicRegex cannot be used together.'],
    [{ memberId: '' }, "MemberId can't be empty."],
    [{ memberEpoch: -3 }, 'MemberEpoch is invalid.'],
    [{ memberEpoch: -2, instanceId: null }, "InstanceId can't be null."],
    [{ instanceId: '' }, "InstanceId can't be empty."],
    [{ rackId: '' }, "RackId can't be empty."],
    [{ groupId: '' }, "GroupId can't be empty."],
  ];
  for (const [body, message, version] of cases) {
    const r = await heartbeat({ memberId: 'm3', ...body }, version);
    assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST, JSON.stringify(body));
    assert.equal(r.errorMessage, message);
  }
  await assertUndisturbed('malformed joins');
});
