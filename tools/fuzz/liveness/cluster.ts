/**
 * The soak's cluster: Debian's ZooKeeper (test/helpers/zookeeper.ts) and three brokers as
 * dist/server/main.js child processes (tools/fuzz/broker-process.ts: free ports, temporary log
 * dirs, their RSS sampled every 50 ms and their own event-loop reports read from the debug log),
 * with a short ZooKeeper session timeout so that a held loop costs a broker its session.
 * Everything it starts is stopped by `stop()`, on SIGINT/SIGTERM, and (SIGKILL, dirs removed)
 * when the process exits without either.
 */
import { rmSync } from 'node:fs';
import { freePort } from '../../../test/interop/groups/crash-helpers.js';
import { startZooKeeper, type ZooKeeperServer } from '../../../test/helpers/zookeeper.js';
import { BrokerProcess } from '../broker-process.js';
import { BROKERS, type LivenessOptions } from './options.js';

/** What a broker said at warn level or above, counted by kind. */
export interface BrokerWarnings {
  sessionExpired: number;
  controllerFailures: number;
  total: number;
  last: string[];
}

const SESSION_EXPIRED = /ZooKeeper session expired/;
const CONTROLLER_FAILED = /controller election failed|controller .*failed/i;

export class LivenessCluster {
  readonly warnings: BrokerWarnings[] = [];
  private stopped = false;
  private readonly onSignal = (sig: NodeJS.Signals): void => {
    process.stderr.write(`\n${sig}: stopping the cluster\n`);
    void this.stop().finally(() => process.exit(130));
  };
  private readonly onExit = (): void => this.killNow();

  private constructor(
    readonly zk: ZooKeeperServer,
    readonly brokers: BrokerProcess[],
    readonly ports: number[],
  ) {}

  get bootstrap(): string {
    return this.ports.map((p) => `127.0.0.1:${p}`).join(',');
  }

  /** ZooKeeper, then the brokers in parallel; on failure stops what started and throws. */
  static async start(opts: Pick<LivenessOptions, 'sessionTimeoutMs' | 'rssKillBytes' | 'brokerProps'>): Promise<LivenessCluster> {
    const zk = await startZooKeeper();
    const ports: number[] = [];
    for (let id = 0; id < BROKERS; id++) ports.push(await freePort());
    const warnings: BrokerWarnings[] = ports.map(() => ({ sessionExpired: 0, controllerFailures: 0, total: 0, last: [] }));
    const started = await Promise.allSettled(
      ports.map((port, id) =>
        BrokerProcess.start({
          props: {
            'broker.id': String(id),
            listeners: `PLAINTEXT://127.0.0.1:${port}`,
            'zookeeper.connect': zk.connect,
            'zookeeper.session.timeout.ms': String(opts.sessionTimeoutMs),
            // start-up on a loaded 2-core machine can take longer than a session timeout
            'zookeeper.connection.timeout.ms': '20000',
            'offsets.topic.num.partitions': '10',
            'offsets.topic.replication.factor': '3',
            'controlled.shutdown.retry.backoff.ms': '500',
            ...opts.brokerProps,
          },
          rssKillBytes: opts.rssKillBytes,
          onWarning: (text) => noteWarning(warnings[id]!, text),
        }),
      ),
    );
    const brokers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) {
      await Promise.all(brokers.map((b) => b.stop(5000)));
      await zk.stop();
      throw (failed as PromiseRejectedResult).reason;
    }
    const c = new LivenessCluster(zk, brokers, ports);
    c.warnings.push(...warnings);
    process.on('SIGINT', c.onSignal);
    process.on('SIGTERM', c.onSignal);
    process.on('exit', c.onExit);
    return c;
  }

  /** SIGTERM to every broker (SIGKILL after `graceMs`), then ZooKeeper; removes their dirs. */
  async stop(graceMs = 10_000): Promise<boolean[]> {
    if (this.stopped) return [];
    this.stopped = true;
    const clean = await Promise.all(this.brokers.map((b) => b.stop(graceMs)));
    await this.zk.stop();
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
    process.off('exit', this.onExit);
    return clean;
  }

  /** The exit hook: no time for a graceful stop, only for what cannot be left behind. */
  private killNow(): void {
    for (const b of this.brokers) {
      if (!b.exited) b.child.kill('SIGKILL');
      rmSync(b.dir, { recursive: true, force: true });
    }
    try {
      process.kill(this.zk.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(this.zk.dir, { recursive: true, force: true });
  }
}

function noteWarning(w: BrokerWarnings, text: string): void {
  w.total++;
  if (SESSION_EXPIRED.test(text)) w.sessionExpired++;
  if (CONTROLLER_FAILED.test(text)) w.controllerFailures++;
  // the fuzz stream's malformed requests each close a connection with a warning: counted, not kept
  if (text.startsWith('closing connection: request failed')) return;
  w.last.push(text.slice(0, 200));
  if (w.last.length > 5) w.last.shift();
}
