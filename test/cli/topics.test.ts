import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { runCli } from './helpers.js';

test('kafka-topics: create, duplicate, list, describe, alter, delete, and clean errors', async () => {
  const b = await startTestBroker();
  const bs = ['--bootstrap-server', b.bootstrap];
  try {
    const created = await runCli('kafka-topics', ['--create', '--topic', 'bigdata', ...bs, '--partitions', '2', '--replication-factor', '1']);
    assert.equal(created.stdout, 'Created topic bigdata.\n');
    assert.equal(created.code, 0);

    const dup = await runCli('kafka-topics', ['--create', '--topic', 'bigdata', ...bs, '--partitions', '2']);
    assert.equal(dup.code, 1);
    assert.equal(dup.stderr, "kafka-topics.sh: Topic 'bigdata' already exists.\n");
    const quiet = await runCli('kafka-topics', ['--create', '--if-not-exists', '--topic', 'bigdata', ...bs]);
    assert.equal(quiet.code, 0);

    await runCli('kafka-topics', ['--create', '--topic', 'other', ...bs, '--config', 'retention.ms=1000']);
    const list = await runCli('kafka-topics', ['--list', ...bs]);
    assert.deepEqual(list.stdout.trim().split('\n'), ['bigdata', 'other']);

    const desc = await runCli('kafka-topics', ['--describe', '--topic', 'bigdata', ...bs]);
    const lines = desc.stdout.trim().split('\n');
    assert.match(lines[0]!, /^Topic: bigdata\tTopicId: \S+\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: /);
    assert.match(lines[1]!, /^\tTopic: bigdata\tPartition: 0\tLeader: \d+\tReplicas: \d+\tIsr: \d+$/);
    assert.equal(lines.length, 3);

    const overrides = await runCli('kafka-topics', ['--describe', '--topics-with-overrides', ...bs]);
    assert.match(overrides.stdout, /^Topic: other\t.*retention\.ms=1000/);
    assert.doesNotMatch(overrides.stdout, /bigdata/);

    const alter = await runCli('kafka-topics', ['--alter', '--topic', 'bigdata', '--partitions', '3', ...bs]);
    assert.equal(alter.code, 0, alter.stderr);
    const after = await runCli('kafka-topics', ['--describe', '--topic', 'bigdata', ...bs]);
    assert.match(after.stdout, /PartitionCount: 3/);

    const del = await runCli('kafka-topics', ['--delete', '--topic', 'other', ...bs]);
    assert.equal(del.code, 0, del.stderr);
    const missing = await runCli('kafka-topics', ['--describe', '--topic', 'other', ...bs]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, "kafka-topics.sh: Topic 'other' does not exist as expected\n");

    // --zookeeper mode has its own tests (zookeeper-tools.test.ts); the two modes do not mix.
    const zk = await runCli('kafka-topics', ['--create', '--topic', 'x', '--zookeeper', 'zk:2181', ...bs, '--partitions', '2', '--replication-factor', '2']);
    assert.equal(zk.code, 1);
    assert.equal(zk.stderr, 'kafka-topics.sh: Only one of --bootstrap-server or --zookeeper must be specified\n');

    const wrong = await runCli('kafka-topics', ['--lst', ...bs]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^kafka-topics.sh: unknown option '--lst'/);
    assert.doesNotMatch(wrong.stderr, /at .*\.ts:\d+/);

    const help = await runCli('kafka-topics', ['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--bootstrap-server/);
  } finally {
    await b.stop();
  }
});

test('kafka-topics: an unreachable broker is one line and exit 1', async () => {
  const r = await runCli('kafka-topics', ['--list', '--bootstrap-server', '127.0.0.1:1']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^kafka-topics.sh: no broker answered at 127\.0\.0\.1:1 \(connection refused; tried for 3 s\)/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
});
