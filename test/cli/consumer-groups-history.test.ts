/**
 * bin/kafka-consumer-groups.sh's offset-history options (issue 25), as a user runs them over
 * one broker: --describe --lag-time; --describe --history and --undo-reset over records written
 * with the codec (hours of history, alive runs) and over the coordinator's own records (a
 * consumer's commits, a reset by the tool and its undo). Needs `npx tsc -p tsconfig.json` first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestBroker } from '../helpers/broker.js';
import { run } from '../helpers/run.js';
import { Admin, Consumer, Producer } from '../../src/client/index.js';
import {
  encodeHistoryKey,
  encodeHistoryValue,
  historyPartitionFor,
  OFFSET_HISTORY_TOPIC,
  type HistoryValue,
} from '../../src/protocol/offset-history/history-record.js';
import { waitFor } from '../helpers/wait-for.js';

const TOOL = fileURLToPath(new URL('../../bin/kafka-consumer-groups.sh', import.meta.url));
const HOUR = 3_600_000;

const MINUTE = 60_000;

/** Polls `probe` until it gives a value, for at most 20 s. */
const until = <T>(what: string, probe: () => Promise<T | undefined>) => waitFor(what, 20_000, probe, { pollMs: 100 });

/** One history record of `group`, as the coordinator writes it. */
function historyRecord(group: string, partitions: number, timestamp: number, change: Partial<HistoryValue> & Pick<HistoryValue, 'topic' | 'partition'>) {
  const value: HistoryValue = {
    previousOffset: -1n,
    newOffset: -1n,
    leaderEpoch: -1,
    cause: 'commit',
    memberId: '',
    clientId: '',
    clientHost: '',
    generation: -1,
    ...change,
  };
  return {
    topic: OFFSET_HISTORY_TOPIC,
    partition: historyPartitionFor(group, partitions),
    key: encodeHistoryKey({ group }),
    value: encodeHistoryValue(value),
    timestamp,
  };
}

test('kafka-consumer-groups offset history: --lag-time, --history, --undo-reset', { timeout: 60_000 }, async () => {
  const b = await startTestBroker({ 'offsets.topic.num.partitions': '3', 'offsets.history.alive.interval.ms': '600000' });
  const tool = (...args: string[]) => run(TOOL, [...args, '--bootstrap-server', b.bootstrap], { timeoutMs: 30_000 });
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  // Writes history records of its own too (hours back): as a broker forwarding them does, with
  // Kafka's admin client id, the one an internal topic takes a Produce from.
  const producer = new Producer({ bootstrapServers: b.bootstrap, clientId: '__admin_client' });
  try {
    // Before any commit the history topic does not exist: the cluster keeps no history yet.
    const missing = await tool('--describe', '--group', 'app', '--history');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^kafka-consumer-groups\.sh: this cluster keeps no offset history: topic __consumer_offsets_history does not exist/);

    await admin.createTopics([{ name: 'events', numPartitions: 3 }]);
    // Partition 0: records written 3 h and 2 h ago; 1: one record an hour ago; 2: empty.
    const now = Date.now();
    await producer.send({ topic: 'events', partition: 0, value: 'a', timestamp: now - 3 * HOUR });
    await producer.send({ topic: 'events', partition: 0, value: 'b', timestamp: now - 2 * HOUR });
    await producer.send({ topic: 'events', partition: 1, value: 'c', timestamp: now - HOUR });
    // The cluster's first commit, by the tool: the history topic comes just after it, and the
    // undo command is printed all the same (the coordinator keeps a history).
    const csv = join(b.dir, 'lagging.csv');
    await writeFile(csv, 'events,0,1\nevents,1,1\nevents,2,0\n');
    const first = await tool('--reset-offsets', '--group', 'lagging', '--from-file', csv, '--execute');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /\nlagging +events +2 +0 *\n\nTo undo this reset: kafka-consumer-groups\.sh --bootstrap-server \S+ --undo-reset --group lagging --execute\n$/,
    );

    const [lag, misplaced] = await Promise.all([
      tool('--describe', '--group', 'lagging', '--lag-time'),
      tool('--describe', '--members', '--group', 'lagging', '--lag-time'),
    ]);
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
    assert.equal(misplaced.code, 1);
    assert.match(misplaced.stderr, /--lag-time goes with the offsets table/);

    await historyFromRecords(admin, producer, now, tool);
    await historyOfRealCommits(b.bootstrap, admin, producer, tool);
  } finally {
    await producer.close();
    await admin.close();
    await b.stop();
  }
});

