/**
 * npm run fuzz -- [--inputs N] [--soak] [--seed N] [--bombs all|none|name,...] [--concurrency N]
 *                 [--bootstrap-server host:port] [--full-bombs] [--rss-bound-mb N] [--rss-kill-mb N]
 *                 [--fresh-probe-every N] [--side-rate N] [--json FILE] [--memory-log FILE]
 *                 [--broker-prop key=value]... (e.g. num.io.threads=3: the partitions on shard workers)
 * Builds nothing itself: `npm run fuzz` builds dist/ first. Prints the figures at the end and
 * exits 1 when the broker went down, a probe went unanswered, RSS passed its bound, the side
 * clients lost throughput, or a bomb hurt the broker.
 * `--cluster` is the liveness soak against a 3-broker cluster instead (liveness/cli.ts has its flags).
 */
import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { DEFAULTS, formatReport, runFuzz, verdict } from './fuzz.js';
import { bombSet, TRICKLE_BOMB } from './bombs.js';

const SOAK_INPUTS = 1_000_000;

function int(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}

/** Collects repeated `--broker-prop key=value` flags into the broker's extra properties. */
function brokerProp(v: string, props: Record<string, string>): Record<string, string> {
  const eq = v.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('--broker-prop takes key=value');
  return { ...props, [v.slice(0, eq)]: v.slice(eq + 1) };
}

async function main(): Promise<number> {
  if (process.argv.includes('--cluster')) return (await import('./liveness/cli.js')).clusterMain(process.argv);
  const names = [...bombSet('full'), ...bombSet('short')].map((b) => b.name);
  const program = new Command('fuzz')
    .description('Fuzzes a Fjord broker: mutated real-client requests, random frames and decompression/resource bombs')
    .option('--inputs <n>', 'inputs to send', int('--inputs'), DEFAULTS.inputs)
    .option('--soak', `soak mode: at least ${SOAK_INPUTS} inputs and the bombs at full size`)
    .option('--seed <n>', 'PRNG seed (runs are reproducible)', int('--seed'), DEFAULTS.seed)
    .option('--concurrency <n>', 'connections fuzzed at once', int('--concurrency'), DEFAULTS.concurrency)
    .option('--bombs <list>', `all, none, or a comma-separated list of: ${[...new Set(names)].join(', ')}, ${TRICKLE_BOMB}`, 'all')
    .option('--full-bombs', 'the bombs at the sizes of the issue (1 GB, 900 MB, 12 x 90 MB) even without --soak')
    .option('--bootstrap-server <host:port>', 'fuzz a broker that is already running (no RSS figures, no restarts)')
    .option('--rss-bound-mb <n>', 'RSS bound the broker must stay under', int('--rss-bound-mb'), DEFAULTS.rssBoundBytes / 2 ** 20)
    .option('--rss-kill-mb <n>', 'kill the broker past this RSS (protects the machine)', int('--rss-kill-mb'), DEFAULTS.rssKillBytes / 2 ** 20)
    .option('--fresh-probe-every <n>', 'probe on a fresh connection after every Nth fuzzed connection', int('--fresh-probe-every'), DEFAULTS.freshProbeEvery)
    .option('--side-rate <n>', 'records/s of the side producer', int('--side-rate'), DEFAULTS.sideRate)
    .option('--json <file>', 'also write the report as JSON')
    .option('--memory-log <file>', "append the broker's once-a-second process.memoryUsage() here (JSON lines)")
    .option('--broker-prop <key=value>', 'a property for the broker it starts (repeatable), e.g. num.io.threads=3', brokerProp, {})
    .exitOverride();
  try {
    program.parse(process.argv);
  } catch (e) {
    const code = (e as { exitCode?: number }).exitCode;
    return code === 0 ? 0 : 2;
  }
  const o = program.opts<{
    inputs: number;
    soak?: boolean;
    seed: number;
    concurrency: number;
    bombs: string;
    fullBombs?: boolean;
    bootstrapServer?: string;
    rssBoundMb: number;
    rssKillMb: number;
    sideRate: number;
    freshProbeEvery: number;
    json?: string;
    memoryLog?: string;
    brokerProp: Record<string, string>;
  }>();
  const bombs =
    o.bombs === 'none'
      ? []
      : o.bombs
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  for (const b of bombs)
    if (b !== 'all' && b !== TRICKLE_BOMB && !names.includes(b)) {
      process.stderr.write(`unknown bomb ${b}; known: ${[...new Set(names)].join(', ')}, ${TRICKLE_BOMB}\n`);
      return 2;
    }
  const full = o.soak === true || o.fullBombs === true;
  const report = await runFuzz({
    ...DEFAULTS,
    inputs: o.soak ? Math.max(o.inputs === DEFAULTS.inputs ? SOAK_INPUTS : o.inputs, SOAK_INPUTS) : o.inputs,
    seed: o.seed,
    concurrency: o.concurrency,
    bombs,
    bombScale: full ? 'full' : 'short',
    ...(o.bootstrapServer ? { bootstrapServer: o.bootstrapServer } : {}),
    rssBoundBytes: o.rssBoundMb * 2 ** 20,
    rssKillBytes: o.rssKillMb * 2 ** 20,
    sideRate: o.sideRate,
    freshProbeEvery: Math.max(1, o.freshProbeEvery),
    bombDeadlineMs: full ? 120_000 : DEFAULTS.bombDeadlineMs,
    trickleMs: full ? 60_000 : DEFAULTS.trickleMs,
    ...(o.memoryLog ? { memoryLog: o.memoryLog } : {}),
    brokerProps: o.brokerProp,
    log: (l) => console.log(l),
  });
  console.log('\n=== fuzz report ===');
  for (const l of formatReport(report)) console.log(l);
  if (o.json) writeFileSync(o.json, JSON.stringify(report, null, 2));
  const problems = verdict(report, { rssBoundBytes: o.rssBoundMb * 2 ** 20 });
  console.log(problems.length === 0 ? 'RESULT: pass' : `RESULT: FAIL (${problems.join('; ')})`);
  return problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`fuzz: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
