/**
 * The KIP-848 APIs on the wire against one broker: ConsumerGroupHeartbeat v0 (member id from the
 * coordinator) and v1, ConsumerGroupDescribe, OffsetCommit v9 / OffsetFetch v9 member-epoch
 * checks, classic APIs on a consumer group id; and a broker without `consumer` in
 * group.coordinator.rebalance.protocols does not advertise them. Config bounds as Kafka 4.
 */
import { test } from 'node:test';
import { rm } from 'node:fs/promises';
import assert from 'node:assert/strict';
import { startTestBroker } from '../../../helpers/broker.js';
import { RawClient } from '../../../helpers/raw-client.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  ConsumerGroupDescribeRequestCodec,
  ConsumerGroupDescribeResponseCodec,
  ConsumerGroupHeartbeatRequestCodec,
  ConsumerGroupHeartbeatResponseCodec,
  DescribeGroupsRequestCodec,
  DescribeGroupsResponseCodec,
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  JoinGroupRequestCodec,
  JoinGroupResponseCodec,
  ListGroupsRequestCodec,
  ListGroupsResponseCodec,
  OffsetCommitRequestCodec,
  OffsetCommitResponseCodec,
  OffsetFetchRequestCodec,
  OffsetFetchResponseCodec,
} from '../../../../src/protocol/messages/index.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../../../src/security/authorizer/acl-model.js';
import { defaultBrokerConfig } from '../../../../src/server/config/build-broker-config.js';

