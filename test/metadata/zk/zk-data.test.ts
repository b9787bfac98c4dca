/**
 * Kafka's znode JSON, byte for byte: every encoder is compared with the string a Kafka broker or
 * tool writes (as zkCli shows it), and every decoder reads Kafka's strings, including older and
 * newer versions' extra or missing fields.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BrokerIdZNode,
  ConfigChangeNotificationZNode,
  ConfigEntityZNode,
  FeatureZNode,
  IsrChangeNotificationZNode,
  PartitionStateZNode,
  PreferredReplicaElectionZNode,
  ProducerIdBlockZNode,
  ReassignPartitionsZNode,
  TopicZNode,
} from '../../../src/metadata/zk/zk-data.js';
import { configEntityPath, consumerOffsetPath, deleteTopicPath, partitionStatePath, sequenceNumber, topicPath } from '../../../src/metadata/zk/zk-paths.js';
import { ConsumerOffsetZNode } from '../../../src/metadata/zk/zk-consumer-znodes.js';

const b = (s: string): Buffer => Buffer.from(s);

test('topic znode: version 3 with topic id, as Kafka 2.8+ writes it', () => {
  const golden =
    '{"partitions":{"0":[0,2,3],"1":[2,3,0],"2":[3,0,2]},"topic_id":"aSFJVxF7SIaTCptmWn_GgA","adding_replicas":{},"removing_replicas":{},"version":3}';
  const t = {
    topicId: 'aSFJVxF7SIaTCptmWn_GgA',
    partitions: new Map([
      [0, [0, 2, 3]],
      [1, [2, 3, 0]],
      [2, [3, 0, 2]],
    ]),
    addingReplicas: new Map<number, number[]>(),
    removingReplicas: new Map<number, number[]>(),
  };
  assert.equal(TopicZNode.encode(t).toString(), golden);
  assert.deepEqual(TopicZNode.decode('t', b(golden)), t);
  // Partitions come back in numeric order whatever order the JSON lists them in.
  const v1 = TopicZNode.decode('t', b('{"version":1,"partitions":{"10":[1],"2":[0,1],"0":[1,0]}}'));
  assert.deepEqual([...v1.partitions.keys()], [0, 2, 10]);
  assert.equal(v1.topicId, undefined);
  assert.equal(v1.addingReplicas.size, 0);
  const v2 = TopicZNode.decode('t', b('{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}}'));
  assert.deepEqual(v2.addingReplicas.get(0), [3]);
  assert.deepEqual(v2.removingReplicas.get(0), [1]);
  // Only partitions with replicas moving are listed under adding/removing.
  const moving = TopicZNode.encode({
    topicId: 'x',
    partitions: new Map([
      [0, [1, 2, 3]],
      [1, [2]],
    ]),
    addingReplicas: new Map([
      [0, [3]],
      [1, []],
    ]),
    removingReplicas: new Map(),
  });
  assert.equal(moving.toString(), '{"partitions":{"0":[1,2,3],"1":[2]},"topic_id":"x","adding_replicas":{"0":[3]},"removing_replicas":{},"version":3}');
  assert.throws(() => TopicZNode.decode('t', b('{"partitions":{"0":["a"]}}')), /malformed \/brokers\/topics\/t znode/);
  assert.equal(topicPath('t'), '/brokers/topics/t');
});

test('partition state znode, with leader_recovery_state only when not recovered', () => {
  const golden = '{"controller_epoch":20,"leader":1,"version":1,"leader_epoch":2,"isr":[1,0]}';
  const s = { controllerEpoch: 20, leader: 1, leaderEpoch: 2, isr: [1, 0] };
  assert.equal(PartitionStateZNode.encode(s).toString(), golden);
  assert.deepEqual(PartitionStateZNode.decode(b(golden)), { ...s, leaderRecoveryState: 0 });
  assert.equal(PartitionStateZNode.encode({ ...s, leaderRecoveryState: 0 }).toString(), golden);
  assert.equal(
    PartitionStateZNode.encode({ ...s, leaderRecoveryState: 1 }).toString(),
    '{"controller_epoch":20,"leader":1,"version":1,"leader_epoch":2,"isr":[1,0],"leader_recovery_state":1}',
  );
  assert.equal(
    PartitionStateZNode.decode(b('{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":3,"isr":[2],"leader_recovery_state":1}')).leaderRecoveryState,
    1,
  );
  assert.throws(() => PartitionStateZNode.decode(b('{"leader":1,"isr":[1]}')), /leader_epoch/);
  assert.equal(partitionStatePath('t', 3), '/brokers/topics/t/partitions/3/state');
});

test('config entity and config change notification', () => {
  assert.equal(ConfigEntityZNode.encode({}).toString(), '{"version":1,"config":{}}');
  assert.equal(
    ConfigEntityZNode.encode({ 'retention.ms': '1000', 'cleanup.policy': 'compact' }).toString(),
    '{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}',
  );
  assert.deepEqual(ConfigEntityZNode.decode(b('{"version":1,"config":{"retention.ms":"1000"}}')), { 'retention.ms': '1000' });
  assert.deepEqual(ConfigEntityZNode.decode(Buffer.alloc(0)), {});
  assert.deepEqual(ConfigEntityZNode.decode(b('{"version":1}')), {});
  assert.equal(configEntityPath('brokers', '<default>'), '/config/brokers/<default>');

  assert.equal(ConfigChangeNotificationZNode.encode('topics', 'bigdata').toString(), '{"version":2,"entity_path":"topics/bigdata"}');
  assert.deepEqual(ConfigChangeNotificationZNode.decode(b('{"version":2,"entity_path":"brokers/<default>"}')), {
    entityType: 'brokers',
    entityName: '<default>',
  });
  assert.deepEqual(ConfigChangeNotificationZNode.decode(b('{"version":2,"entity_path":"users/alice/clients/c1"}')), {
    entityType: 'users',
    entityName: 'alice/clients/c1',
  });
  assert.deepEqual(ConfigChangeNotificationZNode.decode(b('{"version":1,"entity_type":"topics","entity_name":"t"}')), {
    entityType: 'topics',
    entityName: 't',
  });
  // Groups' configs (Kafka 4's GROUP config resource) are announced as groups/<group>.
  assert.deepEqual(ConfigChangeNotificationZNode.decode(b('{"version":2,"entity_path":"groups/g"}')), { entityType: 'groups', entityName: 'g' });
  assert.throws(() => ConfigChangeNotificationZNode.decode(b('{"version":2,"entity_path":"widgets/w"}')), /malformed/);
  assert.equal(sequenceNumber('config_change_0000000012'), 12);
  assert.equal(sequenceNumber('other'), -1);
});

test('admin intents: delete marker, reassignment, preferred election; ISR change notification', () => {
  assert.equal(deleteTopicPath('t'), '/admin/delete_topics/t');
  const r = [
    { topic: 't', partition: 0, replicas: [1, 2] },
    { topic: 'u', partition: 3, replicas: [0] },
  ];
  const rGolden = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]},{"topic":"u","partition":3,"replicas":[0]}]}';
  assert.equal(ReassignPartitionsZNode.encode(r).toString(), rGolden);
  assert.deepEqual(ReassignPartitionsZNode.decode(b(rGolden)), r);
  assert.throws(() => ReassignPartitionsZNode.decode(b('{"version":1,"partitions":[{"topic":"t","partition":0}]}')), /malformed/);

  const ps = [
    { topic: 't', partition: 0 },
    { topic: 't', partition: 1 },
  ];
  const pGolden = '{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":1}]}';
  assert.equal(PreferredReplicaElectionZNode.encode(ps).toString(), pGolden);
  assert.deepEqual(PreferredReplicaElectionZNode.decode(b(pGolden)), ps);
  assert.equal(IsrChangeNotificationZNode.encode(ps).toString(), pGolden);
  assert.deepEqual(IsrChangeNotificationZNode.decode(b(pGolden)), ps);
  assert.throws(() => IsrChangeNotificationZNode.decode(b('{"version":1}')), /isr_change_notification/);
});

test('producer id block, feature znode, legacy consumer offsets, broker registration key order', () => {
  const pGolden = '{"version":1,"broker":0,"block_start":"0","block_end":"999"}';
  assert.equal(ProducerIdBlockZNode.encode({ brokerId: 0, start: 0n, end: 999n }).toString(), pGolden);
  assert.deepEqual(ProducerIdBlockZNode.decode(b(pGolden)), { brokerId: 0, start: 0n, end: 999n });
  assert.equal(ProducerIdBlockZNode.decode(Buffer.alloc(0)), undefined);
  assert.equal(
    ProducerIdBlockZNode.decode(b('{"version":1,"broker":2,"block_start":"9223372036854774807","block_end":"9223372036854775806"}'))!.end,
    9223372036854775806n,
  );

  assert.equal(FeatureZNode.encode({ version: 1, status: 1, features: {} }).toString(), '{"features":{},"version":1,"status":1}');
  assert.equal(
    FeatureZNode.encode({ version: 2, status: 1, features: { 'metadata.version': 7 } }).toString(),
    '{"features":{"metadata.version":{"max_version_level":7}},"version":2,"status":1}',
  );
  assert.deepEqual(FeatureZNode.decode(b('{"features":{"f":{"max_version_level":3,"min_version_level":1}},"version":1,"status":0}')), {
    version: 1,
    status: 0,
    features: { f: 3 },
  });
  assert.throws(() => FeatureZNode.decode(b('{"features":{},"version":9,"status":1}')), /malformed/);

  assert.equal(consumerOffsetPath('console-consumer-90976', 'bigdata', 0), '/consumers/console-consumer-90976/offsets/bigdata/0');
  assert.equal(ConsumerOffsetZNode.encode(1n).toString(), '1');
  assert.equal(ConsumerOffsetZNode.decode(b('1')), 1n);

  const reg = { id: 0, endpoints: [{ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: 'h', port: 9092 }], rack: 'r1', timestampMs: 1 };
  assert.equal(
    BrokerIdZNode.encode(reg).toString(),
    '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://h:9092"],"rack":"r1","jmx_port":-1,"port":9092,"host":"h","version":5,"timestamp":"1"}',
  );
  assert.equal(
    BrokerIdZNode.encode({ ...reg, rack: null }).toString(),
    '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://h:9092"],"jmx_port":-1,"port":9092,"host":"h","version":5,"timestamp":"1"}',
  );
  // Kafka 1.x-2.6 (version 4) registrations, keys in another order, jmx_port set, host null.
  const v4 = BrokerIdZNode.decode(
    1001,
    b(
      '{"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":["SSL://k0:9092"],"rack":"TC-I-2","jmx_port":9091,"host":null,"timestamp":"1537365146054","port":-1,"version":4}',
    ),
  );
  assert.deepEqual(v4, {
    id: 1001,
    endpoints: [{ listenerName: 'SSL', securityProtocol: 'SSL', host: 'k0', port: 9092 }],
    rack: 'TC-I-2',
    timestampMs: 1537365146054,
  });
});
