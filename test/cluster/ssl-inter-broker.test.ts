/**
 * Cluster mode with an SSL inter-broker listener that requires client certificates: the
 * controller's requests, the replica fetchers and produce acks=all all cross it, each broker
 * presenting its own key store as client certificate and checking the others with its trust store.
 * ZooKeeper's registration carries the SSL endpoint as Kafka writes it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { makeTestCerts, type TestCerts } from '../helpers/tls-certs.js';
import { waitForTopic, zkTopic } from './cluster-clients.js';
import { Connection } from '../../src/client/connection.js';
import { Admin } from '../../src/client/index.js';
import { Api } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeBatch } from '../../src/protocol/records/index.js';

let c: Cluster | undefined;
let certs: TestCerts | undefined;
before(async () => {
  if (!Cluster.available()) return;
  certs = makeTestCerts();
  c = await Cluster.start({
    brokers: 2,
    extraListeners: ['SSL'],
    props: {
      'security.inter.broker.protocol': 'SSL',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.broker.keystore,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': certs.caFile,
      'ssl.client.auth': 'required',
      'offsets.topic.replication.factor': '2',
    },
  });
});
after(async () => {
  await c?.stop();
  certs?.cleanup();
});

test('SSL inter-broker listener with client certificates: a replicated topic takes acks=all produces', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c || !certs) return;
  const cluster = c;
  // Registration as Kafka writes it: every endpoint, its protocol in the map, host/port of PLAINTEXT.
  const reg = JSON.parse((await (await cluster.zk()).getIfExists('/brokers/ids/0'))!.data.toString()) as Record<string, unknown>;
  const b0 = cluster.brokers[0]!;
  assert.deepEqual(reg.endpoints, [`PLAINTEXT://127.0.0.1:${b0.port}`, `SSL://127.0.0.1:${b0.extraPorts.get('SSL')!}`]);
  assert.deepEqual(reg.listener_security_protocol_map, { PLAINTEXT: 'PLAINTEXT', SSL: 'SSL' });
  assert.equal(reg.port, b0.port);

  const me = certs.client('producer', '/CN=producer');
  const security = { protocol: 'SSL' as const, tls: { ca: certs.ca, cert: me.cert, key: me.key } };
  const admin = new Admin({ bootstrapServers: `127.0.0.1:${b0.extraPorts.get('SSL')!}`, security });
  try {
    // Two partitions: one is led by the broker that is not the controller, which CreateTopics asks
    // over SSL whether it serves it before answering (REQUEST_TIMED_OUT if it could not ask).
    const created = await admin.createTopics([{ name: 'ssl-rep', numPartitions: 2, replicationFactor: 2, configs: { 'min.insync.replicas': '2' } }]);
    assert.equal(created.get('ssl-rep'), null);
  } finally {
    await admin.close();
  }
  const topic = await waitForTopic(cluster, 'ssl-rep');
  const leader = cluster.brokers[topic.partitions[0]!.leader]!;
  // Both replicas in sync: the follower fetched over SSL.
  await cluster.waitFor('both replicas in the ISR', 60_000, async () => (await zkTopic(cluster, 'ssl-rep'))?.partitions[0]?.isr.length === 2);
  const conn = await Connection.connect('127.0.0.1', leader.extraPorts.get('SSL')!, {
    clientId: 'ssl-test',
    connectTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    security,
  });
  try {
    for (let i = 0; i < 3; i++) {
      const batch = encodeBatch({
        records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(`v${i}`), headers: [] }],
        baseTimestamp: BigInt(Date.now()),
      });
      const res = await conn.send(Api.Produce, {
        acks: -1,
        timeoutMs: 15_000,
        topicData: [{ name: 'ssl-rep', partitionData: [{ index: 0, records: batch }] }],
      });
      const p = res.responses[0]!.partitionResponses[0]!;
      assert.equal(p.errorCode, ErrorCode.NONE, `produce ${i}`);
      assert.equal(p.baseOffset, BigInt(i));
    }
  } finally {
    conn.close();
  }
});