test('ConsumerGroupHeartbeat, ConsumerGroupDescribe and the member-epoch checks of OffsetCommit/OffsetFetch v9 on the wire', async () => {
  const b = await startTestBroker({ 'offsets.topic.num.partitions': '1' });
  const c = await RawClient.connect(b.port);
  try {
    await b.broker.services.metadata.createTopic({ name: 't', numPartitions: 2, replicationFactor: 1 });
    await b.broker.services.replicaManager.syncTopic('t');
    const fc = await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 4, { keyType: 0, coordinatorKeys: ['g'] });
    assert.equal(fc.coordinators[0]!.errorCode, ErrorCode.NONE);
    await b.broker.services.groupCoordinator.loaded();
    const hb = (v: number, body: Parameters<typeof ConsumerGroupHeartbeatRequestCodec.write>[1]) =>
      c.request(68, ConsumerGroupHeartbeatRequestCodec, ConsumerGroupHeartbeatResponseCodec, v, { groupId: 'g', ...body });
    const v0 = await hb(0, { memberId: '', memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['t'], topicPartitions: [] });
    assert.equal(v0.errorCode, ErrorCode.NONE, v0.errorMessage ?? '');
    assert.ok(v0.memberId);
    assert.equal(v0.memberEpoch, 1);
    assert.equal(v0.heartbeatIntervalMs, 5_000);
    const topicId = b.broker.services.metadata.topic('t')!.topicId;
    assert.deepEqual(v0.assignment?.topicPartitions, [{ topicId, partitions: [0, 1] }]);
    const v1 = await hb(1, {
      memberId: 'client-made',
      memberEpoch: 0,
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['t'],
      topicPartitions: [],
      serverAssignor: 'range',
    });
    assert.equal(v1.errorCode, ErrorCode.NONE, v1.errorMessage ?? '');
    assert.equal(v1.memberId, 'client-made');
    const unknown = await hb(1, {
      memberId: 'x',
      memberEpoch: 0,
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['t'],
      topicPartitions: [],
      serverAssignor: 'nope',
    });
    assert.equal(unknown.errorCode, ErrorCode.UNSUPPORTED_ASSIGNOR);

    const seen: [string, number][] = [];
    b.broker.services.groupCoordinator.forEachGroup((id, members) => seen.push([id, members]));
    assert.deepEqual(seen, [['g', 2]], 'the consumer lag metrics see the group and its members');

    const d = await c.request(69, ConsumerGroupDescribeRequestCodec, ConsumerGroupDescribeResponseCodec, 0, { groupIds: ['g', 'g', 'absent'] });
    assert.equal(d.groups.length, 2);
    assert.equal(d.groups[0]!.errorCode, ErrorCode.NONE);
    assert.equal(d.groups[0]!.groupEpoch, 2);
    assert.equal(d.groups[0]!.assignorName, 'range', 'the assignor the members ask for');
    assert.deepEqual(d.groups[0]!.members.map((m) => m.memberId).sort(), [v0.memberId, 'client-made'].sort());
    assert.equal(d.groups[1]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);

    const commit = (memberId: string, epoch: number) =>
      c.request(8, OffsetCommitRequestCodec, OffsetCommitResponseCodec, 9, {
        groupId: 'g',
        generationIdOrMemberEpoch: epoch,
        memberId,
        groupInstanceId: null,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
    assert.equal((await commit(v0.memberId!, 1)).topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    assert.equal((await commit(v0.memberId!, 5)).topics[0]!.partitions[0]!.errorCode, ErrorCode.STALE_MEMBER_EPOCH);
    const fetch = (memberEpoch: number) =>
      c.request(9, OffsetFetchRequestCodec, OffsetFetchResponseCodec, 9, {
        groups: [{ groupId: 'g', memberId: v0.memberId, memberEpoch, topics: null }],
        requireStable: false,
      });
    const ok = await fetch(1);
    assert.equal(ok.groups[0]!.errorCode, ErrorCode.NONE);
    assert.equal(ok.groups[0]!.topics[0]!.partitions[0]!.committedOffset, 3n);
    assert.equal((await fetch(4)).groups[0]!.errorCode, ErrorCode.STALE_MEMBER_EPOCH);

    const join = await c.request(11, JoinGroupRequestCodec, JoinGroupResponseCodec, 5, {
      groupId: 'g',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    // The consumer group takes a classic member in (KIP-848 migration): first, as KIP-394, its id.
    assert.equal(join.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    const described = await c.request(15, DescribeGroupsRequestCodec, DescribeGroupsResponseCodec, 5, { groups: ['g'], includeAuthorizedOperations: false });
    // Kafka 4 below DescribeGroups v6: a consumer group is not a classic one, so it is Dead.
    assert.equal(described.groups[0]!.errorCode, ErrorCode.NONE);
    assert.equal(described.groups[0]!.groupState, 'Dead');
    assert.deepEqual(described.groups[0]!.members, []);
    const listed = await c.request(16, ListGroupsRequestCodec, ListGroupsResponseCodec, 4, { statesFilter: [] });
    assert.deepEqual(
      listed.groups.map((g) => [g.groupId, g.protocolType, g.groupState]),
      [['g', 'consumer', 'Reconciling']],
    );
  } finally {
    c.close();
    await b.stop();
  }
});

test('without consumer in group.coordinator.rebalance.protocols the KIP-848 APIs are not advertised; bad consumer group timeouts are refused', async () => {
  const b = await startTestBroker({ 'group.coordinator.rebalance.protocols': 'classic' });
  const c = await RawClient.connect(b.port);
  try {
    const res = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    const keys = res.apiKeys.map((k) => k.apiKey);
    assert.ok(keys.includes(11) && !keys.includes(68) && !keys.includes(69));
  } finally {
    c.close();
    await b.stop();
  }
  const d = defaultBrokerConfig({});
  assert.deepEqual(d.groupCoordinatorRebalanceProtocols, ['classic', 'consumer']);
  assert.equal(d.groupConsumerSessionTimeoutMs, 45_000);
  assert.equal(d.groupConsumerHeartbeatIntervalMs, 5_000);
  assert.throws(() => defaultBrokerConfig({ 'group.consumer.session.timeout.ms': '1000' }), /between group.consumer.min.session.timeout.ms/);
  assert.throws(
    () =>
      defaultBrokerConfig({
        'group.consumer.heartbeat.interval.ms': '9000',
        'group.consumer.max.heartbeat.interval.ms': '60000',
        'group.consumer.session.timeout.ms': '9000',
        'group.consumer.min.session.timeout.ms': '1000',
      }),
    /must be less than group.consumer.session.timeout.ms/,
  );
  assert.throws(() => defaultBrokerConfig({ 'group.coordinator.rebalance.protocols': 'classic,bogus' }));
});

test('a restarted broker resumes the consumer group from __consumer_offsets: same epochs, no new assignment', async () => {
  const props = { 'offsets.topic.num.partitions': '1' };
  let b = await startTestBroker(props);
  const dir = b.dir;
  let c = await RawClient.connect(b.port);
  const hb = (client: RawClient, body: Parameters<typeof ConsumerGroupHeartbeatRequestCodec.write>[1]) =>
    client.request(68, ConsumerGroupHeartbeatRequestCodec, ConsumerGroupHeartbeatResponseCodec, 1, { groupId: 'resumed', ...body });
  try {
    await b.broker.services.metadata.createTopic({ name: 'r', numPartitions: 3, replicationFactor: 1 });
    await b.broker.services.replicaManager.syncTopic('r');
    await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 4, { keyType: 0, coordinatorKeys: ['resumed'] });
    await b.broker.services.groupCoordinator.loaded();
    const joined = await hb(c, { memberId: 'm1', memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['r'], topicPartitions: [] });
    assert.equal(joined.errorCode, ErrorCode.NONE, joined.errorMessage ?? '');
    c.close();
    await b.stop({ keepDir: true });
    b = await startTestBroker(props, dir);
    c = await RawClient.connect(b.port);
    await b.broker.services.groupCoordinator.loaded();
    const again = await hb(c, { memberId: 'm1', memberEpoch: joined.memberEpoch, topicPartitions: joined.assignment!.topicPartitions });
    assert.equal(again.errorCode, ErrorCode.NONE, again.errorMessage ?? '');
    assert.equal(again.memberEpoch, joined.memberEpoch);
    assert.equal(again.assignment, null, 'the same assignment: nothing to send');
  } finally {
    c.close();
    await b.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('ACLs: READ on the group, and DESCRIBE on every topic subscribed to by name (else TOPIC_AUTHORIZATION_FAILED)', async () => {
  const b = await startTestBroker({ 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer', 'offsets.topic.num.partitions': '1' });
  const c = await RawClient.connect(b.port);
  const allow = (resourceType: ResourceType, name: string, operation: AclOperation, patternType = PatternType.LITERAL) => ({
    pattern: { resourceType, name, patternType },
    entry: { principal: 'User:ANONYMOUS', host: '*', operation, permissionType: AclPermissionType.ALLOW },
  });
  try {
    await b.broker.services.metadata.createTopic({ name: 'seen-1', numPartitions: 1, replicationFactor: 1 });
    await b.broker.services.authorizer!.create([
      allow(ResourceType.GROUP, 'g', AclOperation.ALL),
      allow(ResourceType.TOPIC, 'seen-', AclOperation.DESCRIBE, PatternType.PREFIXED),
    ]);
    await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 4, { keyType: 0, coordinatorKeys: ['g'] });
    await b.broker.services.groupCoordinator.loaded();
    const hb = (groupId: string, topics: string[]) =>
      c.request(68, ConsumerGroupHeartbeatRequestCodec, ConsumerGroupHeartbeatResponseCodec, 1, {
        groupId,
        memberId: 'm',
        memberEpoch: 0,
        rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: topics,
        topicPartitions: [],
      });
    assert.equal((await hb('other', ['seen-1'])).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal((await hb('g', ['seen-1', 'hidden'])).errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    assert.equal((await hb('g', ['seen-1'])).errorCode, ErrorCode.NONE);
  } finally {
    c.close();
    await b.stop();
  }
});
