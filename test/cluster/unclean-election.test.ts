/**
 * Unclean leader election on a real cluster (three broker processes, real ZooKeeper, kcat), as
 * issue 12 asks: a topic with replication factor 2 on brokers [a, b] (neither the controller),
 * min.insync.replicas=1. b freezes (SIGSTOP) until the ISR is [a]; records acknowledged by a
 * alone follow; a is killed -9 and b thaws. With unclean.leader.election.enable=false (the
 * default) the partitions stay offline (leader -1, producers fail) rather than elect the stale b.
 * Then kafka-leader-election.sh --election-type UNCLEAN elects b for partition 0 only, and
 * setting the topic's unclean.leader.election.enable=true (kafka-configs.sh) elects it for
 * partition 1; the controller logs the unclean election, and the records only a had are gone
 * (counted with kcat). Restarted, a truncates to b's log: its unreplicated tail never reappears,
 * and it rejoins the ISR.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Cluster, SESSION_TIMEOUT_MS } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { runCli } from '../cli/helpers.js';
import { kafkaTopics, kcatMetadata, waitForTopic, zkTopic } from './cluster-clients.js';

const TOPIC = 'uncl';
const LAG_MS = 3000;
const NOTICE_MS = SESSION_TIMEOUT_MS * 5;

let c: Cluster | undefined;
before(async () => {
  if (Cluster.available()) c = await Cluster.start({ props: { 'replica.lag.time.max.ms': String(LAG_MS) } });
});
after(() => c?.stop());

/** kcat -P: one record per value to `partition`; resolves with kcat's exit code and stderr. */
async function kcatProduce(
  bootstrap: string,
  partition: number,
  values: string[],
  acks: 'all' | '1',
  timeoutMs = 30_000,
): Promise<{ code: number | null; stderr: string }> {
  const r = await run(
    'kcat',
    [
      '-b',
      bootstrap,
      '-P',
      '-t',
      TOPIC,
      '-p',
      String(partition),
      '-X',
      `request.required.acks=${acks === 'all' ? -1 : 1}`,
      '-X',
      `message.timeout.ms=${timeoutMs}`,
    ],
    {
      input: values.map((v) => `${v}\n`).join(''),
      timeoutMs: timeoutMs + 30_000,
    },
  );
  return { code: r.code, stderr: r.stderr };
}

/** Every value of `partition` from the beginning to the end (kcat -C -e). */
async function kcatRead(bootstrap: string, partition: number): Promise<string[]> {
  const r = await run('kcat', ['-b', bootstrap, '-C', '-t', TOPIC, '-p', String(partition), '-o', 'beginning', '-e', '-q', '-f', '%s\\n'], {
    timeoutMs: 60_000,
  });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l !== '');
}

