/**
 * npm run fuzz -- --cluster [--minutes N | --seconds N] [--min-rounds N] [--seed N] [--load-rate N]
 *   [--f1-topics N] [--f2-names N] [--f2-unread N] [--idle-connections N] [--hold-ms N]
 *   [--fuzz-rate N] [--bombs none|a,b,...] [--rss-bound-mb N] [--rss-kill-mb N]
 *   [--p99-bound-ms N] [--session-timeout-ms N] [--json FILE]
 * The liveness soak (soak.ts). Prints the report's tables and exits 0 when every verdict holds,
 * 1 when one does not, 2 on a usage error.
 */
import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { bombSet } from '../bombs.js';
import { LIVENESS_DEFAULTS, MB } from './options.js';
import { formatReport, verdict } from './report.js';
import { runLiveness } from './soak.js';

function int(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}

export async function clusterMain(argv: readonly string[]): Promise<number> {
  const d = LIVENESS_DEFAULTS;
  const known = bombSet('short').map((b) => b.name);
  const program = new Command('fuzz --cluster')
    .description('Liveness soak: the attacks of issue 21 against a 3-broker cluster under replicated acks=all load and a consumer group')
    .option('--cluster', 'this mode')
    .option('--minutes <n>', 'attack time in minutes', int('--minutes'), d.attackMs / 60_000)
    .option('--seconds <n>', 'attack time in seconds (instead of --minutes)', int('--seconds'))
    .option('--min-rounds <n>', 'rounds at least, however short the attack time', int('--min-rounds'), d.minRounds)
    .option('--seed <n>', 'seed of the fuzz stream', int('--seed'), d.seed)
    .option('--load-rate <n>', 'records/s of each of the two acks=all producers', int('--load-rate'), d.loadRate)
    .option('--f1-topics <n>', 'F1: new topic names in one Metadata request', int('--f1-topics'), d.f1Topics)
    .option('--f2-names <n>', 'F2: times one DescribeConfigs names the broker', int('--f2-names'), d.f2Names)
    .option('--f2-unread <n>', 'F2: copies pipelined on a connection that never reads', int('--f2-unread'), d.f2Unread)
    .option('--idle-connections <n>', 'F5: idle connections per round', int('--idle-connections'), d.idleConnections)
    .option('--hold-ms <n>', 'how long unread answers and idle connections are held', int('--hold-ms'), d.holdMs)
    .option('--fuzz-rate <n>', 'mutated inputs/s beside the rounds (0: none)', int('--fuzz-rate'), d.fuzzRate)
    .option('--bombs <list>', `none, or a comma-separated list of: ${known.join(', ')}`, d.bombs.join(','))
    .option('--attack-timeout-ms <n>', 'how long one attack may take', int('--attack-timeout-ms'), d.attackTimeoutMs)
    .option('--rss-bound-mb <n>', 'verdict: RSS bound of every broker', int('--rss-bound-mb'), d.rssBoundBytes / MB)
    .option('--rss-kill-mb <n>', 'kill a broker past this RSS (protects the machine)', int('--rss-kill-mb'), d.rssKillBytes / MB)
    .option('--p99-bound-ms <n>', "verdict: bound of every side client's p99 latency", int('--p99-bound-ms'), d.p99BoundMs)
    .option('--session-timeout-ms <n>', "the brokers' zookeeper.session.timeout.ms", int('--session-timeout-ms'), d.sessionTimeoutMs)
    .option('--json <file>', 'also write the report as JSON')
    .exitOverride();
  try {
    program.parse([...argv]);
  } catch (e) {
    return (e as { exitCode?: number }).exitCode === 0 ? 0 : 2;
  }
  const o = program.opts<{
    minutes: number;
    seconds?: number;
    minRounds: number;
    seed: number;
    loadRate: number;
    f1Topics: number;
    f2Names: number;
    f2Unread: number;
    idleConnections: number;
    holdMs: number;
    fuzzRate: number;
    bombs: string;
    attackTimeoutMs: number;
    rssBoundMb: number;
    rssKillMb: number;
    p99BoundMs: number;
    sessionTimeoutMs: number;
    json?: string;
  }>();
  const bombs =
    o.bombs === 'none'
      ? []
      : o.bombs
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  const unknown = bombs.filter((b) => !known.includes(b));
  if (unknown.length > 0) {
    process.stderr.write(`unknown bomb ${unknown.join(', ')}; known: ${known.join(', ')}\n`);
    return 2;
  }
  const report = await runLiveness({
    attackMs: o.seconds !== undefined ? o.seconds * 1000 : o.minutes * 60_000,
    minRounds: o.minRounds,
    seed: o.seed,
    loadRate: o.loadRate,
    f1Topics: o.f1Topics,
    f2Names: o.f2Names,
    f2Unread: o.f2Unread,
    idleConnections: o.idleConnections,
    holdMs: o.holdMs,
    fuzzRate: o.fuzzRate,
    bombs,
    attackTimeoutMs: o.attackTimeoutMs,
    rssBoundBytes: o.rssBoundMb * MB,
    rssKillBytes: o.rssKillMb * MB,
    p99BoundMs: o.p99BoundMs,
    sessionTimeoutMs: o.sessionTimeoutMs,
    log: (l) => console.log(`${new Date().toISOString()} ${l}`),
  });
  console.log('\n=== liveness soak report ===');
  for (const l of formatReport(report)) console.log(l);
  if (o.json) writeFileSync(o.json, JSON.stringify(report, null, 2));
  const problems = verdict(report);
  console.log(problems.length === 0 ? 'RESULT: pass' : `RESULT: FAIL (${problems.join('; ')})`);
  return problems.length === 0 ? 0 : 1;
}
