/**
 * bin/kafka-consumer-groups.sh's offset-history options (issue 25), as a user runs them over
 * one broker: --describe --lag-time. Needs `npx tsc -p tsconfig.json` first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startTestBroker } from '../helpers/broker.js';
import { run } from '../helpers/run.js';
import { Admin, Producer } from '../../src/client/index.js';

const TOOL = fileURLToPath(new URL('../../bin/kafka-consumer-groups.sh', import.meta.url));
const HOUR = 3_600_000;

test('kafka-consumer-groups offset history: --lag-time', { timeout: 60_000 }, async () => {
  const b = await startTestBroker({ 'offsets.topic.num.partitions': '1' });
  const tool = (...args: string[]) => run(TOOL, [...args, '--bootstrap-server', b.bootstrap], { timeoutMs: 30_000 });
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  try {
    await admin.createTopics([{ name: 'events', numPartitions: 3 }]);
    // Partition 0: records written 3 h and 2 h ago; 1: one record an hour ago; 2: empty.
    const now = Date.now();
    await producer.send({ topic: 'events', partition: 0, value: 'a', timestamp: now - 3 * HOUR });
    await producer.send({ topic: 'events', partition: 0, value: 'b', timestamp: now - 2 * HOUR });
    await producer.send({ topic: 'events', partition: 1, value: 'c', timestamp: now - HOUR });
    await admin.alterGroupOffsets('lagging', [
      { topic: 'events', partition: 0, offset: 1n },
      { topic: 'events', partition: 1, offset: 1n },
      { topic: 'events', partition: 2, offset: 0n },
    ]);

    const lag = await tool('--describe', '--group', 'lagging', '--lag-time');
    assert.equal(lag.code, 0, lag.stderr);
    const lines = lag.stdout.split('\n').filter((l) => l !== '');
    // LAG-TIME is one more 15-wide column after LAG; the member columns follow as without it.
    assert.equal(
      lines[0],
      `${'GROUP'.padEnd(15)} ${'TOPIC'.padEnd(15)} ${'PARTITION'.padEnd(10)} ${'CURRENT-OFFSET'.padEnd(15)} ${'LOG-END-OFFSET'.padEnd(15)} ` +
        `${'LAG'.padEnd(15)} ${'LAG-TIME'.padEnd(15)} ${'CONSUMER-ID'.padEnd(15)} ${'HOST'.padEnd(15)} CLIENT-ID`,
    );
    // The first record not consumed of partition 0 is offset 1, written 2 h ago.
    assert.match(lines[1]!, /^lagging\s+events\s+0\s+1\s+2\s+1\s+2h00m\s+-\s+-\s+-$/);
    // Partition 1 is at its end, partition 2 has no record: nothing to wait for.
    assert.match(lines[2]!, /^lagging\s+events\s+1\s+1\s+1\s+0\s+-\s+-\s+-\s+-$/);
    assert.match(lines[3]!, /^lagging\s+events\s+2\s+0\s+0\s+0\s+-\s+-\s+-\s+-$/);

    // The record at the committed offset deleted (below the log start): "-", not an error.
    await admin.deleteRecords([{ topic: 'events', partition: 0, offset: 2n }]);
    const gone = await tool('--describe', '--group', 'lagging', '--lag-time');
    assert.equal(gone.code, 0, gone.stderr);
    assert.match(gone.stdout, /\nlagging\s+events\s+0\s+1\s+2\s+1\s+-\s+-/);
    // Without --lag-time the table is Kafka's.
    const plain = await tool('--describe', '--group', 'lagging');
    assert.doesNotMatch(plain.stdout, /LAG-TIME/);
    const misplaced = await tool('--describe', '--members', '--group', 'lagging', '--lag-time');
    assert.equal(misplaced.code, 1);
    assert.match(misplaced.stderr, /--lag-time goes with the offsets table/);
  } finally {
    await producer.close();
    await admin.close();
    await b.stop();
  }
});
