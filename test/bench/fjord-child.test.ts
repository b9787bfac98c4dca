/**
 * bench/suite/fjord-child.ts, the one way the benches start a Fjord broker in a child process:
 * from dist/ with properties, node flags and a stdout file, answering on its own port and log dir,
 * its PID readable for /proc CPU, stopped and gone; and a broker that cannot start rejects with
 * its name instead of hanging. Runs dist/ (npx tsc -p tsconfig.json first).
 */
import assert from 'node:assert/strict';
import { readFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFjordChild } from '../../bench/suite/fjord-child.js';
import { loadAverage, processCpuMs } from '../../bench/suite/measure.js';

describe('bench/suite/fjord-child.ts', () => {
  it('starts a broker from dist/ with properties, node flags and a stdout file; stop ends it', async () => {
    const work = await mkdtemp(path.join(tmpdir(), 'fjord-child-test-'));
    try {
      const out = path.join(work, 'broker.out');
      const b = await startFjordChild({
        name: 'a b',
        work,
        props: { 'auto.create.topics.enable': 'false', 'offsets.topic.replication.factor': '1', 'num.partitions': '3' },
        nodeFlags: ['--trace-gc'],
        stdoutFile: out,
      });
      try {
        assert.equal(b.bootstrap, `127.0.0.1:${b.port}`);
        assert.ok(b.args.includes('--trace-gc'), b.args.join(' '));
        assert.match(path.basename(b.logDir), /^a-b-logs-/);
        assert.equal(path.dirname(b.logDir), work);
        // The properties reached the broker: a topic made without a partition count gets num.partitions.
        const errors = await b.admin.createTopics([{ name: 't', numPartitions: -1, replicationFactor: -1 }]);
        assert.equal(errors.get('t'), null);
        const [topic] = await b.admin.describeTopics(['t']);
        assert.equal(topic?.partitions.length, 3);
        assert.ok((await stat(path.join(b.logDir, 't-0'))).isDirectory());
        assert.ok((await processCpuMs(b.pid)) > 0);
        assert.match(loadAverage(), /^\d+\.\d\d \d+\.\d\d \d+\.\d\d$/);
      } finally {
        await b.stop();
      }
      assert.ok(b.child.exitCode !== null || b.child.signalCode !== null);
      await assert.rejects(processCpuMs(b.pid));
      // --trace-gc writes to stdout: the file got it.
      assert.match(await readFile(out, 'utf8'), /Scavenge|Mark-Compact/);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('rejects with the broker name when the broker exits before answering', async () => {
    const work = await mkdtemp(path.join(tmpdir(), 'fjord-child-test-'));
    try {
      const started = Date.now();
      await assert.rejects(startFjordChild({ name: 'broken', work, props: { 'num.partitions': 'many' } }), /broker broken did not start/);
      // At its exit, not after the admin client's 30 s connect timeout.
      assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms`);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
