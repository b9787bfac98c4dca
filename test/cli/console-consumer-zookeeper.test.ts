/**
 * kafka-console-consumer.sh --zookeeper (the old consumer): wrong combinations of flags are
 * answered in one line, with exit code 1, before anything connects; so is a ZooKeeper that does
 * not answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './helpers.js';

const cases: [string[], RegExp][] = [
  [
    ['--zookeeper', '127.0.0.1:1', '--bootstrap-server', '127.0.0.1:2', '--topic', 't'],
    /exactly one of --zookeeper \(the old consumer\) or --bootstrap-server/,
  ],
  [['--zookeeper', '127.0.0.1:1', '--topic', 't', '--partition', '0'], /--partition needs --bootstrap-server/],
  [['--zookeeper', '127.0.0.1:1', '--include', 't.*'], /--include\/--whitelist with --zookeeper is not supported/],
  [['--zookeeper', 'not a host', '--topic', 't'], /--zookeeper expects host:port/],
  [['--bootstrap-server', '127.0.0.1:2', '--topic', 't', '--delete-consumer-offsets'], /--delete-consumer-offsets needs --zookeeper/],
  [['--zookeeper', '127.0.0.1:1', '--topic', 't', '--consumer-property', 'offsets.storage=file'], /offsets.storage must be zookeeper or kafka/],
  [['--zookeeper', '127.0.0.1:1', '--topic', 't', '--consumer-property', 'dual.commit.enabled=maybe'], /dual.commit.enabled must be true or false/],
  // Nothing listens there: said after the connection timeout, in one line.
  [
    ['--zookeeper', '127.0.0.1:1', '--topic', 't', '--consumer-property', 'zookeeper.connection.timeout.ms=1000'],
    /no ZooKeeper answered at 127\.0\.0\.1:1 \(connection refused; tried for \d s\)/,
  ],
];

for (const [args, message] of cases) {
  test(`kafka-console-consumer ${args.join(' ')}: one line, exit 1`, async () => {
    const r = await runCli('kafka-console-consumer', args);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^kafka-console-consumer\.sh: /);
    assert.match(lines[0]!, message);
  });
}
