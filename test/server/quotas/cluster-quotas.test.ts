/**
 * Client quotas in ZooKeeper mode: `kafka-configs.sh --zookeeper` writes /config/users and
 * /config/clients with a /config/changes notification, the broker re-reads them, and the quota
 * applies to a connection that was already open; AlterClientQuotas through the broker lands in
 * the same znodes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requirePeer } from '../../helpers/peers.js';
import { startZooKeeper, zkGet } from '../../helpers/zookeeper.js';
import { Broker } from '../../../src/server/broker.js';
import { buildBrokerConfig } from '../../../src/server/config/index.js';
import { silentLogger } from '../../../src/server/logger.js';
import { RawClient } from '../../helpers/raw-client.js';
import { runCli } from '../../cli/helpers.js';
import { batchOf, produce } from '../handlers/data-plane-helpers.js';
import { Admin } from '../../../src/client/index.js';
import { waitFor } from '../../helpers/wait-for.js';

const until = (what: string, timeoutMs: number, probe: () => boolean | Promise<boolean>) => waitFor(what, timeoutMs, probe, { pollMs: 100 });

test('kafka-configs --zookeeper quotas reach a running connection; AlterClientQuotas writes the znodes', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zk = await startZooKeeper();
  const dir = await mkdtemp(join(tmpdir(), 'fjord-quota-zk-'));
  const broker = new Broker(
    buildBrokerConfig(
      new Map(
        Object.entries({
          'broker.id': '0',
          listeners: 'PLAINTEXT://127.0.0.1:0',
          'log.dirs': dir,
          'zookeeper.connect': zk.connect,
          'zookeeper.session.timeout.ms': '10000',
          'offsets.topic.replication.factor': '1',
          'quota.window.num': '2',
        }),
      ),
    ),
    silentLogger(),
  );
  let c: RawClient | undefined;
  let admin: Admin | undefined;
  try {
    await broker.start();
    const port = broker.boundPorts().get('PLAINTEXT')!;
    admin = new Admin({ bootstrapServers: `127.0.0.1:${port}`, connectTimeoutMs: 10_000 });
    await admin.createTopics([{ name: 'zq', numPartitions: 1, replicationFactor: 1 }]);
    c = await RawClient.connect(port);
    await until(
      'the topic to be writable',
      30_000,
      async () => (await produce(c!, 9, 'zq', 0, batchOf(['warm']))).responses[0]!.partitionResponses[0]!.errorCode === 0,
    );
    assert.equal((await produce(c, 9, 'zq', 0, batchOf(['x'.repeat(3000)]))).throttleTimeMs, 0);

    const tool = await runCli('kafka-configs', [
      '--zookeeper',
      zk.connect,
      '--alter',
      '--entity-type',
      'users',
      '--entity-name',
      'ANONYMOUS',
      '--entity-type',
      'clients',
      '--entity-name',
      'raw-client',
      '--add-config',
      'producer_byte_rate=1000',
    ]);
    assert.equal(tool.stdout, "Completed Updating config for entity: user-principal 'ANONYMOUS', client-id 'raw-client'.\n", tool.stderr);
    assert.equal(await zkGet(zk.port, '/config/users/ANONYMOUS/clients/raw-client'), '{"version":1,"config":{"producer_byte_rate":"1000"}}');
    await until(
      'the broker to re-read the entity',
      30_000,
      () => broker.services.clientEntities.get('users/ANONYMOUS/clients/raw-client').producer_byte_rate === '1000',
    );
    const throttled = await produce(c, 9, 'zq', 0, batchOf(['x'.repeat(3000)]));
    assert.ok(throttled.throttleTimeMs > 0, 'the open connection is throttled by the new quota');

    const describe = await runCli('kafka-configs', [
      '--zookeeper',
      zk.connect,
      '--describe',
      '--entity-type',
      'users',
      '--entity-name',
      'ANONYMOUS',
      '--entity-type',
      'clients',
    ]);
    assert.equal(describe.stdout, "Configs for user-principal 'ANONYMOUS', client-id 'raw-client' are producer_byte_rate=1000\n", describe.stderr);

    await admin.alterClientQuotas([{ entity: [{ entityType: 'client-id', entityName: null }], ops: [{ key: 'consumer_byte_rate', value: 5000 }] }]);
    assert.equal(await zkGet(zk.port, '/config/clients/<default>'), '{"version":1,"config":{"consumer_byte_rate":"5000"}}');
  } finally {
    c?.close();
    await admin?.close();
    await broker.stop();
    await zk.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
