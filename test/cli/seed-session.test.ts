/**
 * The seed's session end to end, with the real tools as separate processes: create `bigdata`,
 * produce, consume in the background in a console-consumer group, read __consumer_offsets with
 * the classic formatter, kill the consumer, produce more, restart it in the same group and see
 * it continue from the committed offsets with nothing skipped or repeated.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker } from '../helpers/broker.js';
import { LineCollector, exited, runCli, spawnCli } from './helpers.js';

const OFFSET_LINE = /^\[(console-consumer-\d{5}),bigdata,([01])\]::\[OffsetMetadata\[(\d+),NO_METADATA\],CommitTime (\d+),ExpirationTime (\d+)\]$/;

test('the seed session: topics, console producer/consumer, __consumer_offsets, resume after a restart', { timeout: 120000 }, async () => {
  const retentionMinutes = 1440;
  const b = await startTestBroker({ 'offsets.retention.minutes': String(retentionMinutes), 'offsets.topic.replication.factor': '1' });
  const dir = await mkdtemp(join(tmpdir(), 'fjord-seed-'));
  const bs = ['--bootstrap-server', b.bootstrap];
  const children: ReturnType<typeof spawnCli>[] = [];
  try {
    const created = await runCli('kafka-topics', ['--create', '--topic', 'bigdata', ...bs, '--partitions', '2', '--replication-factor', '1']);
    assert.equal(created.stdout, 'Created topic bigdata.\n', created.stderr);

    // The seed uses the older --broker-list flag.
    const p1 = await runCli('kafka-console-producer', ['--broker-list', b.bootstrap, '--topic', 'bigdata'], { input: 'hello\nworld\nthree\n' });
    assert.equal(p1.code, 0, p1.stderr);

    const consumer = spawnCli('kafka-console-consumer', [...bs, '--topic', 'bigdata', '--from-beginning']);
    children.push(consumer);
    const out = new LineCollector(consumer);
    await out.waitFor((l) => l.length >= 3, 20000, 'the first three messages');
    assert.deepEqual([...out.lines].sort(), ['hello', 'three', 'world']);

    const props = join(dir, 'consumer.properties');
    await writeFile(props, 'exclude.internal.topics=false\n');
    const offsetsReader = spawnCli('kafka-console-consumer', [
      '--topic',
      '__consumer_offsets',
      ...bs,
      '--formatter',
      'kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter',
      '--consumer.config',
      props,
      '--from-beginning',
    ]);
    children.push(offsetsReader);
    const commits = new LineCollector(offsetsReader);
    // Two auto-commits (5 s apart), each one line per partition.
    await commits.waitFor((l) => l.filter((x) => OFFSET_LINE.test(x)).length >= 4, 30000, 'two rounds of auto-commits');
    const parsed = commits.lines
      .filter((x) => OFFSET_LINE.test(x))
      .map((x) => {
        const m = OFFSET_LINE.exec(x)!;
        return { group: m[1]!, partition: Number(m[2]), offset: Number(m[3]), commit: Number(m[4]), expire: Number(m[5]) };
      });
    assert.equal(new Set(parsed.map((p) => p.group)).size, 1, 'one console-consumer group');
    const group = parsed[0]!.group;
    for (const p of parsed) assert.equal(p.expire - p.commit, retentionMinutes * 60000);
    const rounds = [...new Set(parsed.map((p) => p.commit))].sort();
    assert.ok(rounds.length >= 2);
    for (const r of rounds.slice(0, 2))
      assert.deepEqual(
        parsed
          .filter((p) => p.commit === r)
          .map((p) => p.partition)
          .sort(),
        [0, 1],
      );
    const gap = rounds[1]! - rounds[0]!;
    assert.ok(gap >= 4500 && gap <= 6500, `auto-commit interval ~5000 ms, was ${gap}`);
    const committed = parsed.filter((p) => p.commit === rounds[rounds.length - 1]);
    assert.equal(
      committed.reduce((n, p) => n + p.offset, 0),
      3,
      'committed offsets cover the three messages',
    );

    // Kill the consumer (it commits on the way out), produce more, restart it in the same group.
    consumer.kill('SIGTERM');
    assert.equal(await exited(consumer), 0);
    const p2 = await runCli('kafka-console-producer', [...bs, '--topic', 'bigdata'], { input: 'four\nfive\nsix\nseven\n' });
    assert.equal(p2.code, 0, p2.stderr);
    // --timeout-ms makes it exit by itself once idle, so everything it would print is in.
    const again = spawnCli('kafka-console-consumer', [...bs, '--topic', 'bigdata', '--group', group, '--from-beginning', '--timeout-ms', '4000']);
    children.push(again);
    const out2 = new LineCollector(again);
    assert.equal(await exited(again), 0);
    assert.deepEqual([...out2.lines].sort(), ['five', 'four', 'seven', 'six'], 'continues from the committed offsets');
    if (process.env.SEED_PRINT) console.log(commits.lines.join('\n'));
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    await b.stop();
  }
});
