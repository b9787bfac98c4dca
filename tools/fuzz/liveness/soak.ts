/**
 * The liveness soak of issue 21 (`npm run fuzz -- --cluster`): ZooKeeper and three brokers,
 * a topic with replication factor 3 and min.insync.replicas 2 under two paced idempotent
 * acks=all producers (test/faults/workload.ts, the fault suite's load), a consumer group and a
 * prober beside them (side.ts), and rounds of the attacks (rounds.ts) plus the
 * fuzzer's mutations (fuzz-stream.ts) until the attack time is up. Then the load runs on a
 * little, everything acknowledged is read back and judged (test/faults/verify.ts), and the
 * report says whether any session expired, any leader or controller moved, any broker's RSS
 * passed its bound and any side client's p99 latency passed its own (report.ts).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Admin, ErrorCode, type KafkaError, type NewTopic } from '../../../src/client/index.js';
import { isRetriable } from '../../../src/protocol/errors.js';
import { judge, readLog } from '../../../test/faults/verify.js';
import { Workload } from '../../../test/faults/workload.js';
import { FuzzConnection } from '../wire.js';
import { LivenessCluster } from './cluster.js';
import { FuzzStream } from './fuzz-stream.js';
import { Histogram } from './histogram.js';
import { BROKERS, GROUP_ID, LOAD_PARTITIONS, LOAD_TOPIC, type LivenessOptions } from './options.js';
import { verdict, type BrokerFigures, type LivenessReport } from './report.js';
import { bombTopicOwner, Rounds, TOPIC_BOMBS } from './rounds.js';
import { SideClients } from './side.js';
import { ZkWatch } from './zk-watch.js';

const SETUP_TIMEOUT_MS = 90_000;
/** The well-behaved clients' baseline, measured before the first attack. */
const BASELINE_MS = 5000;

/** Polls `probe` every 250 ms until it is true, or throws after `ms` naming `what`. */
async function until(what: string, ms: number, probe: () => Promise<boolean> | boolean): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      // ZooKeeper or a broker not ready yet: try again until the deadline
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Creates a topic, again while the brokers do not know the new controller yet. A new Admin each
 * time: the project's Admin asks the controller it learnt first and does not look again on
 * NOT_CONTROLLER.
 */
async function createTopic(bootstrap: string, topic: NewTopic): Promise<void> {
  const end = Date.now() + SETUP_TIMEOUT_MS;
  for (;;) {
    const admin = new Admin({ bootstrapServers: bootstrap, connectTimeoutMs: 30_000 });
    let err: KafkaError | null | undefined;
    try {
      err = (await admin.createTopics([topic])).get(topic.name);
    } finally {
      await admin.close();
    }
    if (!err || err.code === ErrorCode.TOPIC_ALREADY_EXISTS) return;
    if ((!isRetriable(err.code) && err.code !== ErrorCode.NOT_CONTROLLER) || Date.now() > end) throw new Error(`cannot create ${topic.name}: ${err.message}`);
    await new Promise((r) => setTimeout(r, 250)); // retry interval, bounded by the deadline
  }
}

