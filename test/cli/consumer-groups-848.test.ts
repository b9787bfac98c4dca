/**
 * bin/kafka-consumer-groups.sh --describe (offsets, --members --verbose, --state [--verbose])
 * over one broker holding a consumer-protocol (KIP-848) group of @platformatic/kafka and a
 * classic group of Fjord's consumer, as a user runs it, in Kafka 4's layout; and a reset of the
 * active consumer group refused. Needs `npx tsc -p tsconfig.json` first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import '../helpers/promise-with-resolvers.js';
import { Consumer as PlatformaticConsumer, stringDeserializers } from '@platformatic/kafka';
import { startTestBroker } from '../helpers/broker.js';
import { run } from '../helpers/run.js';
import { createTopic } from '../server/handlers/data-plane-helpers.js';
import { Admin, Consumer, Producer, type GroupDescription } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait-for.js';

const TOOL = fileURLToPath(new URL('../../bin/kafka-consumer-groups.sh', import.meta.url));
const TOPIC = 'orders848';
const NEW = 'kip848-app';
const CLASSIC = 'classic-app';

const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>) => waitFor(what, timeoutMs, probe, { pollMs: 100 });

test('kafka-consumer-groups --describe: a KIP-848 consumer group and a classic group, offsets, members, state', { timeout: 60_000 }, async () => {
  const b = await startTestBroker({ 'offsets.topic.num.partitions': '1' });
  const bs = ['--bootstrap-server', b.bootstrap];
  const tool = (...args: string[]) => run(TOOL, [...args, ...bs], { timeoutMs: 30_000 });
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  const classic = new Consumer({
    bootstrapServers: b.bootstrap,
    groupId: CLASSIC,
    autoOffsetReset: 'earliest',
    clientId: 'classic-client',
    enableAutoCommit: false,
  });
  const member = new PlatformaticConsumer({
    groupId: NEW,
    clientId: 'new-client',
    bootstrapBrokers: [b.bootstrap],
    deserializers: stringDeserializers,
    maxWaitTime: 100,
    groupProtocol: 'consumer',
  });
  let stream: Awaited<ReturnType<typeof member.consume>> | undefined;
  try {
    await createTopic(b, TOPIC, 3);
    for (let i = 0; i < 9; i++) await producer.send({ topic: TOPIC, partition: i % 3, value: `v${i}` });

    stream = await member.consume({ topics: [TOPIC], mode: 'earliest', autocommit: false });
    const consumed = (async () => {
      for await (const m of stream!) {
        try {
          await m.commit();
        } catch {}
      }
    })().catch(() => undefined);
    classic.subscribe([TOPIC]);
    let polled = 0;
    while (polled < 9) polled += (await classic.poll(500)).length;
    await classic.commitSync([0, 1, 2].map((partition) => [{ topic: TOPIC, partition }, { offset: 2n }] as const));

    // The consumer group settles: one member holding all three partitions, every record committed.
    const d: GroupDescription = await until('the KIP-848 group to settle with its offsets committed', 30_000, async () => {
      const [g] = await admin.describeConsumerGroups([NEW]);
      const committed = await admin.listGroupOffsets(NEW);
      const done = [0, 1, 2].every((p) => committed.get(TOPIC)?.get(p)?.offset === 3n);
      return g?.state === 'Stable' && g.members[0]?.assignment.length === 3 && done ? g : undefined;
    });
    assert.equal(d.type, 'Consumer');
    const m = d.members[0]!;
    const coord = `127.0.0.1:${b.port}  (0)`;

    const [offsets, members, state, stateVerbose, classicOffsets, classicMembers, classicState] = await Promise.all([
      tool('--describe', '--group', NEW),
      tool('--describe', '--members', '--verbose', '--group', NEW),
      tool('--describe', '--state', '--group', NEW),
      tool('--describe', '--state', '--verbose', '--group', NEW),
      tool('--describe', '--offsets', '--group', CLASSIC),
      tool('--describe', '--members', '--verbose', '--group', CLASSIC),
      tool('--describe', '--state', '--verbose', '--group', CLASSIC),
    ]);

    // Offsets: each partition with its owner (the consumer group's member) and no lag.
    assert.equal(offsets.code, 0, offsets.stderr);
    const rows = offsets.stdout.split('\n').filter((l) => l !== '');
    assert.match(rows[0]!, /^GROUP\s+TOPIC\s+PARTITION\s+CURRENT-OFFSET\s+LOG-END-OFFSET\s+LAG\s+CONSUMER-ID\s+HOST\s+CLIENT-ID$/);
    assert.deepEqual(
      rows.slice(1).map((r) => r.split(/\s+/)),
      [0, 1, 2].map((p) => [NEW, TOPIC, String(p), '3', '3', '0', m.memberId, m.clientHost, 'new-client']),
    );

    // Members --verbose: the member's epoch, its assignment and the target it moves to.
    assert.equal(members.code, 0, members.stderr);
    const memberLines = members.stdout.split('\n').filter((l) => l !== '');
    assert.match(
      memberLines[0]!,
      /^GROUP\s+CONSUMER-ID\s+HOST\s+CLIENT-ID\s+#PARTITIONS\s+CURRENT-EPOCH\s+CURRENT-ASSIGNMENT\s+TARGET-EPOCH\s+TARGET-ASSIGNMENT *$/,
    );
    assert.ok(m.memberEpoch! > 0 && d.targetAssignmentEpoch! > 0);
    assert.deepEqual(memberLines[1]!.trim().split(/\s+/), [
      NEW,
      m.memberId,
      m.clientHost,
      'new-client',
      '3',
      String(m.memberEpoch),
      `${TOPIC}:0,1,2`,
      String(d.targetAssignmentEpoch),
      `${TOPIC}:0,1,2`,
    ]);
    assert.equal(memberLines.length, 2);
    // Kafka pads the last column too (%-20s): the line is as wide as the widest assignment.
    assert.equal(memberLines[1]!.length, memberLines[0]!.length);

    // State: Kafka 4's widths (GROUP at least 15, coordinator at least 25, strategy and state 20).
    const head = (g: string, c: string, a: string, s: string) => `${g.padEnd(15)} ${c.padEnd(Math.max(25, coord.length))} ${a.padEnd(20)} ${s.padEnd(20)}`;
    assert.ok(d.protocol !== '', 'the group has a server-side assignor');
    assert.equal(
      state.stdout,
      `\n${head('GROUP', 'COORDINATOR (ID)', 'ASSIGNMENT-STRATEGY', 'STATE')} #MEMBERS\n${head(NEW, coord, d.protocol, 'Stable')} 1\n`,
    );
    assert.equal(
      stateVerbose.stdout,
      `\n${head('GROUP', 'COORDINATOR (ID)', 'ASSIGNMENT-STRATEGY', 'STATE')} ${'GROUP-EPOCH'.padEnd(15)} ${'TARGET-ASSIGNMENT-EPOCH'.padEnd(25)} #MEMBERS` +
        `\n${head(NEW, coord, d.protocol, 'Stable')} ${String(d.groupEpoch).padEnd(15)} ${String(d.targetAssignmentEpoch).padEnd(25)} 1\n`,
    );

    // The classic group through the same tool: DescribeGroups, no epochs ("-").
    assert.equal(classicOffsets.code, 0, classicOffsets.stderr);
    const classicRows = classicOffsets.stdout.split('\n').filter((l) => l !== '');
    assert.deepEqual(
      classicRows.slice(1).map((r) => r.split(/\s+/).slice(0, 6).concat(r.split(/\s+/).slice(-1))),
      [0, 1, 2].map((p) => [CLASSIC, TOPIC, String(p), '2', '3', '1', 'classic-client']),
    );
    const classicMemberLines = classicMembers.stdout.split('\n').filter((l) => l !== '');
    assert.match(classicMemberLines[0]!, /#PARTITIONS\s+CURRENT-EPOCH\s+CURRENT-ASSIGNMENT\s+TARGET-EPOCH\s+TARGET-ASSIGNMENT *$/);
    assert.deepEqual(classicMemberLines[1]!.trim().split(/\s+/).slice(3), ['classic-client', '3', '-', `${TOPIC}:0,1,2`, '-', '-']);
    assert.equal(
      classicState.stdout,
      `\n${head('GROUP', 'COORDINATOR (ID)', 'ASSIGNMENT-STRATEGY', 'STATE')} ${'GROUP-EPOCH'.padEnd(15)} ${'TARGET-ASSIGNMENT-EPOCH'.padEnd(25)} #MEMBERS` +
        `\n${head(CLASSIC, coord, 'range', 'Stable')} ${'-'.padEnd(15)} ${'-'.padEnd(25)} 1\n`,
    );

    // An active consumer group's offsets cannot be reset (DescribeGroups alone would call it Dead).
    const reset = await tool('--reset-offsets', '--to-earliest', '--group', NEW, '--topic', TOPIC, '--execute');
    assert.equal(reset.code, 1);
    assert.match(reset.stderr, /can only be reset if the group 'kip848-app' is inactive, but the current state is Stable\./);
    assert.equal((await admin.listGroupOffsets(NEW)).get(TOPIC)?.get(0)?.offset, 3n, 'the offsets were left alone');

    await stream.close();
    stream = undefined;
    await consumed;
  } finally {
    await stream?.close().catch(() => undefined);
    await member.close(true).catch(() => undefined);
    await classic.close().catch(() => undefined);
    await producer.close();
    await admin.close();
    await b.stop();
  }
});

test('kafka-consumer-groups --describe --state: a coordinator without ConsumerGroupDescribe is asked by DescribeGroups', { timeout: 60_000 }, async () => {
  const b = await startTestBroker({ 'group.coordinator.rebalance.protocols': 'classic', 'offsets.topic.num.partitions': '1' });
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  try {
    await createTopic(b, TOPIC, 1);
    // A simple group: offsets committed by the admin client, no members.
    await admin.alterGroupOffsets('simple', [{ topic: TOPIC, partition: 0, offset: 0n }]);
    const [d] = await admin.describeConsumerGroups(['simple']);
    assert.equal(d?.type, 'Classic');
    const res = await run(TOOL, ['--describe', '--state', '--verbose', '--group', 'simple', '--bootstrap-server', b.bootstrap], { timeoutMs: 30_000 });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, "\nConsumer group 'simple' has no active members.\n");
    assert.match(
      res.stdout,
      /^\nGROUP\s+COORDINATOR \(ID\)\s+ASSIGNMENT-STRATEGY\s+STATE\s+GROUP-EPOCH\s+TARGET-ASSIGNMENT-EPOCH\s+#MEMBERS\nsimple\s+127\.0\.0\.1:\d+  \(0\)\s+-\s+Empty\s+-\s+-\s+0\n$/,
    );
  } finally {
    await admin.close();
    await b.stop();
  }
});