type Tool = (...args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>;

/** --history and --undo-reset reading records written here with the codec. */
async function historyFromRecords(admin: Admin, producer: Producer, now: number, tool: Tool): Promise<void> {
  // The coordinator creates the topic (for the reset of 'lagging' above, just after answering it), with the offsets topic's 3 partitions.
  const historyTopic = await until('the history topic', () =>
    admin.describeTopics([OFFSET_HISTORY_TOPIC]).then(
      ([t]) => t,
      () => undefined,
    ),
  );
  assert.equal(historyTopic.partitions.length, 3);
  // A group whose records share app's partition: the tool keeps only app's.
  const neighbour = ['other', 'other1', 'other2', 'other3', 'other4', 'other5'].find((g) => historyPartitionFor(g, 3) === historyPartitionFor('app', 3))!;
  const t0 = now - 3 * HOUR;
  const consumer = { memberId: 'app-member-1', clientId: 'app-client', clientHost: '/127.0.0.1', generation: 4 };
  const records = [
    historyRecord('app', 3, t0, { topic: 'events', partition: 0, newOffset: 5n, ...consumer }),
    historyRecord('app', 3, t0 + MINUTE, { topic: 'events', partition: 1, newOffset: 7n, ...consumer }),
    historyRecord(neighbour, 3, t0 + MINUTE, { topic: 'events', partition: 1, newOffset: 1n }),
    ...[2, 3, 4].map((m) =>
      historyRecord('app', 3, t0 + m * MINUTE, { topic: 'events', partition: 0, previousOffset: 5n, newOffset: 5n, cause: 'alive', ...consumer }),
    ),
    // One reset: the records of one commit request, with one timestamp.
    historyRecord('app', 3, t0 + HOUR, { topic: 'events', partition: 0, previousOffset: 5n, newOffset: 0n, cause: 'reset', clientId: 'adminclient-1' }),
    historyRecord('app', 3, t0 + HOUR, { topic: 'events', partition: 1, previousOffset: 7n, newOffset: 0n, cause: 'reset', clientId: 'adminclient-1' }),
    historyRecord('app', 3, t0 + 2 * HOUR, { topic: 'events', partition: 0, previousOffset: 0n, newOffset: 2n, ...consumer }),
  ];
  for (const r of records) await producer.send(r);

  const iso = (ms: number) => new Date(ms).toISOString();
  // What only reads runs at once (each is a process start).
  const [all, recent, early, one, empty, badTime, unknown, stray, dry, atTime, noReset, mixed, twoGroups, zk] = await Promise.all([
    tool('--describe', '--group', 'app', '--history'),
    tool('--describe', '--group', 'app', '--history', '--from', '150m'),
    tool('--describe', '--group', 'app', '--history', '--from', iso(t0 + MINUTE), '--to', iso(t0 + 30 * MINUTE)),
    tool('--describe', '--group', 'app', '--history', '--topic', 'events:1'),
    tool('--describe', '--group', 'app', '--history', '--from', '1m'),
    tool('--describe', '--group', 'app', '--history', '--from', 'yesterday'),
    tool('--describe', '--group', 'nobody', '--history'),
    tool('--describe', '--group', 'app', '--from', '1h'),
    tool('--undo-reset', '--group', 'app', '--dry-run'),
    tool('--undo-reset', '--group', 'app', '--to-datetime', iso(t0 + 30_000), '--dry-run'),
    tool('--undo-reset', '--group', neighbour, '--dry-run'),
    tool('--undo-reset', '--group', 'app', '--to-earliest', '--dry-run'),
    tool('--describe', '--group', 'app', '--group', 'lagging', '--history'),
    run(TOOL, ['--zookeeper', '127.0.0.1:1', '--describe', '--group', 'app', '--history']),
  ]);
  assert.equal(all.code, 0, all.stderr);
  const lines = all.stdout.split('\n').filter((l) => l !== '');
  assert.equal(lines[0], `${'TIME'.padEnd(24)} ${'TOPIC'.padEnd(15)} ${'PARTITION'.padEnd(10)} ${'OLD -> NEW'.padEnd(20)} ${'CAUSE'.padEnd(10)} MEMBER/CLIENT`);
  const who = 'app-member-1/app-client';
  assert.match(lines[1]!, new RegExp(`^${iso(t0)} events +0 +- -> 5 +commit +${who}$`));
  assert.match(lines[2]!, new RegExp(`^${iso(t0 + MINUTE)} events +1 +- -> 7 +commit +${who}$`));
  // Three alive records in a row: one line, with their count and the last one's time.
  assert.match(lines[3]!, new RegExp(`^${iso(t0 + 2 * MINUTE)} events +0 += 5 +alive x3 +${who} \\(last ${iso(t0 + 4 * MINUTE)}\\)$`));
  assert.match(lines[4]!, new RegExp(`^${iso(t0 + HOUR)} events +0 +5 -> 0 +reset +-/adminclient-1$`));
  assert.match(lines[5]!, new RegExp(`^${iso(t0 + HOUR)} events +1 +7 -> 0 +reset +-/adminclient-1$`));
  assert.match(lines[6]!, new RegExp(`^${iso(t0 + 2 * HOUR)} events +0 +0 -> 2 +commit +${who}$`));
  assert.equal(lines.length, 7);

  // --from as a duration back from now, --to as a datetime, --topic t:p.
  assert.deepEqual(
    recent.stdout
      .split('\n')
      .filter((l) => / (reset|commit|alive)/.test(l))
      .map((l) => l.slice(0, 24)),
    [iso(t0 + HOUR), iso(t0 + HOUR), iso(t0 + 2 * HOUR)],
  );
  assert.equal(early.stdout.split('\n').filter((l) => l.startsWith(iso(t0).slice(0, 4))).length, 2, early.stdout);
  assert.equal(one.stdout.split('\n').filter((l) => l.includes(' events ')).length, 2, one.stdout);
  assert.doesNotMatch(one.stdout, / events +0 /);
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(empty.stdout, '');
  assert.match(empty.stderr, /no offset history in the given window/);

  // Bad input: one line, exit 1.
  assert.equal(badTime.code, 1);
  assert.equal(
    badTime.stderr,
    'kafka-consumer-groups.sh: --from "yesterday" is neither a datetime like 2026-01-31T12:00:00 nor a duration like 30m, 1h, 2d or P1DT2H\n',
  );
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, "kafka-consumer-groups.sh: Consumer group 'nobody' has no offset history.\n");
  assert.equal(stray.code, 1);
  assert.match(stray.stderr, /--from and --to go with --describe --history/);
  assert.equal(twoGroups.code, 1);
  assert.match(twoGroups.stderr, /--history takes one --group/);
  // The history is a topic read through a broker: not with --zookeeper (refused before connecting).
  assert.equal(zk.code, 1);
  assert.match(zk.stderr, /--history is not valid with --zookeeper/);

  // --undo-reset: back to before the last reset (events-0 at 5, events-1 at 7).
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^\nGROUP +TOPIC +PARTITION +NEW-OFFSET *\napp +events +0 +5 *\napp +events +1 +7 *\n$/);
  // At a time: events-0 had 5; events-1 had no offset yet (its history starts later): left alone.
  assert.equal(atTime.code, 0, atTime.stderr);
  assert.match(atTime.stdout, /\napp +events +0 +5 *\n$/);
  assert.match(atTime.stderr, /WARN events-1: had no committed offset at /);
  assert.equal(noReset.code, 1);
  assert.match(noReset.stderr, new RegExp(`the offset history of group '${neighbour}' has no reset to undo`));
  assert.equal(mixed.code, 1);
  assert.match(mixed.stderr, /--undo-reset takes --to-datetime .*not --to-earliest/);

  const undo = await tool('--undo-reset', '--group', 'app', '--execute');
  assert.equal(undo.code, 0, undo.stderr);
  const offsets = await admin.listGroupOffsets('app');
  assert.equal(offsets.get('events')?.get(0)?.offset, 5n);
  assert.equal(offsets.get('events')?.get(1)?.offset, 7n);
}

