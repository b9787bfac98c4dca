/**
 * The pure parts of `npm run bench` (bench/suite/): medians and the systems' rotation, the flags,
 * the workload registry, the RESULTS.md section (tables, ratios, targets, markers) and the SVG
 * chart, which must parse as XML (checked with Python's XML parser).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { renderChart } from '../../bench/suite/chart.js';
import { renderSection, replaceSection, SECTION_END, SECTION_START, targetsTable, workloadTable, type RunInfo } from '../../bench/suite/report.js';
import { loadWorkloads, parseArgs } from '../../bench/suite/run.js';
import { cpuSecondsPerGB, formatNumber, median, medians, ratio, rotate } from '../../bench/suite/stats.js';
import type { Figure, Sample, Workload } from '../../bench/suite/workload.js';
import { ratioTarget } from '../../bench/suite/workloads/throughput.js';

const fig = (c: string, system: string, value: number, metric = 'MB/s', samples = [value]): Figure => ({
  case: c,
  system,
  metric,
  value,
  samples,
  higherIsBetter: metric === 'MB/s',
});

const workload = (extra: Partial<Workload> = {}): Workload => ({
  name: 'produce',
  title: 'Produce throughput',
  description: 'what it measures',
  systems: ['fjord', 'nats', 'redis', 'dd'],
  run: () => Promise.resolve({ figures: [] }),
  ...extra,
});

describe('bench suite: statistics', () => {
  it('takes the median of odd and even counts, NaN of none', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });

  it('rotates the systems by the repeat index so each goes first in turn', () => {
    assert.deepEqual(rotate(['a', 'b', 'c'], 0), ['a', 'b', 'c']);
    assert.deepEqual(rotate(['a', 'b', 'c'], 1), ['b', 'c', 'a']);
    assert.deepEqual(rotate(['a', 'b', 'c'], 5), ['c', 'a', 'b']);
    assert.deepEqual(rotate([], 3), []);
  });

  it('groups samples by case, system and metric into medians, keeping the samples and first-seen order', () => {
    const s = (c: string, system: string, value: number): Sample => ({ case: c, system, metric: 'MB/s', value, higherIsBetter: true });
    const out = medians([s('x', 'fjord', 10), s('x', 'nats', 1), s('y', 'fjord', 7), s('x', 'fjord', 30), s('x', 'fjord', 20)]);
    assert.deepEqual(
      out.map((f) => [f.case, f.system, f.value, f.samples]),
      [
        ['x', 'fjord', 20, [10, 30, 20]],
        ['x', 'nats', 1, [1]],
        ['y', 'fjord', 7, [7]],
      ],
    );
  });

  it('computes ratios, CPU per GB and cell numbers', () => {
    assert.equal(ratio(6, 2), 3);
    assert.ok(Number.isNaN(ratio(6, 0)));
    assert.ok(Number.isNaN(ratio(undefined, 2)));
    assert.equal(cpuSecondsPerGB(1, 2 ** 29), 2);
    assert.equal(formatNumber(1234.4), '1,234');
    assert.equal(formatNumber(12.345), '12.3');
    assert.equal(formatNumber(Number.NaN), '–');
  });
});

describe('bench suite: flags and workloads', () => {
  it('parses the flags; --quick means one repeat unless --repeats says otherwise', () => {
    const o = parseArgs(['--quick', '--only=produce,consume', '--systems=fjord', '--out=/tmp/r.md', '--svg=/tmp/c.svg']);
    assert.deepEqual(o, { quick: true, only: ['produce', 'consume'], systems: ['fjord'], repeats: 1, out: '/tmp/r.md', svg: '/tmp/c.svg' });
    assert.equal(parseArgs(['--quick', '--repeats=5']).repeats, 5);
    assert.equal(parseArgs([]).repeats, 3);
    assert.equal(parseArgs([]).out, 'bench/RESULTS.md');
    assert.throws(() => parseArgs(['--repeats=0']), /malformed argument --repeats=0/);
    assert.throws(() => parseArgs(['--bogus']), /unknown or malformed argument --bogus/);
    assert.throws(() => parseArgs(['--systems=kafka']), /unknown system kafka/);
  });

  it('finds every workload file, names unique, in report order', async () => {
    const names = (await loadWorkloads()).map((w) => w.name);
    assert.deepEqual(
      names.filter((n) => ['produce', 'consume', 'compression'].includes(n)),
      ['produce', 'consume', 'compression'],
    );
    assert.equal(new Set(names).size, names.length);
  });
});

describe('bench suite: report', () => {
  const figures = [
    fig('1 KiB, 1 partition', 'fjord', 240, 'MB/s', [230, 240, 260]),
    fig('1 KiB, 1 partition', 'nats', 80),
    fig('1 KiB, 1 partition', 'redis', 96),
    fig('1 KiB, 1 partition', 'fjord', 1.1, 'server CPU s/GB'),
    fig('1 KiB, 1 partition', 'nats', 2.2, 'server CPU s/GB'),
    fig('disk limit', 'dd', 480),
  ];

  it('writes a table per workload: a column per system, the range, the ratios of the same run and the limit', () => {
    const table = workloadTable(workload({ limit: 'dd' }), figures).split('\n');
    assert.equal(
      table[0],
      '| case | metric | Fjord, 1 thread | NATS JetStream | Redis Streams | dd (fdatasync) | Fjord/NATS | Fjord/Redis | Fjord/dd (fdatasync) |',
    );
    assert.equal(table[2], '| 1 KiB, 1 partition | MB/s | 240 (230–260) | 80.0 | 96.0 |  | 3.00× | 2.50× | 0.50× |');
    assert.equal(table[3], '| 1 KiB, 1 partition | server CPU s/GB | 1.10 | 2.20 |  |  | 0.50× |  |  |');
    assert.equal(table[4], '| disk limit | MB/s |  |  |  | 480 |  |  |  |');
  });

  it('gives Fjord at all threads a column and its ratio over one thread', () => {
    const withThreads = [...figures, fig('1 KiB, 1 partition', 'fjord-threads', 360)];
    const table = workloadTable(workload({ systems: ['fjord', 'fjord-threads', 'nats'] }), withThreads).split('\n');
    assert.match(table[0]!, /^\| case \| metric \| Fjord, 1 thread \| Fjord, all threads \| NATS JetStream \|.*\| all threads\/1 thread \| Fjord\/NATS \|/);
    assert.match(table[2]!, /^\| 1 KiB, 1 partition \| MB\/s \| 240 \(230–260\) \| 360 \| 80\.0 \|.*\| 1\.50× \| 3\.00× \|/);
  });

  it('judges ratio targets over every row, naming the worst and what held Fjord back', () => {
    const rows = [
      fig('a', 'fjord', 300),
      fig('a', 'nats', 100),
      fig('b', 'fjord', 200),
      fig('b', 'nats', 100),
      fig('b', 'fjord', 97, 'server CPU % of a core'),
      fig('b', 'fjord', 2.5, 'server CPU s/GB'),
      fig('b', 'nats', 10, 'server CPU s/GB'),
    ];
    const missed = ratioTarget('produce ≥ 3× NATS JetStream', rows, 'nats', 3, () => true)!;
    assert.equal(missed.met, false);
    assert.match(missed.figure, /^2\.00× at worst \(b: 200 against 100 MB\/s; server CPU there 2\.50 against 10\.0 s\/GB\), 3\.00× at best \(a\)$/);
    assert.match(missed.note!, /one event loop is saturated on b \(97\.0% of a core\)/);
    const met = ratioTarget('produce ≥ 3× NATS JetStream', rows, 'nats', 3, (c) => c === 'a')!;
    assert.equal(met.met, true);
    assert.equal(
      ratioTarget('x', rows, 'redis', 3, () => true),
      undefined,
    );
    assert.match(targetsTable([missed, met]), /\| produce ≥ 3× NATS JetStream \| \*\*missed\*\* \| 2\.00×.*\n\| produce ≥ 3× NATS JetStream \| met \|/);
  });

  it('replaces only its own section between the markers, or appends it', () => {
    const info: RunInfo = {
      invocation: 'npm run bench',
      startedAt: '2026-12-05T12:00:00Z',
      seconds: 90,
      repeats: 3,
      quick: false,
      nproc: 2,
      cpuModel: 'test CPU',
      loadBefore: '1.00 1.00 1.00',
      loadAfter: '2.00 1.00 1.00',
      commands: ['dd if=/dev/zero of=<log dir>/dd.bench bs=1M count=256 conv=fdatasync'],
    };
    const section = renderSection(
      info,
      [
        { workload: workload({ limit: 'dd' }), result: { figures } },
        { workload: workload({ name: 'x', title: 'Broken' }), error: 'boom' },
      ],
      'suite-chart.svg',
    );
    assert.ok(section.startsWith(SECTION_START) && section.endsWith(SECTION_END));
    assert.match(section, /2 cores \(test CPU\); load average before 1\.00 1\.00 1\.00, after 2\.00 1\.00 1\.00/);
    assert.match(section, /### Broken\n\nwhat it measures\n\n\*\*Failed:\*\* boom/);
    assert.match(section, /```\ndd if=\/dev\/zero .*conv=fdatasync\n```/);
    const original = '# Results\n\n## Earlier\n\ntext\n';
    const once = replaceSection(original, section);
    assert.equal(once, `${original}\n${section}\n`);
    const twice = replaceSection(`${once}## Later\n`, section.replace('90 s', '91 s'));
    assert.equal(twice, `${original}\n${section.replace('90 s', '91 s')}\n## Later\n`);
  });

  it('draws grouped bars of the primary metric as an SVG that parses, with escaped labels', () => {
    const svg = renderChart(
      [
        { workload: workload({ limit: 'dd' }), result: { figures: [...figures, fig('<&> "odd"', 'fjord', 5)] } },
        {
          workload: workload({ name: 'latency', title: 'Latency', primary: 'p99 ms', systems: ['fjord'] }),
          result: { figures: [fig('50%', 'fjord', 3, 'p99 ms')] },
        },
        { workload: workload({ name: 'none', title: 'Nothing' }), error: 'boom' },
      ],
      'chart & title',
    );
    const py = spawnSync(
      '/usr/bin/python3',
      [
        '-c',
        'import sys, xml.etree.ElementTree as E; r = E.fromstring(sys.stdin.read()); ns = "{http://www.w3.org/2000/svg}"; ' +
          'print(len([x for x in r.iter(ns + "rect") if x.find(ns + "title") is not None]), "|".join(t.text for t in r.iter(ns + "title")))',
      ],
      { input: svg, encoding: 'utf8' },
    );
    assert.equal(py.status, 0, py.stderr);
    // Bars: 3 MB/s figures + the odd one in the first panel (dd, the limit, is a dashed line), 1 in the latency panel; the failed workload has none.
    const out = py.stdout.trim();
    const bars = out.slice(0, out.indexOf(' '));
    const titles = out.slice(out.indexOf(' ') + 1);
    assert.equal(bars, '5');
    assert.match(py.stdout, /Fjord, 1 thread, <&> "odd": 5\.00 MB\/s/);
    assert.match(titles, /^Fjord, 1 thread, 1 KiB, 1 partition: 240 MB\/s/);
    // dd at 480 is off a scale that ends at 240 (more than 1.5×): a note, no line; at 300 it is a dashed line on the scale.
    assert.match(svg, /<text [^>]*>dd \(fdatasync\): 480 MB\/s \(off the scale\)<\/text>/);
    assert.doesNotMatch(svg, /stroke-dasharray/);
    const onScale = renderChart([{ workload: workload({ limit: 'dd' }), result: { figures: [fig('a', 'fjord', 240), fig('disk limit', 'dd', 300)] } }], 't');
    assert.match(onScale, /<line [^>]*y1="90\.0" [^>]*stroke-dasharray="6 4"\/><text [^>]*>dd \(fdatasync\): 300 MB\/s<\/text>/);
    // A compared system with a figure in the same rows (three brokers beside one) is bars, not a line.
    const compared = renderChart(
      [
        {
          workload: workload({ limit: 'fjord-rf3' }),
          result: { figures: [fig('a', 'fjord', 200), fig('a', 'fjord-rf3', 100), fig('b', 'fjord', 50), fig('b', 'fjord-rf3', 40)] },
        },
      ],
      't',
    );
    assert.doesNotMatch(compared, /stroke-dasharray/);
    assert.equal(compared.match(/<title>Fjord, 3 brokers RF 3, [ab]: /g)?.length, 2);
    assert.match(svg, /Latency \(p99 ms\)/);
    assert.doesNotMatch(svg, /Nothing/);
  });
});
