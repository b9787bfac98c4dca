/**
 * The __consumer_offsets formatters of kafka-console-consumer.sh besides the seed's classic one:
 * Kafka 3.9's JSON OffsetsMessageFormatter and GroupMetadataMessageFormatter (under both their
 * class names) and the classic GroupMetadataManager$GroupMetadataMessageFormatter.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Consumer, Producer } from '../../src/client/index.js';
import { startTestBroker } from '../helpers/broker.js';
import { runCli } from './helpers.js';

test('JSON and classic group-metadata formatters read what a group wrote', { timeout: 120000 }, async () => {
  const b = await startTestBroker({ 'offsets.topic.replication.factor': '1' });
  const bs = ['--bootstrap-server', b.bootstrap];
  try {
    const producer = new Producer({ bootstrapServers: b.bootstrap });
    for (let i = 0; i < 5; i++) await producer.send({ topic: 'fmt', value: `v${i}` });
    await producer.close();
    const consumer = new Consumer({ bootstrapServers: b.bootstrap, groupId: 'fmt-group', autoOffsetReset: 'earliest', enableAutoCommit: false });
    consumer.subscribe(['fmt']);
    let seen = 0;
    const deadline = Date.now() + 30000;
    while (seen < 5 && Date.now() < deadline) seen += (await consumer.poll(500)).length;
    assert.equal(seen, 5);
    await consumer.commitSync();
    await consumer.close();

    const read = (formatter: string) =>
      runCli('kafka-console-consumer', [
        ...bs,
        '--topic',
        '__consumer_offsets',
        '--from-beginning',
        '--timeout-ms',
        '3000',
        '--consumer-property',
        'exclude.internal.topics=false',
        '--formatter',
        formatter,
      ]);

    // The four reads run at once: each mostly waits out its --timeout-ms. A reader sees the
    // others' console-consumer-NNNNN groups, which every assertion below filters out.
    const jsonOffsetsFormatters = ['org.apache.kafka.tools.consumer.OffsetsMessageFormatter', 'kafka.tools.OffsetsMessageFormatter'];
    const jsonGroupsFormatter = 'org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter';
    const classicGroupsFormatter = 'kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter';
    const reads = new Map([...jsonOffsetsFormatters, jsonGroupsFormatter, classicGroupsFormatter].map((f) => [f, read(f)]));
    for (const name of jsonOffsetsFormatters) {
      const r = await reads.get(name)!;
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.split('\n').filter((l) => l !== '');
      const ours = lines.filter((l) => l.includes('"fmt-group"'));
      assert.ok(ours.length >= 1, `${name}: ${r.stdout}`);
      const rec = JSON.parse(ours.at(-1)!) as {
        key: { version: number; data: Record<string, unknown> };
        value: { version: number; data: Record<string, unknown> };
      };
      assert.deepEqual(rec.key, { version: 1, data: { group: 'fmt-group', topic: 'fmt', partition: 0 } });
      assert.equal(rec.value.data.offset, 5);
      assert.deepEqual(Object.keys(rec.value.data).slice(0, 1), ['offset']);
      assert.ok(!lines.some((l) => l.includes('"protocolType"')), 'group metadata records are left out');
    }

    const g = await reads.get(jsonGroupsFormatter)!;
    assert.equal(g.code, 0, g.stderr);
    const allGroupLines = g.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { key: { version: number; data: { group: string } }; value: { version: number; data: Record<string, unknown> } | null });
    assert.ok(
      allGroupLines.every((l) => l.key.version === 2),
      'offset commits are left out',
    );
    // The console consumers reading here are groups of their own (console-consumer-NNNNN).
    const groupLines = allGroupLines.filter((l) => l.key.data.group === 'fmt-group');
    assert.ok(groupLines.length >= 1, g.stdout);
    const withMembers = groupLines.find((l) => l.value && (l.value.data.members as unknown[]).length === 1);
    assert.ok(withMembers, g.stdout);
    assert.equal(withMembers.value!.data.protocolType, 'consumer');
    const member = (withMembers.value!.data.members as Record<string, unknown>[])[0]!;
    assert.equal(typeof member.subscription, 'string');
    assert.ok(Buffer.from(member.subscription as string, 'base64').length > 0);

    const classic = await reads.get(classicGroupsFormatter)!;
    assert.equal(classic.code, 0, classic.stderr);
    assert.match(
      classic.stdout,
      /^fmt-group::GroupMetadata\(groupId=fmt-group, generation=1, protocolType=Some\(consumer\), currentState=Stable, members=HashMap\((\S+) -> MemberMetadata\(memberId=\1, groupInstanceId=None, clientId=\S*, clientHost=\S+, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List\(\w[\w-]*\)\)\)\)$/m,
    );
  } finally {
    await b.stop();
  }
});
