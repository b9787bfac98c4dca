/**
 * Dynamic broker configs in cluster mode live where Kafka keeps them, /config/brokers/<id> and
 * /config/brokers/<default> in ZooKeeper, and every change is announced under /config/changes:
 * a cluster default altered through one broker is described by the other, a per-broker value
 * written by `kafka-configs.sh --zookeeper` reaches the broker it names (and its running logs),
 * and a restarted broker reads them back from ZooKeeper, not from a local file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requirePeer } from '../helpers/peers.js';
import { startZooKeeper, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { Broker } from '../../src/server/broker.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { Admin, ConfigResourceType } from '../../src/client/index.js';
import { DYNAMIC_BROKER_CONFIG_FILE } from '../../src/server/admin/dynamic-broker-configs.js';
import { runCli } from '../cli/helpers.js';
import { RawClient } from '../helpers/raw-client.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  UpdateFeaturesRequestCodec,
  UpdateFeaturesResponseCodec,
} from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { waitFor } from '../helpers/wait-for.js';

const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>) => waitFor(what, timeoutMs, probe, { pollMs: 100 });

function brokerAt(id: number, dir: string, zk: ZooKeeperServer): Broker {
  const raw = new Map(
    Object.entries({
      'broker.id': String(id),
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'log.dirs': dir,
      'zookeeper.connect': zk.connect,
      'zookeeper.session.timeout.ms': '10000',
      'offsets.topic.replication.factor': '1',
      'controlled.shutdown.retry.backoff.ms': '200',
    }),
  );
  return new Broker(buildBrokerConfig(raw), silentLogger());
}

async function described(admin: Admin, broker: string, key: string): Promise<{ value: string | null; source: number } | undefined> {
  const entries = await admin.describeConfigs(ConfigResourceType.Broker, broker, [key]);
  const e = entries.find((x) => x.name === key);
  return e ? { value: e.value, source: e.source } : undefined;
}

test('dynamic broker configs are kept in ZooKeeper and followed by every broker', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zk = await startZooKeeper();
  const dirs = [await mkdtemp(join(tmpdir(), 'fjord-bc-')), await mkdtemp(join(tmpdir(), 'fjord-bc-'))];
  const brokers = dirs.map((d, id) => brokerAt(id, d, zk));
  const admins: Admin[] = [];
  try {
    await Promise.all(brokers.map((b) => b.start()));
    for (const b of brokers) admins.push(new Admin({ bootstrapServers: `127.0.0.1:${b.boundPorts().get('PLAINTEXT')}`, connectTimeoutMs: 10_000 }));

    // A cluster default altered through broker 0 is in ZooKeeper and described by broker 1.
    await admins[0]!.alterConfigs(ConfigResourceType.Broker, '', [{ name: 'log.retention.ms', op: 'set', value: '7200000' }]);
    const defaults = await runCli('kafka-configs', ['--zookeeper', zk.connect, '--describe', '--entity-type', 'brokers', '--entity-default']);
    assert.equal(defaults.code, 0, defaults.stderr);
    assert.match(defaults.stdout, /Configs for default brokers are log\.retention\.ms=7200000/);
    const seen = await until('broker 1 to describe the cluster default', 30_000, async () => {
      const e = await described(admins[1]!, '1', 'log.retention.ms');
      return e?.value === '7200000' ? e : undefined;
    });
    assert.equal(seen.source, 3, 'DYNAMIC_DEFAULT_BROKER_CONFIG');

    // A per-broker value written by the --zookeeper tool reaches broker 1, and its running logs.
    await admins[0]!.createTopics([{ name: 'cfg', numPartitions: 1, replicationFactor: 1, replicaAssignment: [[1]] }]);
    const tool = await runCli('kafka-configs', [
      '--zookeeper',
      zk.connect,
      '--alter',
      '--entity-type',
      'brokers',
      '--entity-name',
      '1',
      '--add-config',
      'log.segment.bytes=2000000',
    ]);
    assert.equal(tool.code, 0, tool.stderr);
    assert.match(tool.stdout, /Completed Updating config for entity: brokers '1'\./);
    await until("broker 1's log to run with the new segment size", 30_000, async () =>
      brokers[1]!.services.replicaManager.getPartition('cfg', 0)?.log.config.segmentBytes === 2_000_000 ? true : undefined,
    );
    const own = await described(admins[1]!, '1', 'log.segment.bytes');
    assert.deepEqual(own, { value: '2000000', source: 2 }, 'DYNAMIC_BROKER_CONFIG');
    assert.notEqual((await described(admins[0]!, '0', 'log.segment.bytes'))?.value, '2000000', 'broker 0 keeps its own');

    // A value the broker would refuse is refused by the tool too, in one line.
    const bad = await runCli('kafka-configs', [
      '--zookeeper',
      zk.connect,
      '--alter',
      '--entity-type',
      'brokers',
      '--entity-name',
      '1',
      '--add-config',
      'broker.id=7',
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr.trim(), /^[^\n]*Cannot update these configs dynamically: Set\(broker\.id\)[^\n]*$/);

    // A custom property (cleanup.policy is a topic key, not a broker key) is kept, as Kafka keeps it.
    await admins[1]!.alterConfigs(ConfigResourceType.Broker, '1', [{ name: 'cleanup.policy', op: 'set', value: 'compact' }]);
    assert.deepEqual(await described(admins[1]!, '1', 'cleanup.policy'), { value: null, source: 2 }, 'custom: sensitive, DYNAMIC_BROKER_CONFIG');

    // Feature flags as Kafka 3.9 in ZooKeeper mode: none supported, none finalized, the epoch
    // /feature's version on every broker; UpdateFeatures served by the controller only.
    const ports = brokers.map((b) => b.boundPorts().get('PLAINTEXT')!);
    const controller = await until('a controller', 30_000, async () => {
      const i = brokers.findIndex((b) => b.services.isActiveController?.());
      return i >= 0 ? i : undefined;
    });
    for (const [i, port] of ports.entries()) {
      const raw = await RawClient.connect(port);
      try {
        const v = await until(`broker ${i} to read /feature`, 30_000, async () => {
          const r = await raw.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
          return r.finalizedFeaturesEpoch >= 0n ? r : undefined;
        });
        assert.deepEqual([v.supportedFeatures, v.finalizedFeatures, v.finalizedFeaturesEpoch], [[], [], 0n]);
        const u = await raw.request(57, UpdateFeaturesRequestCodec, UpdateFeaturesResponseCodec, 1, {
          timeoutMs: 1000,
          featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 2, upgradeType: 1 }],
          validateOnly: false,
        });
        if (i === controller)
          assert.deepEqual(
            [u.errorCode, u.results.map((r) => [r.feature, r.errorCode])],
            [ErrorCode.NONE, [['transaction.version', ErrorCode.INVALID_REQUEST]]],
          );
        else assert.deepEqual([u.errorCode, u.results], [ErrorCode.NOT_CONTROLLER, []]);
      } finally {
        raw.close();
      }
    }
    const featureTool = await runCli('kafka-features', ['--bootstrap-server', `127.0.0.1:${ports[1 - controller]}`, 'describe']);
    assert.deepEqual([featureTool.code, featureTool.stdout], [0, '']);

    // Not written to the local file; a restart reads ZooKeeper.
    assert.equal(existsSync(join(dirs[1]!, DYNAMIC_BROKER_CONFIG_FILE)), false);
    await admins[1]!.close();
    admins.pop();
    await brokers[1]!.stop();
    brokers[1] = brokerAt(1, dirs[1]!, zk);
    await brokers[1].start();
    admins.push(new Admin({ bootstrapServers: `127.0.0.1:${brokers[1].boundPorts().get('PLAINTEXT')}`, connectTimeoutMs: 10_000 }));
    assert.equal((await described(admins[1]!, '1', 'log.segment.bytes'))?.value, '2000000');
    assert.equal((await described(admins[1]!, '1', 'log.retention.ms'))?.value, '7200000');
    assert.deepEqual(await described(admins[1]!, '1', 'cleanup.policy'), { value: null, source: 2 }, 'the custom property survived the restart');
  } finally {
    for (const a of admins) await a.close().catch(() => undefined);
    for (const b of brokers) await b.stop().catch(() => undefined);
    await zk.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
});
