/**
 * ACLs in a two-broker ZooKeeper cluster. Inter-broker traffic is PLAINTEXT here, so brokers
 * reach each other as User:ANONYMOUS, like every client: Kafka requires the brokers' principal to
 * be allowed CLUSTER_ACTION (usually as a super user). Making User:ANONYMOUS a super user would
 * allow every client everything, so the bootstrap ACL written to ZooKeeper before the brokers
 * start (kafka-acls.sh --authorizer-properties) allows User:ANONYMOUS from 127.0.0.1 the cluster
 * operations only (ClusterAction for the controller's requests, follower fetches and markers;
 * Alter/Describe/Create for this test's admin); topics stay protected. An ACL added through broker
 * 0 is then enforced by broker 1.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { runCli } from '../cli/helpers.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { Admin } from '../../src/client/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';

test('cluster: inter-broker requests pass with the bootstrap ACL, clients are checked, an ACL added on broker 0 holds on broker 1', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const c = await Cluster.start({
    brokers: 2,
    props: { 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer', 'offsets.topic.replication.factor': '2' },
    beforeBrokers: async (zkConnect) => {
      const r = await runCli('kafka-acls', [
        '--authorizer-properties',
        `zookeeper.connect=${zkConnect}`,
        '--add',
        '--allow-principal',
        'User:ANONYMOUS',
        '--allow-host',
        '127.0.0.1',
        '--operation',
        'ClusterAction',
        '--operation',
        'Alter',
        '--operation',
        'Describe',
        '--operation',
        'Create',
        '--cluster',
      ]);
      assert.equal(r.code, 0, r.stderr);
    },
  });
  const admin0 = new Admin({ bootstrapServers: c.bootstrap([0]) });
  const conns: Connection[] = [];
  try {
    const created = await admin0.createTopics([{ name: 'orders', numPartitions: 2, replicationFactor: 2 }]);
    assert.equal(created.get('orders'), null);
    const conn1 = await Connection.connect('127.0.0.1', c.broker(1).port, { clientId: 't', connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
    conns.push(conn1);
    const metadataOn1 = async (): Promise<number> =>
      (await conn1.send(Api.Metadata, { topics: [{ name: 'orders' }], allowAutoTopicCreation: false })).topics[0]!.errorCode;
    assert.equal(await metadataOn1(), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const all = await conn1.send(Api.Metadata, { topics: null });
    assert.deepEqual(
      all.topics.map((x) => x.name),
      [],
      'no topic visible without DESCRIBE',
    );

    const errors = await admin0.createAcls([
      {
        pattern: { resourceType: 2, name: 'orders', patternType: 3 },
        entry: { principal: 'User:ANONYMOUS', host: '*', operation: 4 /* WRITE */, permissionType: 3 },
      },
    ]);
    assert.deepEqual(errors, [null]);
    await c.waitFor('broker 1 to follow the ACL change', 20_000, async () => (await metadataOn1()) === ErrorCode.NONE);

    // acks=all through the leader: the follower's fetches (CLUSTER_ACTION) replicate it.
    const meta = await conn1.send(Api.Metadata, { topics: [{ name: 'orders' }] });
    const leader = meta.topics[0]!.partitions.find((p) => p.partitionIndex === 0)!.leaderId;
    const connL = await Connection.connect('127.0.0.1', c.broker(leader).port, { clientId: 't', connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
    conns.push(connL);
    const { batchOf } = await import('../server/handlers/data-plane-helpers.js');
    const produced = await connL.send(Api.Produce, {
      acks: -1,
      timeoutMs: 15_000,
      topicData: [{ name: 'orders', partitionData: [{ index: 0, records: batchOf(['a']) }] }],
    });
    assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    const fetched = await connL.send(Api.Fetch, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1000,
      topics: [{ topic: 'orders', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1000 }] }],
    });
    assert.equal(fetched.responses[0]!.partitions[0]!.errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'WRITE does not grant READ');
  } finally {
    for (const x of conns) x.close();
    await admin0.close();
    await c.stop();
  }
});
