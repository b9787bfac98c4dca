/**
 * kafka-reassign-partitions.sh and kafka-leader-election.sh: Kafka's JSON (byte for byte), their
 * input checks as one-line errors, and the --zookeeper mode (Kafka 2.x) against a real ZooKeeper
 * with broker registrations and no controller: --execute writes /admin/reassign_partitions,
 * --verify reads it. The flow through a controller is in test/cluster/reassign.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR, startZooKeeper, zkGet, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { KafkaZkClient } from '../../src/metadata/zk/kafka-zk-client.js';
import { BrokerIdZNode } from '../../src/metadata/zk/zk-data.js';
import {
  checkExecuteAssignment,
  formatAsReassignmentJson,
  parseElectionJson,
  parseReassignmentJson,
  parseTopicsToMove,
} from '../../src/cli/common/reassign.js';
import { runCli } from './helpers.js';
import { startTestBroker } from '../helpers/broker.js';
import { Admin } from '../../src/client/index.js';

let dir = '';
let zk: ZooKeeperServer | undefined;
let session: ZkSession | undefined;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fjord-reassign-cli-'));
  if (!existsSync(ZOOKEEPER_JAR)) return;
  zk = await startZooKeeper();
  session = await ZkSession.open({ connect: zk.connect, sessionTimeoutMs: 10_000, connectionTimeoutMs: 10_000 });
  await session.ensurePath('/brokers/ids');
  for (const id of [0, 1, 2]) {
    const reg = {
      id,
      endpoints: [{ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 19092 + id }],
      rack: null,
      timestampMs: Date.now(),
    };
    await session.create(`/brokers/ids/${id}`, BrokerIdZNode.encode(reg), 'ephemeral');
  }
});
after(async () => {
  await session?.close();
  await zk?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, content);
  return p;
}

function oneLineError(r: { code: number | null; stderr: string }, tool: string, message: string): void {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr, `${tool}: ${message}\n`);
}

test("the reassignment JSON is Kafka's, byte for byte, and its checks are Kafka's", () => {
  assert.equal(
    formatAsReassignmentJson([
      { topic: 'b', partition: 0, replicas: [2, 1] },
      { topic: 'a', partition: 10, replicas: [1] },
      { topic: 'a', partition: 2, replicas: [0, 1] },
    ]),
    '{"version":1,"partitions":[{"topic":"a","partition":2,"replicas":[0,1],"log_dirs":["any","any"]},{"topic":"a","partition":10,"replicas":[1],"log_dirs":["any"]},{"topic":"b","partition":0,"replicas":[2,1],"log_dirs":["any","any"]}]}',
  );
  assert.deepEqual(parseReassignmentJson({ version: 1, partitions: [{ topic: 't', partition: 0, replicas: [1, 2] }] }), [
    { topic: 't', partition: 0, replicas: [1, 2] },
  ]);
  assert.throws(() => parseReassignmentJson({ version: 2, partitions: [] }), /Not supported version field value 2/);
  assert.throws(
    () => parseReassignmentJson({ partitions: [{ topic: 't', partition: 0, replicas: [1, 2], log_dirs: ['any'] }] }),
    /Size of replicas list List\(1, 2\) is different from size of log dirs list List\(any\) for partition t-0/,
  );
  assert.throws(() => checkExecuteAssignment([]), /Partition reassignment list cannot be empty/);
  assert.throws(
    () => checkExecuteAssignment([{ topic: 't', partition: 0, replicas: [1, 1] }]),
    /Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1/,
  );
  assert.throws(
    () =>
      checkExecuteAssignment([
        { topic: 't', partition: 0, replicas: [1] },
        { topic: 't', partition: 0, replicas: [2] },
      ]),
    /duplicate topic partitions: t-0/,
  );
  assert.deepEqual(parseTopicsToMove({ topics: [{ topic: 'foo' }, { topic: 'bar' }], version: 1 }), ['foo', 'bar']);
  assert.throws(() => parseTopicsToMove({ topics: [{ topic: 'foo' }, { topic: 'foo' }] }), /List of topics to reassign contains duplicate entries: foo/);
  assert.deepEqual(parseElectionJson({ partitions: [{ topic: 't', partition: 3 }] }), [{ topic: 't', partition: 3 }]);
  assert.throws(
    () =>
      parseElectionJson({
        partitions: [
          { topic: 't', partition: 3 },
          { topic: 't', partition: 3 },
        ],
      }),
    /duplicate partitions: t-3/,
  );
});

test('bad invocations get one line on stderr and exit code 1', { timeout: 120_000 }, async () => {
  const R = 'kafka-reassign-partitions.sh';
  const E = 'kafka-leader-election.sh';
  const bad = await file('bad.json', '{"version":1,');
  const dup = await file('dup.json', '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}');
  const results = await Promise.all([
    runCli('kafka-reassign-partitions', ['--bootstrap-server', '127.0.0.1:1']),
    runCli('kafka-reassign-partitions', ['--bootstrap-server', '127.0.0.1:1', '--execute', '--verify', '--reassignment-json-file', dup]),
    runCli('kafka-reassign-partitions', ['--bootstrap-server', '127.0.0.1:1', '--execute', '--reassignment-json-file', bad]),
    runCli('kafka-reassign-partitions', ['--bootstrap-server', '127.0.0.1:1', '--execute', '--reassignment-json-file', dup]),
  ]);
  oneLineError(results[0]!, R, 'Command must include exactly one action: --generate, --execute, --verify, --cancel, --list');
  oneLineError(results[1]!, R, 'Command must include exactly one action: --generate, --execute, --verify, --cancel, --list');
  oneLineError(results[2]!, R, 'The input string is not a valid JSON');
  oneLineError(results[3]!, R, 'Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1');
  const more = await Promise.all([
    runCli('kafka-reassign-partitions', ['--zookeeper', '127.0.0.1:1', '--list']),
    runCli('kafka-reassign-partitions', ['--bootstrap-server', '127.0.0.1:1', '--generate', '--broker-list', '1,1', '--topics-to-move-json-file', dup]),
    runCli('kafka-leader-election', ['--bootstrap-server', '127.0.0.1:1', '--election-type', 'preferred']),
    runCli('kafka-leader-election', ['--bootstrap-server', '127.0.0.1:1', '--election-type', 'fair', '--all-topic-partitions']),
  ]);
  oneLineError(more[0]!, R, '--list needs --bootstrap-server (it is not supported with --zookeeper)');
  oneLineError(more[1]!, R, 'Broker list contains duplicate entries: 1');
  oneLineError(more[2]!, E, 'One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file');
  oneLineError(more[3]!, E, '--election-type must be PREFERRED or UNCLEAN, got "fair"');
});

test('--zookeeper: --generate proposes, --execute writes /admin/reassign_partitions, --verify reads it', { timeout: 240_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zkc = new KafkaZkClient(session!);
  await zkc.createTopic(
    'moving',
    'AAAAAAAAAAAAAAAAAAAAAQ',
    new Map([
      [0, [0, 1]],
      [1, [1, 0]],
    ]),
    {},
  );
  const reassign = (...args: string[]) => runCli('kafka-reassign-partitions', [...args, '--zookeeper', zk!.connect], { timeoutMs: 60_000 });

  const topicsFile = await file('topics.json', '{"topics":[{"topic":"moving"}],"version":1}');
  const gen = await reassign('--generate', '--topics-to-move-json-file', topicsFile, '--broker-list', '1,2');
  assert.equal(gen.code, 0, gen.stderr);
  const lines = gen.stdout.split('\n');
  assert.equal(lines[0], 'Current partition replica assignment');
  assert.equal(
    lines[1],
    '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},{"topic":"moving","partition":1,"replicas":[1,0],"log_dirs":["any","any"]}]}',
  );
  assert.equal(lines[2], '');
  assert.equal(lines[3], 'Proposed partition reassignment configuration');
  const proposed = JSON.parse(lines[4]!) as { version: number; partitions: { topic: string; partition: number; replicas: number[] }[] };
  assert.equal(proposed.version, 1);
  for (const p of proposed.partitions) assert.deepEqual([...p.replicas].sort(), [1, 2]);
  assert.notEqual(proposed.partitions[0]!.replicas[0], proposed.partitions[1]!.replicas[0], 'leaders alternate');

  const plan = await file('plan.json', lines[4]!);
  const exec = await reassign('--execute', '--reassignment-json-file', plan, '--throttle', '1000');
  assert.equal(exec.code, 0, exec.stderr);
  assert.equal(
    exec.stdout,
    `Current partition replica assignment\n\n${lines[1]}\n\nSave this to use as the --reassignment-json-file option during rollback\nSuccessfully started partition reassignments for moving-0,moving-1\n`,
  );
  assert.match(exec.stderr, /--throttle is ignored/);
  const znode = JSON.parse(await zkGet(zk!.port, '/admin/reassign_partitions')) as unknown;
  assert.deepEqual(znode, { version: 1, partitions: proposed.partitions.map((p) => ({ topic: p.topic, partition: p.partition, replicas: p.replicas })) });

  const again = await reassign('--execute', '--reassignment-json-file', plan);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^kafka-reassign-partitions\.sh: Cannot execute because there is an existing partition assignment\./);

  const pending = await reassign('--verify', '--reassignment-json-file', plan);
  assert.equal(pending.code, 0, pending.stderr);
  assert.equal(
    pending.stdout,
    'Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  Use --bootstrap-server instead for more accurate results.\n' +
      'Status of partition reassignment:\nReassignment of partition moving-0 is still in progress.\nReassignment of partition moving-1 is still in progress.\n',
  );

  // What the controller does at the end (here by hand): the final assignment, the request gone.
  const a = (await zkc.getTopicAssignment('moving'))!;
  await zkc.setTopicAssignment(
    {
      ...a,
      partitions: new Map([
        [0, proposed.partitions[0]!.replicas],
        [1, [0, 1]],
      ]),
    },
    a.zkVersion,
  );
  await session!.delete('/admin/reassign_partitions');
  const done = await reassign('--verify', '--reassignment-json-file', plan);
  const status = done.stdout.split('\n').slice(1);
  assert.equal(status[1], 'Reassignment of partition moving-0 is complete.');
  assert.equal(
    status[2],
    `There is no active reassignment of partition moving-1, but replica set is 0,1 rather than ${proposed.partitions[1]!.replicas.join(',')}.`,
  );

  const missing = await file('missing.json', '{"version":1,"partitions":[{"topic":"moving","partition":7,"replicas":[1]}]}');
  oneLineError(
    await reassign('--execute', '--reassignment-json-file', missing),
    'kafka-reassign-partitions.sh',
    'The proposed assignment contains non-existent partitions: List(moving-7)',
  );
  const unknownBroker = await file('unknown-broker.json', '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[1,9]}]}');
  oneLineError(
    await reassign('--execute', '--reassignment-json-file', unknownBroker),
    'kafka-reassign-partitions.sh',
    'The proposed assignment contains non-existent brokerIDs: 9',
  );
});

test('embedded mode: elections are never needed, reassignment needs cluster mode (one line, exit 1)', { timeout: 120_000 }, async () => {
  const b = await startTestBroker();
  try {
    const admin = new Admin({ bootstrapServers: b.bootstrap });
    assert.equal((await admin.createTopics([{ name: 'solo', numPartitions: 2, replicationFactor: 1 }])).get('solo'), null);
    await admin.close();
    const [elected, listed, generated] = await Promise.all([
      runCli('kafka-leader-election', ['--bootstrap-server', b.bootstrap, '--election-type', 'PREFERRED', '--all-topic-partitions']),
      runCli('kafka-reassign-partitions', ['--bootstrap-server', b.bootstrap, '--list']),
      runCli('kafka-reassign-partitions', [
        '--bootstrap-server',
        b.bootstrap,
        '--generate',
        '--broker-list',
        String(b.broker.config.brokerId),
        '--topics-to-move-json-file',
        await file('solo.json', '{"topics":[{"topic":"solo"}]}'),
      ]),
    ]);
    assert.equal(elected.code, 0, elected.stderr);
    assert.equal(elected.stdout, 'Valid replica already elected for partitions solo-0, solo-1\n');
    oneLineError(
      listed,
      'kafka-reassign-partitions.sh',
      'the broker does not support ListPartitionReassignments (reassignment and elections need a cluster-mode broker, zookeeper.connect set)',
    );
    assert.equal(generated.code, 0, generated.stderr);
    const id = b.broker.config.brokerId;
    assert.equal(
      generated.stdout.split('\n')[4],
      `{"version":1,"partitions":[{"topic":"solo","partition":0,"replicas":[${id}],"log_dirs":["any"]},{"topic":"solo","partition":1,"replicas":[${id}],"log_dirs":["any"]}]}`,
    );
    const fromFile = await runCli('kafka-leader-election', [
      '--bootstrap-server',
      b.bootstrap,
      '--election-type',
      'preferred',
      '--path-to-json-file',
      await file('elect.json', '{"partitions":[{"topic":"solo","partition":1}]}'),
    ]);
    assert.equal(fromFile.stdout, 'Valid replica already elected for partitions solo-1\n', fromFile.stderr);
    const unknown = await runCli('kafka-leader-election', [
      '--bootstrap-server',
      b.bootstrap,
      '--election-type',
      'PREFERRED',
      '--topic',
      'nope',
      '--partition',
      '0',
    ]);
    assert.equal(unknown.code, 1);
    assert.equal(
      unknown.stdout,
      'Error completing leader election (PREFERRED) for partition: nope-0: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.\n',
    );
    assert.equal(unknown.stderr, 'kafka-leader-election.sh: 1 replica(s) could not be elected\n');
  } finally {
    await b.stop();
  }
});
