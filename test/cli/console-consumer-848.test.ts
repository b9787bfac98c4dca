/**
 * The console tools with group.protocol=consumer (KIP-848) against one in-process broker, run
 * as a user runs them (bin/, child processes): kafka-console-consumer.sh joining by flag and by
 * --consumer.config, kafka-verifiable-consumer.sh --group-protocol consumer, and the refusals of
 * a bad protocol or a classic-only key. Fjord's consumer itself: test/client/consumer-protocol.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { run } from '../helpers/run.js';
import { Admin, Producer } from '../../src/client/index.js';

let b: TestBroker;
let admin: Admin;

before(async () => {
  b = await startTestBroker({
    'group.consumer.session.timeout.ms': '1500',
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

test('kafka-console-consumer.sh joins with group.protocol=consumer (flag and --consumer.config); kafka-verifiable-consumer.sh --group-protocol consumer', {
  timeout: 60000,
}, async () => {
  await admin.createTopics([{ name: 'cc', numPartitions: 2, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  const dir = await mkdtemp(join(tmpdir(), 'fjord-cc-'));
  try {
    await Promise.all(Array.from({ length: 4 }, (_, i) => producer.send({ topic: 'cc', partition: i % 2, value: `v${i}` })));
    const viaFlag = await run(
      'bin/kafka-console-consumer.sh',
      [
        '--bootstrap-server',
        b.bootstrap,
        '--topic',
        'cc',
        '--group',
        'cc-flag',
        '--from-beginning',
        '--max-messages',
        '4',
        '--consumer-property',
        'group.protocol=consumer',
      ],
      { timeoutMs: 30000 },
    );
    assert.equal(viaFlag.code, 0, viaFlag.stderr);
    assert.deepEqual(viaFlag.stdout.trim().split('\n').sort(), ['v0', 'v1', 'v2', 'v3']);
    const config = join(dir, 'consumer.properties');
    await writeFile(config, 'group.protocol=consumer\ngroup.remote.assignor=range\n');
    const viaFile = await run(
      'bin/kafka-console-consumer.sh',
      ['--bootstrap-server', b.bootstrap, '--topic', 'cc', '--group', 'cc-file', '--from-beginning', '--max-messages', '4', '--consumer.config', config],
      { timeoutMs: 30000 },
    );
    assert.equal(viaFile.code, 0, viaFile.stderr);
    assert.equal(viaFile.stdout.trim().split('\n').length, 4);
    // Both groups are consumer-protocol groups, with their offsets committed on close.
    const groups = await admin.listGroups();
    for (const g of ['cc-flag', 'cc-file']) {
      assert.equal(groups.find((x) => x.groupId === g)?.type, 'Consumer', `${g}: ${JSON.stringify(groups)}`);
      const offsets = await admin.listGroupOffsets(g);
      assert.deepEqual(
        [...offsets.get('cc')!.values()].map((o) => o.offset),
        [2n, 2n],
      );
    }
    const verifiable = await run(
      'bin/kafka-verifiable-consumer.sh',
      [
        '--bootstrap-server',
        b.bootstrap,
        '--topic',
        'cc',
        '--group-id',
        'vg848',
        '--group-protocol',
        'consumer',
        '--group-remote-assignor',
        'range',
        '--max-messages',
        '4',
      ],
      { timeoutMs: 30000 },
    );
    assert.equal(verifiable.code, 0, verifiable.stderr);
    const events = verifiable.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { name: string; partitions?: { count?: number }[] });
    assert.equal(events.find((e) => e.name === 'partitions_assigned')?.partitions?.length, 2);
    assert.equal(
      events.filter((e) => e.name === 'records_consumed').reduce((n, e) => n + (e.partitions ?? []).reduce((m, p) => m + (p.count ?? 0), 0), 0),
      4,
    );
    assert.equal(events.at(-1)?.name, 'shutdown_complete');
    const bad = await run('bin/kafka-console-consumer.sh', ['--bootstrap-server', b.bootstrap, '--topic', 'cc', '--consumer-property', 'group.protocol=nope'], {
      timeoutMs: 30000,
    });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /group\.protocol must be classic or consumer/);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
    // A classic-only key with the consumer protocol: refused as Java's consumer refuses it.
    const classicKey = await run(
      'bin/kafka-console-consumer.sh',
      ['--bootstrap-server', b.bootstrap, '--topic', 'cc', '--consumer-property', 'group.protocol=consumer', '--consumer-property', 'session.timeout.ms=10000'],
      { timeoutMs: 30000 },
    );
    assert.notEqual(classicKey.code, 0);
    assert.equal(classicKey.stderr.trim(), 'kafka-console-consumer.sh: session.timeout.ms cannot be set when group.protocol=CONSUMER');
  } finally {
    await producer.close();
    await rm(dir, { recursive: true, force: true });
  }
});
