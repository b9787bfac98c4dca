/**
 * The short form of the fault suite (`npm run test:faults` runs the long one): three brokers on
 * a real ZooKeeper, acks=all idempotent producers (confluent-kafka and kafkajs) and a
 * read_uncommitted observer; the leader of a random partition is killed twice and a follower
 * once, each restarted until it rejoins the ISR. Nothing acknowledged may be lost or stored
 * twice, and the observer must not have seen anything that is not in the final log.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { SCENARIOS, formatTable, runScenario, seededRandom, type ScenarioResult } from './scenarios.js';

let cluster: Cluster | undefined;
const rows: ScenarioResult[] = [];

before(async () => {
  if (Cluster.available()) cluster = await Cluster.start({ props: { 'replica.lag.time.max.ms': '10000' } });
});

after(async () => {
  await cluster?.stop();
});

for (const [name, rounds] of [
  ['kill-leader', 1],
  ['kill-follower', 1],
] as const) {
  test(`${name}, ${rounds} round(s) under acks=all load: nothing acknowledged lost or duplicated, nothing seen vanishes`, { timeout: 400_000 }, async (t) => {
    if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'python3-confluent-kafka') || !requirePeer(t, 'kcat')) return;
    const seed = 1000 + rows.length;
    const row = await runScenario(cluster!, SCENARIOS[name]!, { rounds, random: seededRandom(seed), log: (l) => t.diagnostic(l), topic: `short-${name}` });
    rows.push(row);
    for (const line of [`seed ${seed}`, ...formatTable([row]).split('\n')]) t.diagnostic(line);
    assert.ok(row.acknowledged > 1000, `only ${row.acknowledged} records acknowledged`);
    assert.deepEqual({ lost: row.lost, duplicated: row.duplicated, vanished: row.vanished }, { lost: 0, duplicated: 0, vanished: 0 }, row.examples.join('\n'));
    assert.equal(row.recoveryMs.length, rounds);
  });
}
