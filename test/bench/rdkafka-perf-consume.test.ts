/**
 * bench/rdkafka-perf.c's consume mode against an embedded broker: it takes records off the
 * consumer queue in batches, and still reports exactly the records and bytes asked for (never a
 * batch's worth more), across partitions and for a count that is no multiple of its batch.
 * Needs gcc and librdkafka's headers: missing, the test is skipped, or fails when CI=true.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';

const exec = promisify(execFile);
const SOURCE = path.join(import.meta.dirname, '..', '..', 'bench', 'rdkafka-perf.c');
const SIZE = 1000;
const PRODUCED = 9000; // two full batches of 4096 and a part of a third

interface Report {
  mode: string;
  records: number;
  bytes: number;
  failed?: number;
}

function hasToolchain(): boolean {
  return spawnSync('gcc', ['--version']).status === 0 && existsSync('/usr/include/librdkafka/rdkafka.h');
}

describe('rdkafka-perf consume', { skip: !hasToolchain() && process.env.CI !== 'true' ? 'gcc or librdkafka-dev is not installed' : false }, () => {
  let b: TestBroker;
  let dir: string;
  let bin: string;
  const perf = async (...args: string[]): Promise<Report> => {
    const { stdout } = await exec(bin, args, { timeout: 120_000 });
    return JSON.parse(stdout.trim().split('\n').pop()!) as Report;
  };

  before(async () => {
    if (!hasToolchain()) throw new Error('gcc or librdkafka-dev is not installed (CI=true)');
    dir = await mkdtemp(path.join(tmpdir(), 'rdkafka-perf-consume-'));
    bin = path.join(dir, 'rdkafka-perf');
    await exec('gcc', ['-O2', '-o', bin, SOURCE, '-lrdkafka', '-lpthread']);
    b = await startTestBroker();
    await b.broker.services.metadata.createTopic({ name: 'perf-3', numPartitions: 3, replicationFactor: 1 });
    const produced = await perf('produce', '-b', b.bootstrap, '-t', 'perf-3', '-n', String(PRODUCED), '-s', String(SIZE), '-a', '1');
    assert.equal(produced.records, PRODUCED);
    assert.equal(produced.failed, 0);
  });
  after(async () => {
    await b?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('counts every record of every partition and its bytes', async () => {
    const r = await perf('consume', '-b', b.bootstrap, '-t', 'perf-3', '-n', String(PRODUCED));
    assert.deepEqual([r.mode, r.records, r.bytes], ['consume', PRODUCED, PRODUCED * SIZE]);
  });

  it('stops at the count asked for, though more records are there', async () => {
    const asked = 4096 + 123;
    const r = await perf('consume', '-b', b.bootstrap, '-t', 'perf-3', '-n', String(asked));
    assert.deepEqual([r.records, r.bytes], [asked, asked * SIZE]);
  });
});