export async function runLiveness(opts: LivenessOptions): Promise<LivenessReport> {
  const t0 = Date.now();
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const cluster = await LivenessCluster.start(opts);
  let watch: ZkWatch | undefined;
  let workload: Workload | undefined;
  let side: SideClients | undefined;
  // an exit without the finally below (SIGINT: cluster.ts stops the cluster and exits) leaves no client behind
  const killSide = (): void => {
    side?.killNow();
    workload?.killNow();
  };
  process.on('exit', killSide);
  try {
    const ids = Array.from({ length: BROKERS }, (_, i) => i);
    opts.log(`ZooKeeper on ${cluster.zk.connect}; brokers ${cluster.bootstrap} (pids ${cluster.brokers.map((b) => b.pid).join(', ')})`);
    watch = await ZkWatch.open(cluster.zk.connect, ids, LOAD_TOPIC);
    await until('every broker registered', SETUP_TIMEOUT_MS, async () => [...(await watch!.snapshot()).owners.values()].every((o) => o !== 'none'));
    await createTopic(cluster.bootstrap, {
      name: LOAD_TOPIC,
      numPartitions: LOAD_PARTITIONS,
      replicationFactor: BROKERS,
      configs: { 'min.insync.replicas': '2' },
    });
    for (const b of opts.bombs.filter((n) => TOPIC_BOMBS.has(n)))
      await createTopic(cluster.bootstrap, { name: b, replicaAssignment: [[bombTopicOwner(opts.bombs, b, BROKERS)]] });
    await until(`${LOAD_TOPIC} with a full ISR`, SETUP_TIMEOUT_MS, () => watch!.whole(LOAD_PARTITIONS, BROKERS));
    workload = Workload.start(cluster.bootstrap, LOAD_TOPIC, LOAD_PARTITIONS, { ratePerSec: opts.loadRate });
    side = SideClients.start(cluster.bootstrap, LOAD_TOPIC, LOAD_PARTITIONS, GROUP_ID);
    await workload.waitForAcks(Math.max(100, opts.loadRate), SETUP_TIMEOUT_MS);
    await until('the consumer group consuming', SETUP_TIMEOUT_MS, () => side!.groupUp);
    // the baseline: the same clients, warmed up (connections made, the group's backlog read)
    const baselineFrom = workload.acks.length;
    side.startBaseline();
    await new Promise((r) => setTimeout(r, BASELINE_MS)); // the baseline's measurement window
    await until(`${LOAD_TOPIC} whole before the attacks`, SETUP_TIMEOUT_MS, () => watch!.whole(LOAD_PARTITIONS, BROKERS));
    const baselineAcks = workload.acks.length;
    for (const b of cluster.brokers) b.takeWindow();
    await watch.arm();
    side.arm();
    opts.log(`baseline taken (${baselineAcks} acknowledged); attacks for ${Math.round(opts.attackMs / 1000)} s`);

    const fuzz = new FuzzStream(cluster.ports, opts.fuzzRate, opts.seed);
    const rounds = new Rounds(
      opts,
      cluster.ports,
      (id) => !cluster.brokers[id]!.exited,
      () => watch!.controllerId,
    );
    const attackEnd = rounds.startedAt + opts.attackMs;
    let round = 0;
    do {
      const id = round % BROKERS;
      await rounds.run(round, { id, port: cluster.ports[id]! });
      round++;
      const rss = cluster.brokers.map((b) => `${Math.round((b.sample() ?? 0) / 2 ** 20)}`).join('/');
      opts.log(
        `round ${round - 1} done at +${((Date.now() - rounds.startedAt) / 1000).toFixed(0)} s; RSS ${rss} MB; ZooKeeper events ${watch.events.length}; ${workload.acks.length} acknowledged`,
      );
    } while ((round < opts.minRounds || Date.now() < attackEnd) && cluster.brokers.some((b) => !b.exited));
    const attackMs = Date.now() - rounds.startedAt;
    await fuzz.stop();
    FuzzConnection.closeAll();

    // the load carries on afterwards (a cluster that stopped serving shows here)
    const settled = await workload.waitForAcks(Math.max(100, opts.loadRate * 2), 60_000).then(
      () => true,
      () => false,
    );
    if (!settled) opts.log(`the load did not resume after the attacks: ${workload.diagnostics()}`);
    await workload.stop();
    const stored = await readLog(cluster.bootstrap, LOAD_TOPIC);
    const v = judge(workload.acks, workload.seen, stored);
    const ends = new Map<number, number>();
    for (const k of stored.keys()) {
      const [p, o] = k.split(':').map(Number);
      ends.set(p!, Math.max(ends.get(p!) ?? 0, o! + 1));
    }
    const behind = (): string =>
      [...ends]
        .filter(([p, end]) => (side!.groupPositions.get(p) ?? 0) < end)
        .map(([p, end]) => `${LOAD_TOPIC}-${p} at ${side!.groupPositions.get(p) ?? 0} of ${end}`)
        .join(', ');
    const caughtUp = await until('the consumer group to catch up', 60_000, () => behind() === '').then(
      () => true,
      () => false,
    );
    await side.stop();
    await watch.close();

    const producer = { baseline: new Histogram(), attack: new Histogram() };
    workload.acks.forEach(
      (a, i) => a.latencyMs !== undefined && i >= baselineFrom && (i < baselineAcks ? producer.baseline : producer.attack).add(a.latencyMs),
    );
    const brokers: BrokerFigures[] = cluster.brokers.map((b, id) => {
      const w = cluster.warnings[id]!;
      const window = b.takeWindow(); // since the baseline: the attacks and the run-on after them
      return {
        id,
        rssStartBytes: b.startRss,
        rssPeakBytes: b.peakRss,
        rssEndBytes: b.sample(),
        worstLoopDelayMs: window.loopDelayMs,
        sessionExpiredLines: w.sessionExpired,
        controllerFailureLines: w.controllerFailures,
        warnings: w.total,
        lastWarnings: [...w.last], // before the stop adds its own
        exited: b.exited ? b.describeExit() : null,
        stoppedCleanly: null,
      };
    });
    const grace = opts.sessionTimeoutMs * 2;
    const report: LivenessReport = {
      seed: opts.seed,
      plannedAttackMs: opts.attackMs,
      minRounds: opts.minRounds,
      attackMs,
      durationMs: 0,
      rounds: round,
      attacks: rounds.records,
      brokers,
      events: watch.events.map((e) => ({ atS: (e.atMs - rounds.startedAt) / 1000, kind: e.kind, detail: e.detail, during: rounds.attribute(e.atMs, grace) })),
      counts: { session: watch.count('session'), leader: watch.count('leader'), controller: watch.count('controller'), isr: watch.count('isr') },
      load: {
        acknowledged: v.acknowledged,
        notAcknowledged: workload.failed,
        stored: v.stored,
        lost: v.lost,
        duplicated: v.duplicated,
        vanished: v.vanished,
        examples: v.examples,
        resumedAfterAttacks: settled,
      },
      latency: [
        {
          name: 'producer (confluent-kafka, acks=all)',
          baseline: producer.baseline.summary(),
          attack: producer.attack.summary(),
          failed: workload.failed,
          lastError: '',
        },
        {
          name: 'consumer group (end to end)',
          baseline: side.baseline.group.summary(),
          attack: side.attack.group.summary(),
          failed: side.groupErrors.errors,
          lastError: side.groupErrors.lastError,
        },
        ...ids.map((id) => ({
          name: `prober, broker ${id}`,
          baseline: side!.baseline.probers[id]!.summary(),
          attack: side!.attack.probers[id]!.summary(),
          failed: side!.probeFailures[id]!,
          lastError: side!.probeLastError[id]!,
        })),
      ],
      group: { consumed: side.consumed, rebalancesDuringAttacks: side.rebalancesSinceArm, caughtUp, behind: behind(), ...side.groupErrors },
      fuzz: {
        inputs: fuzz.inputs,
        skipped: fuzz.skipped,
        connections: fuzz.connections,
        closedByBroker: fuzz.closedByBroker,
        connectFailures: fuzz.connectFailures,
      },
      harnessLoopDelayMaxMs: Math.round(loop.max / 1e6),
      bounds: { rssBoundBytes: opts.rssBoundBytes, p99BoundMs: opts.p99BoundMs },
    };
    const clean = await cluster.stop(5000);
    report.brokers.forEach((b, i) => (b.stoppedCleanly = clean[i] ?? null));
    report.durationMs = Date.now() - t0;
    return report;
  } finally {
    await workload?.stop().catch(() => undefined);
    await side?.stop().catch(() => undefined);
    await watch?.close().catch(() => undefined);
    await cluster.stop();
    process.off('exit', killSide);
    loop.disable();
  }
}

export { verdict };
