/**
 * kafka-consumer-groups.sh --list names what it could not list (issue 22): one line per broker
 * that did not answer and one for the __consumer_offsets partitions without a leader (a factor-1
 * offsets topic after its broker died); nothing when the listing is whole. --timeout is checked.
 * The cluster cases (a killed broker) run in test/cluster/local-cluster-script.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listingGaps, withTimeout } from '../../src/cli/common/list-groups.js';
import { CliError } from '../../src/cli/common/tool.js';
import { runCli } from './helpers.js';

const node = (nodeId: number) => ({ nodeId, host: '127.0.0.1', port: 9092 + nodeId, rack: null });

test('a whole listing has no gaps', () => {
  assert.deepEqual(listingGaps({ groups: [{ groupId: 'g', protocolType: 'consumer', state: 'Empty' }], unreachable: [], leaderlessOffsetsPartitions: [] }), []);
});

test('each unreachable broker is one line, and the leaderless offsets partitions one more', () => {
  const gaps = listingGaps({
    groups: [],
    unreachable: [
      { node: node(1), reason: 'could not connect to 127.0.0.1:9093: connect ECONNREFUSED 127.0.0.1:9093' },
      { node: node(2), reason: 'no answer within 5000 ms (--timeout)' },
    ],
    leaderlessOffsetsPartitions: [1, 4, 7],
  });
  assert.deepEqual(gaps, [
    'could not list the groups of broker 1 (127.0.0.1:9093): could not connect to 127.0.0.1:9093: connect ECONNREFUSED 127.0.0.1:9093; the groups it coordinates are missing above',
    'could not list the groups of broker 2 (127.0.0.1:9094): no answer within 5000 ms (--timeout); the groups it coordinates are missing above',
    '3 partition(s) of __consumer_offsets have no leader (1, 4, 7): the groups stored there are missing above',
  ]);
});

test('withTimeout: the value in time, a CliError with the given line after it', async () => {
  assert.equal(await withTimeout(Promise.resolve(7), 1000, () => 'late'), 7);
  const started = Date.now();
  await assert.rejects(
    withTimeout(new Promise(() => undefined), 50, () => 'no answer within 50 ms'),
    (err: unknown) => err instanceof CliError && err.message === 'no answer within 50 ms',
  );
  assert.ok(Date.now() - started < 1000);
});

test('--timeout must be a positive number of milliseconds: one line, exit 1', async () => {
  const r = await runCli('kafka-consumer-groups', ['--bootstrap-server', '127.0.0.1:1', '--list', '--timeout', 'soon']);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'kafka-consumer-groups.sh: --timeout must be a positive number of milliseconds, not soon\n');
});
