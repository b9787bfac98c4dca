/**
 * Every tool exits after an error: the one-line error, then a non-zero exit promptly (no
 * connection, timer or group membership left holding the process). Each case runs the tool as
 * a user does and bounds both the whole run (a hang fails the test instead of stalling it) and
 * the time from the error line to the exit.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCli } from './helpers.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { Admin } from '../../src/client/index.js';

interface Timed {
  code: number | null;
  stdout: string;
  stderr: string;
  /** ms from the first byte on stderr to the process's exit */
  exitAfterErrorMs: number;
}

/** A hang is killed at RUN_DEADLINE_MS and fails the test; tsx start-up on a loaded machine is slow, the exit after the error is not. */
const RUN_DEADLINE_MS = 45_000;
const EXIT_AFTER_ERROR_MS = 2_500;

function runTimed(tool: string, args: string[], input = ''): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(tool, args);
    let stdout = '';
    let stderr = '';
    let errorAt = 0;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      if (errorAt === 0) errorAt = Date.now();
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${tool} ${args.join(' ')} still running after ${RUN_DEADLINE_MS} ms (stderr: ${stderr.trim()})`));
    }, RUN_DEADLINE_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, exitAfterErrorMs: errorAt === 0 ? 0 : Date.now() - errorAt });
    });
    child.stdin.end(input);
  });
}

async function expectError(tool: string, args: string[], message: RegExp, input = ''): Promise<Timed> {
  const r = await runTimed(tool, args, input);
  const what = `${tool} ${args.join(' ')}`;
  assert.notEqual(r.code, 0, `${what} exited 0; stdout: ${r.stdout}`);
  assert.ok(r.code !== null, `${what} was killed`);
  const lines = r.stderr.trim().split('\n');
  assert.match(lines[lines.length - 1]!, message, what);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `${what} printed a stack trace`);
  assert.doesNotMatch(r.stderr, /\b[A-Z]+(_[A-Z]+)+\b \(/, `${what} printed a raw error name`);
  assert.ok(r.exitAfterErrorMs <= EXIT_AFTER_ERROR_MS, `${what} took ${r.exitAfterErrorMs} ms to exit after its error`);
  return r;
}

let b: TestBroker;
let dir: string;
let bs: string;

before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  bs = b.bootstrap;
  dir = await mkdtemp(join(tmpdir(), 'fjord-error-exits-'));
  const admin = new Admin({ bootstrapServers: [bs] });
  try {
    await admin.createTopics([{ name: 'present', numPartitions: 2, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
});

after(async () => {
  await b?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// The hangs this file was written for.
test('console consumer: a bad --offset is refused at once', async () => {
  await expectError(
    'kafka-console-consumer',
    ['--bootstrap-server', bs, '--topic', 'present', '--partition', '0', '--offset', 'xyz'],
    /--offset must be earliest, latest or a non-negative number, got "xyz"/,
  );
});

test('console consumer: a topic that does not exist', async () => {
  await expectError('kafka-console-consumer', ['--bootstrap-server', bs, '--topic', 'nosuch'], /^kafka-console-consumer\.sh: Topic 'nosuch' does not exist$/);
});

test('console consumer: a topic that does not exist, with --timeout-ms', async () => {
  await expectError('kafka-console-consumer', ['--bootstrap-server', bs, '--topic', 'nosuch', '--timeout-ms', '3000'], /Topic 'nosuch' does not exist/);
});

test('console consumer: a partition that does not exist', async () => {
  await expectError(
    'kafka-console-consumer',
    ['--bootstrap-server', bs, '--topic', 'present', '--partition', '5'],
    /Partition 5 of topic 'present' does not exist/,
  );
});

test('consumer perf test: a topic that does not exist', async () => {
  await expectError(
    'kafka-consumer-perf-test',
    ['--bootstrap-server', bs, '--topic', 'nosuch', '--messages', '10'],
    /^kafka-consumer-perf-test\.sh: Topic 'nosuch' does not exist$/,
  );
});

test('dump-log: a file that is not a segment or index is an error', async () => {
  await expectError(
    'kafka-dump-log',
    ['--files', '/etc/passwd'],
    /\/etc\/passwd is not a log segment \(\.log\), offset index \(\.index\), time index \(\.timeindex\) or transaction index \(\.txnindex\) file/,
  );
  const fake = join(dir, '00000000000000000000.log');
  await copyFile('/etc/passwd', fake);
  const r = await expectError('kafka-dump-log', ['--files', fake], /is not a log segment: no record batch could be read/);
  assert.match(r.stdout, /Found \d+ invalid bytes at the end of 00000000000000000000\.log/);
  await expectError('kafka-dump-log', ['--files', join(dir, 'missing.log')], /does not exist or cannot be read/);
});

// A sweep of the other tools' error paths: each ends with one line and a prompt exit.
test("sweep: every tool exits promptly after an error, in Kafka's words", async () => {
  const offsetJson = join(dir, 'offsets.json');
  await writeFile(offsetJson, JSON.stringify({ partitions: [{ topic: 'nosuch', partition: 0, offset: 1 }], version: 1 }));
  const cases: [string, string[], RegExp][] = [
    ['kafka-topics', ['--bootstrap-server', bs, '--describe', '--topic', 'nosuch'], /Topic 'nosuch' does not exist as expected/],
    ['kafka-topics', ['--bootstrap-server', bs, '--create', '--topic', 'present'], /Topic 'present' already exists/],
    ['kafka-topics', ['--bootstrap-server', bs, '--alter', '--topic', 'nosuch', '--partitions', '3'], /Topic 'nosuch' does not exist/],
    ['kafka-topics', ['--bootstrap-server', bs, '--list', '--bogus'], /unknown option '--bogus'/],
    [
      'kafka-configs',
      ['--bootstrap-server', bs, '--entity-type', 'topics', '--entity-name', 'nosuch', '--describe'],
      /^kafka-configs\.sh: Topic 'nosuch' does not exist/,
    ],
    [
      'kafka-configs',
      ['--bootstrap-server', bs, '--entity-type', 'topics', '--entity-name', 'present', '--alter', '--add-config', 'bogus.key=1'],
      /bogus\.key/,
    ],
    ['kafka-consumer-groups', ['--bootstrap-server', bs, '--describe', '--group', 'nosuch'], /Consumer group 'nosuch' does not exist/],
    [
      'kafka-consumer-groups',
      ['--bootstrap-server', bs, '--reset-offsets', '--group', 'g', '--topic', 'nosuch', '--to-earliest', '--execute'],
      /^kafka-consumer-groups\.sh: Topic 'nosuch' does not exist/,
    ],
    ['kafka-get-offsets', ['--bootstrap-server', bs, '--topic', 'nosuch'], /Could not match any topic-partitions with the specified filters/],
    [
      'kafka-get-offsets',
      ['--bootstrap-server', bs, '--topic', 'present', '--partitions', '7'],
      /Could not match any topic-partitions with the specified filters/,
    ],
    ['kafka-get-offsets', ['--bootstrap-server', bs, '--topic-partitions', 'nosuch:0'], /Topic 'nosuch' does not exist/],
    ['kafka-get-offsets', ['--bootstrap-server', bs, '--topic-partitions', 'present:5-9'], /Could not match any topic-partitions with the specified filters/],
    ['kafka-delete-records', ['--bootstrap-server', bs, '--offset-json-file', offsetJson], /nosuch-0 does not exist/],
    ['kafka-delete-records', ['--bootstrap-server', bs, '--offset-json-file', join(dir, 'missing.json')], /cannot read offset JSON file/],
    ['kafka-console-producer', ['--bootstrap-server', bs], /--topic/],
    // Waited out the request timeout (30 s) for a topic the broker will not create.
    [
      'kafka-producer-perf-test',
      ['--bootstrap-server', bs, '--topic', 'nosuch', '--num-records', '5', '--record-size', '10', '--throughput', '-1'],
      /^kafka-producer-perf-test\.sh: Topic 'nosuch' does not exist and the broker does not create topics on demand/,
    ],
    ['kafka-consumer-perf-test', ['--bootstrap-server', bs, '--topic', 'present'], /--messages/],
    ['kafka-console-consumer', ['--bootstrap-server', bs, '--topic', 'present', '--partition', '0', '--group', 'g'], /--group cannot be used with --partition/],
  ];
  // Each failed send is reported, and the exit code says some failed (it was 0).
  const produced = await expectError(
    'kafka-console-producer',
    ['--bootstrap-server', bs, '--topic', 'nosuch'],
    /^Error when sending message to topic nosuch: Topic 'nosuch' does not exist$/,
    'a\nb\n',
  );
  assert.equal(produced.stderr.trim().split('\n').length, 2);
  // Two at a time: the machine is shared.
  for (let i = 0; i < cases.length; i += 2) {
    await Promise.all(cases.slice(i, i + 2).map(([tool, args, re]) => expectError(tool, args, re)));
  }
});
