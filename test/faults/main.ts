/**
 * The fault suite: `npm run test:faults -- [--rounds N] [--scenarios a,b] [--seed S] [--soak]`.
 * Starts ZooKeeper and three brokers, runs each scenario (scenarios.ts) on its own topic under
 * acks=all load, and prints one table: scenario, faults injected, records acknowledged, lost,
 * duplicated, seen by a consumer then vanished, time to recover. Exits 1 when anything
 * acknowledged was lost, duplicated, or a consumer saw a record that vanished.
 *
 * - `--rounds` (default 20): kills per kill scenario; `--soak` multiplies them by 5.
 * - `--seed` (default: the time): the same seed injects the faults at the same points of the load.
 * - `kip848-chaos` (a scenario name, run last, on a broker of its own): a KIP-848 group's members
 *   killed -9 and restarted at random for `--chaos-seconds` (default 300; 900 with `--soak`), see
 *   test/helpers/chaos-members/chaos.ts; it prints its own line after the table.
 */
import { Cluster } from '../helpers/cluster.js';
import { SCENARIOS, formatTable, runScenario, seededRandom, type ScenarioResult } from './scenarios.js';
import { runKip848Chaos, type ChaosResult } from '../helpers/chaos-members/chaos.js';

const CHAOS = 'kip848-chaos';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const USAGE = `npm run test:faults -- [--rounds N] [--scenarios a,b] [--seed S] [--soak] [--chaos-seconds N]
  scenarios: ${[...Object.keys(SCENARIOS), CHAOS].join(', ')} (default: all)
  The other scenarios run on a ZooKeeper cluster of three brokers: single-threaded whatever
  FJORD_TEST_IO_THREADS says (cluster mode). ${CHAOS} runs on one embedded broker of its own,
  started through test/helpers, so FJORD_TEST_IO_THREADS=N reaches it.
`;

async function main(): Promise<number> {
  // Without this, --help (an unknown flag) would start the whole suite: minutes of kills.
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const soak = process.argv.includes('--soak');
  const rounds = Number(flag('rounds') ?? 20) * (soak ? 5 : 1);
  const seed = Number(flag('seed') ?? Date.now() % 1_000_000);
  const known = [...Object.keys(SCENARIOS), CHAOS];
  const chosen = (flag('scenarios') ?? known.join(',')).split(',');
  const unknown = chosen.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown scenario ${unknown.join(', ')}; known: ${known.join(', ')}\n`);
    return 2;
  }
  const names = chosen.filter((n) => n !== CHAOS);
  const chaosSeconds = chosen.includes(CHAOS) ? Number(flag('chaos-seconds') ?? (soak ? 900 : 300)) : 0;
  if (names.length > 0 && !Cluster.available()) {
    process.stderr.write("Debian's zookeeper package is not installed (scripts/install-test-deps.sh installs it)\n");
    return 2;
  }
  const random = seededRandom(seed);
  const log = (l: string): void => void process.stderr.write(`${new Date().toISOString()} ${l}\n`);
  log(`seed ${seed}, ${rounds} rounds per kill scenario, scenarios: ${chosen.join(', ')}`);
  const rows: ScenarioResult[] = [];
  const failures: string[] = [];
  const cluster = names.length > 0 ? await Cluster.start({ props: { 'replica.lag.time.max.ms': '10000' } }) : null;
  try {
    for (const [i, name] of names.entries()) {
      // A scenario that cannot finish (the cluster did not recover in time) is a failure of its
      // own; the next scenarios still run, on a fresh topic, so their figures are not lost.
      try {
        const row = await runScenario(cluster!, SCENARIOS[name]!, { rounds, random, log, topic: `faults-${i}` });
        for (const e of row.examples) log(`${name}: ${e}`);
        log(`done: ${formatTable([row]).split('\n')[2]}`);
        rows.push(row);
      } catch (err) {
        const why = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
        failures.push(`${SCENARIOS[name]!.name}: ${why}`);
        log(`FAILED ${name}: ${why}`);
      }
    }
  } finally {
    await cluster?.stop();
  }
  // The KIP-848 chaos needs no cluster (one broker of its own): run after the cluster is gone.
  let chaos: ChaosResult | null = null;
  if (chaosSeconds > 0) {
    log(`${CHAOS}: ${chaosSeconds} s`);
    chaos = await runKip848Chaos({ seconds: chaosSeconds, random, log }).catch((err: unknown) => {
      failures.push(`${CHAOS}: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    });
    for (const v of chaos?.violations ?? []) log(`${CHAOS}: ${v}`);
  }
  const failed = failures.length === 0 ? '' : `\nscenarios that did not finish:\n${failures.map((f) => `- ${f}`).join('\n')}\n`;
  const chaosLine =
    chaos === null
      ? ''
      : `\n${CHAOS} (${chaosSeconds} s): ${chaos.kills} kills, ${chaos.starts} member starts, ${chaos.acked} records acknowledged, ${chaos.consumed} consumed, ${chaos.violations.length} violations${chaos.violations.length > 0 ? ` (first: ${chaos.violations[0]})` : ''}\n`;
  process.stdout.write(`seed ${seed}\n\n${rows.length > 0 ? `${formatTable(rows)}\n` : ''}${chaosLine}${failed}`);
  const clean = rows.every((r) => r.lost === 0 && r.duplicated === 0 && r.vanished === 0) && (chaos?.violations.length ?? 0) === 0;
  return failures.length === 0 && clean ? 0 : 1;
}

process.exitCode = await main();