/** The coordinator's own records: a consumer's commit, a reset by the tool, its undo (refused while the consumer is in the group). */
async function historyOfRealCommits(bootstrap: string, admin: Admin, producer: Producer, tool: Tool): Promise<void> {
  await admin.createTopics([{ name: 'orders', numPartitions: 1 }]);
  for (let i = 0; i < 6; i++) await producer.send({ topic: 'orders', partition: 0, value: `o${i}` });
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    groupId: 'real',
    clientId: 'real-client',
    autoOffsetReset: 'earliest',
    enableAutoCommit: false,
  });
  try {
    consumer.subscribe(['orders']);
    const deadline = Date.now() + 20_000;
    while (consumer.assignment().length === 0 && Date.now() < deadline) await consumer.poll(200);
    await consumer.commitSync([[{ topic: 'orders', partition: 0 }, { offset: 4n }]]);
    const busy = await tool('--undo-reset', '--group', 'real', '--execute');
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /Assignments can only be reset if the group 'real' is inactive, but the current state is Stable\./);
  } finally {
    await consumer.close();
  }

  const reset = await tool('--reset-offsets', '--to-earliest', '--group', 'real', '--topic', 'orders', '--execute');
  assert.equal(reset.code, 0, reset.stderr);
  // Kafka's table, then the command that takes the reset back.
  assert.match(
    reset.stdout,
    /\nreal +orders +0 +0 *\n\nTo undo this reset: kafka-consumer-groups\.sh --bootstrap-server (\S+) --undo-reset --group real --execute\n$/,
  );
  assert.equal(/--bootstrap-server (\S+)/.exec(reset.stdout)![1], bootstrap);

  const undo = await tool('--undo-reset', '--group', 'real', '--execute');
  assert.equal(undo.code, 0, undo.stderr);
  assert.match(undo.stdout, /^\nGROUP +TOPIC +PARTITION +NEW-OFFSET *\nreal +orders +0 +4 *\n\nTo undo this reset: /);
  const offsets = await admin.listGroupOffsets('real');
  assert.equal(offsets.get('orders')?.get(0)?.offset, 4n);

  // The history: the consumer's commit, the reset, and the undo (itself a reset; written just after the undo's answer).
  const changes = await until('the undo in the history', async () => {
    const history = await tool('--describe', '--group', 'real', '--history');
    assert.equal(history.code, 0, history.stderr);
    const lines = history.stdout
      .split('\n')
      .filter((l) => / orders /.test(l))
      .map((l) => l.split(/ +/).slice(1).join(' '));
    return lines.length >= 3 ? lines : undefined;
  });
  assert.equal(changes.length, 3, changes.join('\n'));
  assert.match(changes[0]!, /^orders 0 - -> 4 commit \S+\/real-client$/);
  assert.match(changes[1]!, /^orders 0 4 -> 0 reset -\/\S+$/);
  assert.match(changes[2]!, /^orders 0 0 -> 4 reset -\/\S+$/);
}
