import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { Admin, Consumer, Producer } from '../../src/client/index.js';
import { runCli } from './helpers.js';

test('kafka-consumer-groups: list, describe with lag, members, state, reset, delete-offsets, delete', { timeout: 90000 }, async () => {
  const b = await startTestBroker();
  const bs = ['--bootstrap-server', b.bootstrap];
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  const consumer = new Consumer({
    bootstrapServers: b.bootstrap,
    groupId: 'app',
    autoOffsetReset: 'earliest',
    clientId: 'app-client',
    enableAutoCommit: false,
  });
  try {
    await admin.createTopics([{ name: 'events', numPartitions: 2 }]);
    for (let i = 0; i < 10; i++) await producer.send({ topic: 'events', partition: i % 2, value: `e${i}` });
    consumer.subscribe(['events']);
    let n = 0;
    while (n < 6) n += (await consumer.poll(500)).length;
    await consumer.commitSync([
      [{ topic: 'events', partition: 0 }, { offset: 3n }],
      [{ topic: 'events', partition: 1 }, { offset: 5n }],
    ]);

    const list = await runCli('kafka-consumer-groups', ['--list', ...bs]);
    assert.equal(list.stdout, 'app\n');

    const desc = await runCli('kafka-consumer-groups', ['--describe', '--group', 'app', ...bs]);
    const lines = desc.stdout.split('\n').filter((l) => l !== '');
    assert.equal(desc.stdout.slice(0, 1), '\n');
    // Columns as Kafka computes them: GROUP and TOPIC at least 15 wide, PARTITION 10, offsets 15.
    assert.equal(
      lines[0]!.slice(0, 16 + 16 + 11 + 16 + 16 + 16),
      `${'GROUP'.padEnd(15)} ${'TOPIC'.padEnd(15)} ${'PARTITION'.padEnd(10)} ${'CURRENT-OFFSET'.padEnd(15)} ${'LOG-END-OFFSET'.padEnd(15)} ${'LAG'.padEnd(15)} `,
    );
    assert.match(lines[0]!, /^GROUP\s+TOPIC\s+PARTITION\s+CURRENT-OFFSET\s+LOG-END-OFFSET\s+LAG\s+CONSUMER-ID\s+HOST\s+CLIENT-ID$/);
    assert.match(lines[1]!, /^app\s+events\s+0\s+3\s+5\s+2\s+\S+\s+\S+\s+app-client$/);
    assert.match(lines[2]!, /^app\s+events\s+1\s+5\s+5\s+0\s+/);

    const members = await runCli('kafka-consumer-groups', ['--describe', '--members', '--verbose', '--group', 'app', ...bs]);
    // Kafka 4's layout: a classic group's members have no epochs or target ("-").
    assert.match(members.stdout, /#PARTITIONS\s+CURRENT-EPOCH\s+CURRENT-ASSIGNMENT\s+TARGET-EPOCH\s+TARGET-ASSIGNMENT/);
    assert.match(members.stdout, /app-client\s+2\s+-\s+events:0,1\s+-\s+-/);

    // Kafka 4's widths: GROUP at least 15, the coordinator text at least 25, strategy and state 20.
    const state = await runCli('kafka-consumer-groups', ['--describe', '--state', '--group', 'app', ...bs]);
    const coord = `127.0.0.1:${b.port}  (0)`;
    const w = Math.max(25, coord.length);
    assert.equal(
      state.stdout,
      `\n${'GROUP'.padEnd(15)} ${'COORDINATOR (ID)'.padEnd(w)} ${'ASSIGNMENT-STRATEGY'.padEnd(20)} ${'STATE'.padEnd(20)} #MEMBERS` +
        `\n${'app'.padEnd(15)} ${coord.padEnd(w)} ${'range'.padEnd(20)} ${'Stable'.padEnd(20)} 1\n`,
    );
    const listed = await runCli('kafka-consumer-groups', ['--list', '--state', ...bs]);
    assert.equal(listed.stdout, `${'GROUP'.padEnd(25)} ${'STATE'.padEnd(20)}\n${'app'.padEnd(25)} ${'Stable'.padEnd(20)}\n`);

    const busy = await runCli('kafka-consumer-groups', ['--reset-offsets', '--to-earliest', '--group', 'app', '--topic', 'events', '--execute', ...bs]);
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /can only be reset if the group 'app' is inactive/);

    await consumer.close();
    // An Empty group: the notice goes to stderr, the table (its offsets) to stdout.
    const empty = await runCli('kafka-consumer-groups', ['--describe', '--group', 'app', ...bs]);
    assert.equal(empty.stderr, "\nConsumer group 'app' has no active members.\n");
    assert.match(empty.stdout, /^\nGROUP\s+TOPIC/);
    const clamped = await runCli('kafka-consumer-groups', [
      '--reset-offsets',
      '--to-offset',
      '99',
      '--group',
      'app',
      '--topic',
      'events:0',
      '--dry-run',
      ...bs,
    ]);
    assert.match(clamped.stderr, /WARN New offset \(99\) is higher than latest offset for topic partition events-0\. Value will be set to 5/);
    assert.match(clamped.stdout, /app\s+events\s+0\s+5\s*\n/);
    const dry = await runCli('kafka-consumer-groups', ['--reset-offsets', '--shift-by', '-2', '--group', 'app', '--topic', 'events', '--dry-run', ...bs]);
    assert.match(dry.stdout, /app\s+events\s+0\s+1 *\n/);
    const exec = await runCli('kafka-consumer-groups', ['--reset-offsets', '--to-offset', '4', '--group', 'app', '--topic', 'events:1', '--execute', ...bs]);
    assert.equal(exec.code, 0, exec.stderr);
    const offsets = await admin.listGroupOffsets('app');
    assert.equal(offsets.get('events')!.get(1)!.offset, 4n);
    const exported = await runCli('kafka-consumer-groups', ['--reset-offsets', '--to-latest', '--all-topics', '--group', 'app', '--export', ...bs]);
    assert.equal(exported.stdout, 'events,0,5\nevents,1,5\n');

    const delOff = await runCli('kafka-consumer-groups', ['--delete-offsets', '--group', 'app', '--topic', 'events', ...bs]);
    assert.equal(delOff.code, 0, delOff.stdout + delOff.stderr);
    assert.match(delOff.stdout, /events\s+0\s+Successful/);

    const del = await runCli('kafka-consumer-groups', ['--delete', '--group', 'app', ...bs]);
    assert.equal(del.stdout, "Deletion of requested consumer groups ('app') was successful.\n");
    // A group with no members and no offsets prints no bare header.
    const lonely = new Consumer({ bootstrapServers: b.bootstrap, groupId: 'lonely', enableAutoCommit: false });
    lonely.subscribe(['events']);
    const until = Date.now() + 20000;
    while (lonely.assignment().length === 0 && Date.now() < until) await lonely.poll(200);
    assert.equal(lonely.assignment().length, 2);
    await lonely.close();
    const bare = await runCli('kafka-consumer-groups', ['--describe', '--group', 'lonely', ...bs]);
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(bare.stderr, "\nConsumer group 'lonely' has no active members.\n");
    assert.equal(bare.stdout, '', 'no header for a group with nothing to show');
    const gone = await runCli('kafka-consumer-groups', ['--describe', '--group', 'app', ...bs]);
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr, "kafka-consumer-groups.sh: Consumer group 'app' does not exist.\n");
  } finally {
    await consumer.close();
    await producer.close();
    await admin.close();
    await b.stop();
  }
});
