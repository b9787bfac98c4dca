import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { requirePeer } from '../helpers/peers.js';
import { kcat } from './kcat-helpers.js';

const COUNT = 1_000_000;
const PARTITIONS = 4;

let b: TestBroker;
let dir: string;
before(async () => {
  b = await startTestBroker();
  dir = await mkdtemp(path.join(tmpdir(), 'fjord-million-'));
});
after(async () => {
  await b.stop();
  await rm(dir, { recursive: true, force: true });
});

const valueAt = (i: number) => `${String(i).padStart(7, '0')}-${((i * 2654435761) % 4294967296).toString(16).padStart(8, '0')}-payload`;

test('one million records through kcat: every one comes back once, in order within its partition', { timeout: 300_000 }, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const topic = 'million';
  await b.broker.services.metadata.createTopic({ name: topic, numPartitions: PARTITIONS, replicationFactor: 1 });
  await b.broker.services.replicaManager.syncTopic(topic);
  const input = createHash('sha256');
  const lines: string[] = new Array(COUNT);
  for (let i = 0; i < COUNT; i++) {
    lines[i] = `k${i % 1000}:${valueAt(i)}`;
    input.update(valueAt(i));
  }
  const file = path.join(dir, 'records.txt');
  await writeFile(file, lines.join('\n') + '\n');
  const produced = await kcat(['-P', '-b', b.bootstrap, '-t', topic, '-K', ':', '-z', 'lz4', '-X', 'linger.ms=20', '-l', file], undefined, 240_000);
  assert.equal(produced.code, 0, produced.stderr);

  const consumed = await kcat(['-C', '-b', b.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%p %s\n'], undefined, 240_000);
  assert.equal(consumed.code, 0, consumed.stderr);
  const rows = consumed.stdout.toString().split('\n');
  rows.pop();
  assert.equal(rows.length, COUNT);
  const byPartition = new Map<string, number[]>();
  const seen = new Uint8Array(COUNT);
  for (const row of rows) {
    const space = row.indexOf(' ');
    const p = row.slice(0, space);
    const seq = Number(row.slice(space + 1, space + 8));
    assert.equal(row.slice(space + 1), valueAt(seq));
    assert.equal(seen[seq], 0, `record ${seq} delivered twice`);
    seen[seq] = 1;
    let list = byPartition.get(p);
    if (!list) byPartition.set(p, (list = []));
    list.push(seq);
  }
  // Within a partition records keep the producer's order.
  for (const [p, list] of byPartition) for (let i = 1; i < list.length; i++) assert.ok(list[i]! > list[i - 1]!, `partition ${p} out of order at ${i}`);
  assert.equal(byPartition.size, PARTITIONS);
  const output = createHash('sha256');
  for (let i = 0; i < COUNT; i++) output.update(valueAt(i));
  assert.equal(output.digest('hex'), input.digest('hex'));
  assert.equal(
    seen.every((x) => x === 1),
    true,
  );
});
