import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker } from '../helpers/broker.js';
import { runCli } from './helpers.js';

test('configs, get-offsets, delete-records, console tools with keys/headers, perf tools', { timeout: 120000 }, async () => {
  const b = await startTestBroker();
  const dir = await mkdtemp(join(tmpdir(), 'fjord-cli-'));
  const bs = ['--bootstrap-server', b.bootstrap];
  try {
    assert.equal((await runCli('kafka-topics', ['--create', '--topic', 'kv', '--partitions', '1', ...bs])).code, 0);

    const alter = await runCli('kafka-configs', [
      ...bs,
      '--alter',
      '--entity-type',
      'topics',
      '--entity-name',
      'kv',
      '--add-config',
      'retention.ms=60000,cleanup.policy=[compact,delete]',
    ]);
    assert.equal(alter.stdout, 'Completed updating config for topic kv.\n', alter.stderr);
    const desc = await runCli('kafka-configs', [...bs, '--describe', '--topic', 'kv']);
    assert.match(desc.stdout, /^Dynamic configs for topic kv are:\n/);
    assert.match(desc.stdout, /\n  retention\.ms=60000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention\.ms=60000/);
    assert.match(desc.stdout, /cleanup\.policy=compact,delete/);
    const del = await runCli('kafka-configs', [...bs, '--alter', '--topic', 'kv', '--delete-config', 'retention.ms']);
    assert.equal(del.code, 0);
    assert.doesNotMatch((await runCli('kafka-configs', [...bs, '--describe', '--topic', 'kv'])).stdout, /retention\.ms/);
    const bad = await runCli('kafka-configs', [...bs, '--describe', '--entity-type', 'topics', '--entity-name', 'nope']);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr.trim().split('\n').length, 1);

    const prod = await runCli(
      'kafka-console-producer',
      [...bs, '--topic', 'kv', '--property', 'parse.key=true', '--property', 'key.separator=:', '--property', 'parse.headers=true', '--sync'],
      {
        input: 'h1:x,h2:y\ta:1\n\tb:2\n\tc:3\n\td:4\n',
      },
    );
    assert.equal(prod.code, 0, prod.stderr);
    const cons = await runCli('kafka-console-consumer', [
      ...bs,
      '--topic',
      'kv',
      '--partition',
      '0',
      '--offset',
      'earliest',
      '--max-messages',
      '2',
      '--property',
      'print.key=true',
      '--property',
      'print.offset=true',
      '--property',
      'print.headers=true',
      '--property',
      'print.partition=true',
    ]);
    assert.equal(cons.stdout, 'Partition:0\tOffset:0\th1:x,h2:y\ta\t1\nPartition:0\tOffset:1\tNO_HEADERS\tb\t2\n');
    assert.equal(cons.stderr, 'Processed a total of 2 messages\n');

    const latest = await runCli('kafka-get-offsets', [...bs, '--topic', 'kv']);
    assert.equal(latest.stdout, 'kv:0:4\n');
    const plan = join(dir, 'delete.json');
    await writeFile(plan, JSON.stringify({ partitions: [{ topic: 'kv', partition: 0, offset: 2 }], version: 1 }));
    const dr = await runCli('kafka-delete-records', [...bs, '--offset-json-file', plan]);
    assert.equal(dr.stdout, 'Executing records delete operation\nRecords delete operation completed:\npartition: kv-0\tlow_watermark: 2\n', dr.stderr);
    const earliest = await runCli('kafka-get-offsets', [...bs, '--topic', 'kv', '--time', 'earliest']);
    assert.equal(earliest.stdout, 'kv:0:2\n');

    const pp = await runCli('kafka-producer-perf-test', [
      '--topic',
      'perf',
      '--num-records',
      '2000',
      '--record-size',
      '100',
      '--throughput',
      '-1',
      '--producer-props',
      `bootstrap.servers=${b.bootstrap}`,
      'linger.ms=5',
    ]);
    assert.equal(pp.code, 0, pp.stderr);
    assert.match(
      pp.stdout,
      /^2000 records sent, [\d.]+ records\/sec \([\d.]+ MB\/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$/m,
    );
    const cp = await runCli('kafka-consumer-perf-test', [...bs, '--topic', 'perf', '--messages', '2000', '--timeout', '10000']);
    assert.equal(cp.code, 0, cp.stderr);
    const [header, row] = cp.stdout.trim().split('\n');
    assert.equal(
      header,
      'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec',
    );
    assert.match(row!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, 0\.1907, [\d.]+, 2000, /);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await b.stop();
  }
});
