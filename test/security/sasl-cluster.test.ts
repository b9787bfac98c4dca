// Cluster mode with SASL_PLAINTEXT between brokers: the controller's requests, the replica
// fetchers and the transaction markers authenticate with the broker's own JAAS login
// (sasl.mechanism.inter.broker.protocol); a SCRAM user created through one broker
// authenticates on every broker, and so does a delegation token (kept in ZooKeeper).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, waitFor } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { kcat } from '../interop/kcat-helpers.js';
import { Admin } from '../../src/client/index.js';
import { Connection } from '../../src/client/connection.js';
import { alterUserScramCredentials } from '../../src/client/admin-scram.js';
import { createDelegationToken } from '../../src/client/admin-delegation-tokens.js';
import type { ClientSasl } from '../../src/security/client-security.js';

const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" user_broker="broker-secret" user_admin="admin-secret";';
const ADMIN: ClientSasl = { mechanism: 'PLAIN', username: 'admin', password: 'admin-secret' };

test('SASL_PLAINTEXT inter-broker listener: replication and the controller authenticate; SCRAM users work on every broker', { timeout: 240_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  if (!requirePeer(t, 'kcat')) return;
  const c = await Cluster.start({
    brokers: 2,
    listenerName: 'SASL_PLAINTEXT',
    props: {
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
      'offsets.topic.replication.factor': '2',
      'delegation.token.secret.key': 'cluster-token-secret',
    },
  });
  const admin = new Admin({ bootstrapServers: c.bootstrap(), security: { protocol: 'SASL_PLAINTEXT', sasl: ADMIN } });
  try {
    await waitFor('the topic to be created', 60_000, async () => {
      const res = await admin.createTopics([{ name: 'replicated', numPartitions: 2, replicationFactor: 2 }]);
      const err = res.get('replicated');
      return err === null || err === undefined || err.code === 36; // created now, or by an earlier try
    });
    // Both replicas in the ISR: followers fetched from leaders through the SASL listener.
    await waitFor('a full ISR on every partition', 60_000, async () => {
      const [tm] = await admin.describeTopics(['replicated']);
      return tm !== undefined && tm.partitions.length === 2 && tm.partitions.every((p) => p.leader >= 0 && p.isr.length === 2);
    });
    const sasl = ['-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=PLAIN', '-X', 'sasl.username=admin', '-X', 'sasl.password=admin-secret'];
    const p = await kcat(['-P', '-b', c.bootstrap(), ...sasl, '-t', 'replicated', '-X', 'acks=all'], 'a\nb\nc\nd\n');
    assert.equal(p.code, 0, p.stderr);

    // A SCRAM user created through broker 0 authenticates on broker 1 (and 0).
    const via0 = new Admin({ bootstrapServers: c.broker(0).bootstrap, security: { protocol: 'SASL_PLAINTEXT', sasl: ADMIN } });
    const done = await alterUserScramCredentials(via0.cluster, [{ user: 'alice', mechanism: 'SCRAM-SHA-512', op: 'upsert', password: 'alice-secret' }]);
    assert.equal(done.get('alice'), null);
    for (const b of [c.broker(1), c.broker(0)]) {
      const conn = await waitFor(`alice to authenticate on broker ${b.id}`, 30_000, async () =>
        Connection.connect('127.0.0.1', b.port, {
          clientId: 't',
          connectTimeoutMs: 5000,
          requestTimeoutMs: 5000,
          security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'alice-secret' } },
        }),
      );
      conn.close();
    }

    // A delegation token created through broker 0 authenticates on broker 1 (it learns it from ZooKeeper).
    const token = await createDelegationToken(via0.cluster, {});
    assert.equal(token.owner.name, 'admin');
    const conn = await waitFor('the token to authenticate on broker 1', 30_000, async () =>
      Connection.connect('127.0.0.1', c.broker(1).port, {
        clientId: 't',
        connectTimeoutMs: 5000,
        requestTimeoutMs: 5000,
        security: {
          protocol: 'SASL_PLAINTEXT',
          sasl: { mechanism: 'SCRAM-SHA-512', username: token.tokenId, password: token.hmac.toString('base64'), tokenAuth: true },
        },
      }),
    );
    conn.close();
    await via0.close();
  } finally {
    await admin.close();
    await c.stop();
  }
});
