/**
 * `npm run bench` as a user runs it (a child process from the repo root, after the build): a
 * quick produce run against Fjord alone writes its section into the given results file, keeping
 * what was there, and a chart that parses; a wrong flag is one line and exit 1; --help exits 0.
 * The run needs gcc and librdkafka's headers (it compiles bench/rdkafka-perf.c): missing, the test
 * is skipped, or fails when CI=true.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { run } from '../helpers/run.js';

function hasLoadGeneratorToolchain(): boolean {
  return spawnSync('gcc', ['--version']).status === 0 && existsSync('/usr/include/librdkafka/rdkafka.h');
}

describe('npm run bench', () => {
  it('runs a quick produce against Fjord and writes its section and chart', async (t) => {
    if (!hasLoadGeneratorToolchain()) {
      if (process.env.CI === 'true') throw new Error('gcc or librdkafka-dev is not installed (CI=true)');
      t.skip('gcc or librdkafka-dev is not installed');
      return;
    }
    const dir = await mkdtemp(path.join(tmpdir(), 'bench-suite-smoke-'));
    try {
      const out = path.join(dir, 'RESULTS.md');
      const svg = path.join(dir, 'chart.svg');
      await writeFile(out, '# Results\n\n## Someone else’s section\n\nkept\n');
      const r = await run(
        'npm',
        ['run', '--silent', 'bench', '--', '--quick', '--only=produce', '--systems=fjord,fjord-threads', `--out=${out}`, `--svg=${svg}`],
        {
          timeoutMs: 120_000,
        },
      );
      assert.equal(r.code, 0, r.stderr.slice(-3000));
      const md = await readFile(out, 'utf8');
      assert.ok(md.startsWith('# Results\n\n## Someone else’s section\n\nkept\n'), md.slice(0, 200));
      assert.match(md, /<!-- npm run bench: start[^\n]*-->\n## `npm run bench`/);
      assert.match(md, /npm run bench -- --quick --only=produce --systems=fjord,fjord-threads/);
      assert.match(md, /\d+ cores \(.*\); load average before [\d.]+ [\d.]+ [\d.]+, after [\d.]+ [\d.]+ [\d.]+/);
      assert.match(md, /\| case \| metric \| Fjord, 1 thread \| Fjord, all threads \| all threads\/1 thread \|\n/);
      // Both columns: the default broker and the same broker at num.io.threads = the core count.
      for (const row of ['1 KiB, 1 partition, acks=1', '1 KiB, 8 partitions, acks=all', '100 B, 1 partition, acks=1']) {
        const m = new RegExp(`\\| ${row} \\| MB/s \\| ([\\d.,]+) \\| ([\\d.,]+) \\|`).exec(md);
        assert.ok(m && Number(m[1]!.replace(/,/g, '')) > 0 && Number(m[2]!.replace(/,/g, '')) > 0, `no MB/s figures for ${row}`);
      }
      assert.match(md, /num\.io\.threads=\d+/);
      assert.match(md, /\| produce ≥ 3× NATS JetStream|No target was judged/);
      assert.match(md, /```\nbin\/kafka-server-start\.sh config\/server\.properties .*\n/);
      assert.match(md, /<tmp>\/rdkafka-perf produce -b HOST:PORT -t TOPIC -n 10000 -s 1024 -a 1 /);
      assert.ok(md.endsWith('<!-- npm run bench: end -->\n'));
      const parsed = spawnSync('/usr/bin/python3', ['-c', 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])', svg]);
      assert.equal(parsed.status, 0, parsed.stderr.toString());
      assert.match(await readFile(svg, 'utf8'), /<title>Fjord, 1 thread, 1 KiB, 1 partition, acks=1: [\d.,]+ MB\/s<\/title>/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects a wrong flag with one line and exit 1; --help exits 0', async () => {
    const bad = await run(process.execPath, ['--import', 'tsx', 'bench/suite/run.ts', '--only=nosuch'], { timeoutMs: 60_000 });
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    assert.match(bad.stderr, /^npm run bench: unknown workload nosuch \(known: produce, consume, compression/);
    const help = await run(process.execPath, ['--import', 'tsx', 'bench/suite/run.ts', '--help'], { timeoutMs: 60_000 });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: npm run bench -- \[--quick\]/);
  });
});
