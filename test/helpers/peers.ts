/**
 * Real peers (kcat, Python clients, ZooKeeper). Outside CI a missing peer skips its test; in CI
 * (CI=true) a missing peer fails it, so a green run always means the peer really ran.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';

export const PYTHON = '/usr/bin/python3';

const checks: Record<string, () => boolean> = {
  kcat: () => spawnSync('kcat', ['-V']).status === 0,
  'python3-confluent-kafka': () => spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0,
  'python3-kafka': () => spawnSync(PYTHON, ['-c', 'import kafka']).status === 0,
  // The server runs on the JVM: the jar without java is no ZooKeeper.
  zookeeper: () =>
    existsSync('/usr/share/java/zookeeper.jar') && existsSync('/usr/share/zookeeper/bin/zkCli.sh') && spawnSync('java', ['-version']).status === 0,
  'redis-server': () => spawnSync('redis-server', ['--version']).status === 0,
  // Debian's burrow package installs the binary as /usr/bin/Burrow (capital B).
  burrow: () => spawnSync('Burrow', ['--help']).status === 0,
  // Debian's prometheus package brings promtool beside the server.
  prometheus: () => spawnSync('prometheus', ['--version']).status === 0 && spawnSync('promtool', ['--version']).status === 0,
  // Debian's chromium, which playwright-core drives for the console's browser tests (never a downloaded browser).
  chromium: () => existsSync('/usr/bin/chromium') && spawnSync('/usr/bin/chromium', ['--version']).status === 0,
};

/** Whether the peer is installed (for a `before` hook; tests still call requirePeer). */
export function hasPeer(peer: keyof typeof checks): boolean {
  return checks[peer]!();
}

/** Returns true when the peer is there; otherwise skips (or, in CI, fails) the test. */
export function requirePeer(t: TestContext, peer: keyof typeof checks): boolean {
  if (hasPeer(peer)) return true;
  if (process.env.CI === 'true') throw new Error(`required peer ${peer} is not installed (CI=true)`);
  t.skip(`${peer} is not installed`);
  return false;
}
