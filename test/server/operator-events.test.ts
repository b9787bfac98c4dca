/**
 * What an operator looks for is logged at info: topics created and deleted, partitions added,
 * config changes, a group's rebalance (start, completion with generation, members, duration), a
 * member expiring, offsets expiring, segments deleted by retention.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/server/broker.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { createRootLogger } from '../../src/server/logger.js';
import { CoordinatorRuntime } from '../../src/coordinator/runtime/runtime.js';
import { GroupShard } from '../../src/coordinator/group/group-shard.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from '../../src/coordinator/group/records.js';
import { commitOffsets } from '../../src/coordinator/group/offsets.js';
import { MemoryLog } from '../coordinator/memory-log.js';
import { TEST_CONFIG } from '../coordinator/group/harness.js';
import { RawClient } from '../helpers/raw-client.js';
import { batchOf, produce } from './handlers/data-plane-helpers.js';
import { waitFor } from '../helpers/wait-for.js';

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

const until = <T>(what: string, fn: () => T | undefined, timeoutMs = 20_000) => waitFor(what, timeoutMs, fn);

test('topic, partition, config, rebalance, member expiry and retention events are logged at info', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-events-'));
  const lines: Line[] = [];
  const logger = createRootLogger('json', 'info', (t) => lines.push(JSON.parse(t) as Line));
  const config = buildBrokerConfig(
    new Map(
      Object.entries({
        listeners: 'PLAINTEXT://127.0.0.1:0',
        'log.dirs': dir,
        'group.initial.rebalance.delay.ms': '0',
        'group.min.session.timeout.ms': '100',
        'offsets.topic.num.partitions': '2',
        'log.retention.check.interval.ms': '3600000',
      }),
    ),
  );
  const broker = new Broker(config, logger);
  await broker.start();
  const find = (re: RegExp) => lines.find((l) => l.level === 30 && re.test(l.msg));
  try {
    const admin = broker.services.admin;
    await admin.topics.createTopic(
      { name: 'orders', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [{ name: 'segment.bytes', value: '1024' }] },
      false,
    );
    assert.ok(find(/^created topic orders with 1 partition\(s\), replication factor 1$/));
    await admin.topics.createPartitions('orders', 2, null, false);
    assert.equal(find(/^added partitions to topic orders: 1 -> 2$/)?.to, 2);
    await admin.configs.incrementalAlter(2, 'orders', [{ name: 'retention.ms', op: 0, value: '1' }], false);
    assert.deepEqual(find(/^configs of topic orders changed$/)?.configs, { 'segment.bytes': '1024', 'retention.ms': '1' });
    await admin.configs.incrementalAlter(4, '0', [{ name: 'sasl.jaas.config', op: 0, value: 'secret' }], false);
    const brokerChange = find(/^dynamic broker configs of broker 0 changed$/);
    assert.deepEqual(brokerChange?.configs, { 'sasl.jaas.config': '[hidden]' }, 'passwords are not logged');

    // Segments deleted by retention.
    const c = await RawClient.connect(broker.boundPorts().get('PLAINTEXT')!);
    for (let i = 0; i < 4; i++) await produce(c, 9, 'orders', 0, batchOf(['x'.repeat(600)], { ts: 1_000n }));
    c.close();
    assert.ok((await broker.services.logManager.runRetention()) > 0);
    assert.ok(find(/^deleting segment .* of orders-0 .* due to retention time 1ms breach$/), lines.map((l) => l.msg).join('\n'));

    // A rebalance: one member joins (started, completed), then expires (started, completed Empty).
    const groups = broker.services.groupCoordinator;
    await groups.ensureOffsetsTopic();
    await groups.loaded();
    let join = await groups.joinGroup({
      groupId: 'ops',
      memberId: '',
      groupInstanceId: null,
      sessionTimeoutMs: 300,
      rebalanceTimeoutMs: 1000,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      apiVersion: 3,
      clientId: 'c1',
      clientHost: '/127.0.0.1',
    });
    if (join.errorCode !== 0)
      join = await groups.joinGroup({
        groupId: 'ops',
        memberId: join.memberId,
        groupInstanceId: null,
        sessionTimeoutMs: 300,
        rebalanceTimeoutMs: 1000,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
        apiVersion: 4,
        clientId: 'c1',
        clientHost: '/127.0.0.1',
      });
    assert.equal(join.errorCode, 0);
    const started = find(/^preparing to rebalance group ops in state Empty with old generation 0 \(reason: new member .* joined\)$/);
    assert.ok(started);
    const completed = find(/^rebalance of group ops completed in \d+ ms: generation 1 with 1 member\(s\), protocol range$/);
    assert.deepEqual([completed?.generation, completed?.members, typeof completed?.durationMs], [1, 1, 'number']);
    await groups.syncGroup({
      groupId: 'ops',
      generationId: 1,
      memberId: join.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [],
    });
    // No heartbeats: the member expires after its 300 ms session.
    const expired = await until('member expiry', () =>
      find(/^member .* of group ops expired: no heartbeat within its session timeout \(300 ms\); removing it$/),
    );
    assert.equal(expired.memberId, join.memberId);
    const empty = await until('Empty generation', () => find(/^rebalance of group ops completed in \d+ ms: generation 2 is Empty/));
    assert.equal(empty.members, 0);

    await admin.topics.deleteTopic({ name: 'orders', topicId: null });
    assert.ok(find(/^deleted topic orders$/));
  } finally {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('expired offsets are logged with their count', async () => {
  const lines: { msg: string; offsets?: number }[] = [];
  const logger = { info: (obj: object, msg: string) => void lines.push({ ...obj, msg }) };
  let now = 1_000_000;
  const runtime = new CoordinatorRuntime<GroupShard, CoordinatorRecord>({
    log: new MemoryLog(),
    serde: { encode: encodeRecord, decode: decodeRecord },
    newShard: (ctx) => new GroupShard(ctx, { ...TEST_CONFIG, offsetsRetentionMs: 1000, offsetsRetentionCheckIntervalMs: 20 }, logger),
    clock: () => now,
  });
  await runtime.load(0);
  try {
    await runtime.write(0, (s, t) =>
      commitOffsets(
        s,
        {
          groupId: 'old',
          generationId: -1,
          memberId: '',
          groupInstanceId: null,
          retentionTimeMs: -1n,
          apiVersion: 9,
          topics: [
            {
              name: 't',
              partitions: [0, 1].map((p) => ({
                partitionIndex: p,
                committedOffset: 1n,
                committedLeaderEpoch: -1,
                commitTimestamp: -1n,
                committedMetadata: '',
              })),
            },
          ],
        },
        t,
      ),
    );
    now += 5000;
    const line = await until('expiry log', () => lines.find((l) => /^removed 2 expired offset\(s\) and 1 group\(s\) left with nothing$/.test(l.msg)));
    assert.equal(line.offsets, 2);
  } finally {
    runtime.close();
  }
});