const values = (prefix: string, p: number, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-p${p}-${i}`);

test('unclean.leader.election.enable=false keeps a partition whose ISR died offline; an UNCLEAN election (tool or topic config) elects the stale replica, loses the tail, and the old leader truncates to it', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'kcat')) return;
  const cluster = c!;
  await cluster.waitForRegistered([0, 1, 2]);
  const ctl = (await cluster.waitForController()).brokerId;
  const [a, b] = [0, 1, 2].filter((id) => id !== ctl) as [number, number];
  const created = await kafkaTopics(
    '--create',
    '--topic',
    TOPIC,
    '--bootstrap-server',
    cluster.bootstrap(),
    '--replica-assignment',
    `${a}:${b},${a}:${b}`,
    '--config',
    'min.insync.replicas=1',
  );
  assert.equal(created.code, 0, created.stderr);
  await waitForTopic(cluster, TOPIC);
  await cluster.waitFor(`${TOPIC}'s ISRs [${a},${b}]`, 30_000, async () =>
    (await zkTopic(cluster, TOPIC))?.partitions.every((p) => p.leader === a && p.isr.length === 2),
  );

  // Records both replicas hold (acks=all with the ISR [a, b]).
  for (const p of [0, 1]) {
    const r = await kcatProduce(cluster.broker(a).bootstrap, p, values('both', p, 100), 'all');
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Delivery failed/);
  }
  const tp0 = (await zkTopic(cluster, TOPIC))!;
  assert.ok(
    tp0.partitions.every((p) => p.isr.length === 2),
    'b was in the ISR when the acks=all records were answered',
  );

  // b freezes; a record it lacks makes it fall behind, and out of the ISR.
  const frozenAt = Date.now();
  cluster.broker(b).pause();
  let onlyA: number;
  try {
    for (const p of [0, 1]) assert.equal((await kcatProduce(cluster.broker(a).bootstrap, p, values('lag', p, 1), '1')).code, 0);
    await cluster.waitFor(`the ISRs to shrink to [${a}]`, NOTICE_MS, async () =>
      (await zkTopic(cluster, TOPIC))?.partitions.every((p) => p.leader === a && p.isr.join() === String(a)),
    );
    t.diagnostic(`ISR [${a}] ${Date.now() - frozenAt} ms after broker ${b} froze (replica.lag.time.max.ms=${LAG_MS}, session ${SESSION_TIMEOUT_MS} ms)`);
    // acks=all is answered by a alone now (min.insync.replicas=1).
    onlyA = 50;
    for (const p of [0, 1]) {
      const r = await kcatProduce(cluster.broker(a).bootstrap, p, values('only-a', p, onlyA), 'all');
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /Delivery failed/);
    }
    await cluster.broker(a).kill();
  } finally {
    cluster.broker(b).resume();
  }
  await cluster.expireDead(a); // a's session closed at once, after the thaw (the freeze stays as it was)

  // a's session is gone; b (its own session expired while frozen) registers again. Kafka's default keeps the partitions offline.
  await cluster.waitForRegistered([ctl, b], NOTICE_MS);
  const offline = await cluster.waitFor(`${TOPIC} offline (leader -1)`, NOTICE_MS, async () => {
    const x = await zkTopic(cluster, TOPIC);
    return x?.partitions.every((p) => p.leader === -1) ? x : undefined;
  });
  for (const p of offline.partitions) assert.deepEqual(p.isr, [a], 'the ISR keeps its last member, the dead a');
  const bs = cluster.bootstrap([ctl, b]);
  await cluster.waitFor(`broker ${b}'s Metadata: ${TOPIC} without a leader`, 30_000, async () => {
    const md = await kcatMetadata(cluster.broker(b).bootstrap, TOPIC);
    return md.brokers.join() === [ctl, b].sort().join() && md.partitions.length === 2 && md.partitions.every((p) => p.leader === -1);
  });
  // A producer gets no acknowledgement (nothing leads), however long it tries within its timeout.
  const refused = await kcatProduce(bs, 0, ['while-offline'], 'all', 5000);
  assert.match(refused.stderr, /Delivery failed|timed out|Leader not available/i, `a produce to the offline partition: ${refused.stderr.slice(-500)}`);
  const still = (await zkTopic(cluster, TOPIC))!;
  assert.ok(
    still.partitions.every((p) => p.leader === -1),
    `still offline after broker ${b} is back: ${JSON.stringify(still.partitions)}`,
  );

  // An UNCLEAN election through the tool elects b for partition 0, and only for it.
  const elected = await runCli('kafka-leader-election', ['--bootstrap-server', bs, '--election-type', 'UNCLEAN', '--topic', TOPIC, '--partition', '0'], {
    timeoutMs: 60_000,
  });
  assert.equal(elected.code, 0, elected.stderr);
  assert.equal(elected.stdout, `Successfully completed leader election (UNCLEAN) for partitions ${TOPIC}-0\n`);
  const after0 = await cluster.waitFor(`${TOPIC}-0 led by ${b}`, 30_000, async () => {
    const x = await zkTopic(cluster, TOPIC);
    return x?.partitions[0]?.leader === b ? x : undefined;
  });
  assert.deepEqual(after0.partitions[0]!.isr, [b]);
  assert.equal(after0.partitions[1]!.leader, -1, 'partition 1 was not asked for');

  // The topic config allows unclean elections: the controller elects b for partition 1 too.
  const configured = await runCli(
    'kafka-configs',
    ['--bootstrap-server', bs, '--alter', '--entity-type', 'topics', '--entity-name', TOPIC, '--add-config', 'unclean.leader.election.enable=true'],
    { timeoutMs: 60_000 },
  );
  assert.equal(configured.code, 0, configured.stderr);
  await cluster.waitFor(
    `${TOPIC}-1 led by ${b} after the topic config change`,
    30_000,
    async () => (await zkTopic(cluster, TOPIC))?.partitions[1]?.leader === b,
  );

  // The controller said so in its log, once per partition.
  const warnings = readFileSync(cluster.broker(ctl).logFile, 'utf8')
    .split('\n')
    .filter((l) => /unclean leader election/i.test(l) && l.includes(TOPIC));
  t.diagnostic(`controller log: ${warnings[0]?.slice(0, 200)}`);
  assert.equal(warnings.length, 2, warnings.join('\n'));

  // The records only a had are gone. b's log holds the records both had, and perhaps a's acks=1
  // 'lag' record: a fetch b had in flight when it froze may have carried it.
  const onBLog = new Map<number, string[]>();
  for (const p of [0, 1]) {
    const onB = await cluster.waitFor(`kcat to read ${TOPIC}-${p} from ${b}`, 30_000, async () => kcatRead(bs, p));
    onBLog.set(p, onB);
    const lost = values('only-a', p, onlyA!).filter((v) => !onB.includes(v)).length;
    t.diagnostic(`${TOPIC}-${p} after the unclean election: ${onB.length} records on broker ${b}; ${lost} of the ${onlyA!} acknowledged by a alone lost`);
    assert.deepEqual(onB.slice(0, 100), values('both', p, 100));
    assert.deepEqual(
      onB.slice(100).filter((v) => v !== `lag-p${p}-0`),
      [],
      `${TOPIC}-${p} on ${b} past the shared records`,
    );
    assert.equal(lost, onlyA!, 'b was frozen while a alone acknowledged them');
  }
  // New records on the new leader, at the offsets a's lost tail had.
  for (const p of [0, 1]) {
    const r = await kcatProduce(bs, p, values('after', p, 20), 'all');
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Delivery failed/);
  }

  // a comes back: it truncates to b's log, catches up and rejoins the ISR.
  await cluster.broker(a).start();
  const rejoinedAt = Date.now();
  await cluster.waitFor(`broker ${a} back in the ISRs`, 120_000, async () => (await zkTopic(cluster, TOPIC))?.partitions.every((p) => p.isr.length === 2));
  t.diagnostic(`broker ${a} rejoined both ISRs ${Date.now() - rejoinedAt} ms after its restart`);
  // Make a the leader again (its preferred place) and read its own log: exactly b's records.
  for (const p of [0, 1]) {
    const preferred = await runCli(
      'kafka-leader-election',
      ['--bootstrap-server', cluster.bootstrap(), '--election-type', 'PREFERRED', '--topic', TOPIC, '--partition', String(p)],
      { timeoutMs: 60_000 },
    );
    assert.equal(preferred.code, 0, preferred.stderr);
  }
  await cluster.waitFor(`${TOPIC} led by ${a} again`, 30_000, async () => (await zkTopic(cluster, TOPIC))?.partitions.every((p) => p.leader === a));
  for (const p of [0, 1]) {
    const want = [...onBLog.get(p)!, ...values('after', p, 20)];
    const onA = await cluster.waitFor(`kcat to read ${TOPIC}-${p} from ${a}`, 30_000, async () => {
      const got = await kcatRead(cluster.broker(a).bootstrap, p);
      return got.length >= want.length ? got : undefined;
    });
    assert.deepEqual(onA, want, `${TOPIC}-${p} on broker ${a}: its unreplicated tail never reappears`);
  }
});
