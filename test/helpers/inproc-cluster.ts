/**
 * Several Fjord brokers in THIS process, sharing one real ZooKeeper (Debian's, as
 * test/helpers/cluster.ts starts it), each on a free port and a temp dir kept for the cluster's
 * life so a killed broker comes back as itself. Faster and more controllable than the
 * child-process cluster: a test reads every broker's Partition objects directly and steers the
 * traffic between brokers through `faults`, the brokers' InterBrokerInterceptor (the product seam
 * consulted by the controller's channel manager and the replica fetchers before each send).
 *
 *   const c = await InprocCluster.start({ brokers: 3 });   // after(() => c.stop())
 *   const rule = c.faults.drop({ api: API.Fetch, from: 1, to: 0 });   // broker 1's fetches to 0 fail
 *   const held = c.faults.hold({ api: API.LeaderAndIsr, to: 2 });    // ... wait in the sender
 *   held.release(); rule.remove(); c.faults.clear();
 *   await c.kill(0); await c.restart(0); await c.moveLeader('t', 0, 2);
 *
 * `kill` is Broker.stop({ abrupt: true }): no controlled shutdown, connections closed at once,
 * the ZooKeeper session closed (its registration goes at once, not after the session timeout).
 * The logs are closed cleanly: log recovery after a crash is the child-process harness's job.
 * Brokers are silent unless FJORD_INPROC_LOG=1: then each logs readable lines (FJORD_LOG_LEVEL,
 * default info) to <root>/broker-<id>.log (kept with FJORD_KEEP_CLUSTER=1).
 * Guard tests with requirePeer(t, 'zookeeper').
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/server/broker.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { createRootLogger, silentLogger } from '../../src/server/logger.js';
import { appendFileSync } from 'node:fs';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { Admin } from '../../src/client/admin.js';
import type { InterBrokerInterceptor, InterBrokerRequest } from '../../src/client/inter-broker-interceptor.js';
import type { Partition } from '../../src/replication/partition/partition.js';
import { alterReassignments, electLeaders } from '../../src/cli/common/reassign.js';
import { freePort } from '../interop/groups/crash-helpers.js';
import { startZooKeeper, type ZooKeeperServer } from './zookeeper.js';
import { waitFor } from './cluster.js';

/** API keys of the inter-broker requests the seam sees. */
export const API = { Fetch: 1, ListOffsets: 2, LeaderAndIsr: 4, StopReplica: 5, UpdateMetadata: 6, OffsetForLeaderEpoch: 23 } as const;

/** Which requests a rule applies to; an absent field matches any. */
export interface FaultMatch {
  api?: number;
  from?: number;
  to?: number;
}

export interface FaultRule {
  readonly match: FaultMatch;
  /** Requests this rule has acted on so far. */
  readonly hits: number;
  remove(): void;
}

export interface HeldRule extends FaultRule {
  /** Lets every request held so far go on (and stops holding new ones). */
  release(): void;
}

type Action = { kind: 'drop' } | { kind: 'delay'; ms: number } | { kind: 'hold' };

interface Rule {
  match: FaultMatch;
  action: Action;
  hits: number;
  waiting: (() => void)[];
  removed: boolean;
}

/**
 * Fault rules on inter-broker requests, shared by every broker of the cluster. The first
 * matching rule (in the order added) acts: drop fails the send as a broken connection would
 * (the sender retries after its backoff), delay waits, hold waits until released or removed.
 */
export class InterBrokerFaults implements InterBrokerInterceptor {
  private rules: Rule[] = [];
  /** Every request seen, by "from>to:api" (diagnostics, and tests waiting for traffic). */
  readonly seen = new Map<string, number>();

  beforeSend(req: InterBrokerRequest): Promise<void> | void {
    const key = `${req.from}>${req.to}:${req.apiKey}`;
    this.seen.set(key, (this.seen.get(key) ?? 0) + 1);
    const rule = this.rules.find((r) => matches(r.match, req));
    if (!rule) return;
    rule.hits++;
    switch (rule.action.kind) {
      case 'drop':
        throw new Error(`inter-broker request ${key} dropped by the test`);
      case 'delay': {
        const ms = rule.action.ms;
        return new Promise((resolve) => setTimeout(resolve, ms));
      }
      case 'hold':
        return new Promise((resolve) => rule.waiting.push(resolve));
    }
  }

  drop(match: FaultMatch): FaultRule {
    return this.add(match, { kind: 'drop' });
  }

  delay(match: FaultMatch, ms: number): FaultRule {
    return this.add(match, { kind: 'delay', ms });
  }

  hold(match: FaultMatch): HeldRule {
    const r = this.add(match, { kind: 'hold' });
    return Object.assign(r, { release: () => r.remove() });
  }

  /** Removes every rule and lets held requests go. */
  clear(): void {
    for (const r of [...this.rules]) this.removeRule(r);
  }

  get active(): number {
    return this.rules.length;
  }

  private add(match: FaultMatch, action: Action): FaultRule {
    const rule: Rule = { match, action, hits: 0, waiting: [], removed: false };
    this.rules.push(rule);
    return {
      match,
      get hits() {
        return rule.hits;
      },
      remove: () => this.removeRule(rule),
    };
  }

  private removeRule(rule: Rule): void {
    if (rule.removed) return;
    rule.removed = true;
    this.rules = this.rules.filter((r) => r !== rule);
    for (const go of rule.waiting.splice(0)) go();
  }
}

function matches(m: FaultMatch, r: InterBrokerRequest): boolean {
  return (m.api === undefined || m.api === r.apiKey) && (m.from === undefined || m.from === r.from) && (m.to === undefined || m.to === r.to);
}

export interface InprocBroker {
  readonly id: number;
  readonly port: number;
  readonly dir: string;
  /** The running broker, undefined while killed. */
  broker: Broker | undefined;
}

export interface InprocClusterOptions {
  /** Number of brokers (ids 0..n-1), default 3. */
  brokers?: number;
  /** Broker properties over the harness's fast defaults. */
  props?: Record<string, string>;
  /** A broker's log dir other than a fresh one under the cluster's root (say a small tmpfs), by id. */
  logDirs?: Record<number, string>;
}

/** Short timers so ISR churn and failover take a second or two, not Kafka's 30 s. */
const FAST_PROPS: Record<string, string> = {
  'zookeeper.session.timeout.ms': '6000',
  'zookeeper.connection.timeout.ms': '20000',
  'replica.lag.time.max.ms': '1500',
  'replica.fetch.backoff.ms': '100',
  'replica.fetch.wait.max.ms': '200',
  'auto.leader.rebalance.enable': 'false',
  'controlled.shutdown.retry.backoff.ms': '200',
  'offsets.topic.num.partitions': '1',
  'group.initial.rebalance.delay.ms': '0',
};

export class InprocCluster {
  readonly faults = new InterBrokerFaults();
  private observer: ZkSession | undefined;
  private stopped = false;

  private constructor(
    private readonly zkServer: ZooKeeperServer,
    readonly brokers: InprocBroker[],
    readonly root: string,
    private readonly props: Record<string, string>,
  ) {}

  static async start(opts: InprocClusterOptions = {}): Promise<InprocCluster> {
    const root = await mkdtemp(join(tmpdir(), 'fjord-inproc-'));
    let zk: ZooKeeperServer;
    try {
      zk = await startZooKeeper();
    } catch (err) {
      await rm(root, { recursive: true, force: true });
      throw err;
    }
    const brokers: InprocBroker[] = [];
    for (let id = 0; id < (opts.brokers ?? 3); id++) {
      const dir = opts.logDirs?.[id] ?? join(root, `broker-${id}`);
      await mkdir(dir, { recursive: true });
      brokers.push({ id, port: await freePort(), dir, broker: undefined });
    }
    const c = new InprocCluster(zk, brokers, root, { ...FAST_PROPS, 'zookeeper.connect': zk.connect, ...opts.props });
    try {
      await Promise.all(brokers.map((b) => c.startBroker(b)));
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  broker(id: number): InprocBroker {
    const b = this.brokers[id];
    if (!b) throw new Error(`no broker ${id}`);
    return b;
  }

  running(): InprocBroker[] {
    return this.brokers.filter((b) => b.broker !== undefined);
  }

  bootstrap(ids?: readonly number[]): string {
    const chosen = ids ? ids.map((id) => this.broker(id)) : this.running();
    return chosen.map((b) => `127.0.0.1:${b.port}`).join(',');
  }

  private async startBroker(b: InprocBroker): Promise<void> {
    const raw = new Map<string, string>(
      // Not withTestIoThreads: this harness reads each broker's Partition objects and fetchers
      // directly (partition(), below), which live on this thread only at num.io.threads=1; the
      // child-process cluster (cluster.ts) is what runs cluster mode at FJORD_TEST_IO_THREADS.
      Object.entries({ ...this.props, 'broker.id': String(b.id), listeners: `PLAINTEXT://127.0.0.1:${b.port}`, 'log.dirs': b.dir }),
    );
    const logFile = join(this.root, `broker-${b.id}.log`);
    const logger =
      process.env.FJORD_INPROC_LOG === '1'
        ? createRootLogger('pretty', process.env.FJORD_LOG_LEVEL ?? 'info', (text) => appendFileSync(logFile, text)).child({ broker: b.id })
        : silentLogger();
    const broker = new Broker(buildBrokerConfig(raw), logger, { interBrokerInterceptor: this.faults });
    await broker.start();
    b.broker = broker;
  }

  /** Stops broker `id` abruptly (see the header); its dir stays for restart(). */
  async kill(id: number): Promise<void> {
    const b = this.broker(id);
    const broker = b.broker;
    if (!broker) return;
    b.broker = undefined;
    await broker.stop({ abrupt: true });
  }

  /** Starts a killed broker again as itself (same id, port and log dir). */
  async restart(id: number): Promise<void> {
    const b = this.broker(id);
    if (b.broker) throw new Error(`broker ${id} is running`);
    await this.startBroker(b);
  }

  /** The broker's local replica of a partition, if it is running and hosts one. */
  partition(id: number, topic: string, partition = 0): Partition | undefined {
    return this.broker(id).broker?.services.replicaManager.getPartition(topic, partition);
  }

  /** A ZooKeeper session of the test's own. */
  async zk(): Promise<ZkSession> {
    this.observer ??= await ZkSession.open({ connect: this.zkServer.connect, sessionTimeoutMs: 30_000, connectionTimeoutMs: 20_000 });
    return this.observer;
  }

  /** The partition state znode, as the controller (or an ISR change) last wrote it. */
  async zkState(topic: string, partition = 0): Promise<{ leader: number; leader_epoch: number; isr: number[]; version: number } | undefined> {
    const got = await (await this.zk()).getIfExists(`/brokers/topics/${topic}/partitions/${partition}/state`);
    if (!got) return undefined;
    return { ...(JSON.parse(got.data.toString()) as { leader: number; leader_epoch: number; isr: number[] }), version: got.stat.version };
  }

  /** The assigned replicas, in order, from the topic znode. */
  async zkReplicas(topic: string, partition = 0): Promise<number[] | undefined> {
    const got = await (await this.zk()).getIfExists(`/brokers/topics/${topic}`);
    if (!got) return undefined;
    return (JSON.parse(got.data.toString()) as { partitions: Record<string, number[]> }).partitions[String(partition)];
  }

  /** An admin client on the running brokers; close it after use. */
  admin(): Admin {
    return new Admin({ bootstrapServers: this.bootstrap(), clientId: 'inproc-harness', requestTimeoutMs: 10_000 });
  }

  async createTopic(name: string, replicas: number[], configs: Record<string, string> = {}): Promise<void> {
    const admin = this.admin();
    try {
      const res = await admin.createTopics([{ name, replicaAssignment: [replicas], configs }], { timeoutMs: 10_000 });
      const err = res.get(name);
      if (err) throw err;
    } finally {
      await admin.close();
    }
    await this.waitFor(`${name}-0 led by ${replicas[0]} with ISR ${replicas.join(',')}`, 20_000, () => {
      const p = this.partition(replicas[0]!, name);
      return p !== undefined && p.isLeader && p.isr.length === replicas.length;
    });
  }

  /**
   * Moves the leadership of a partition to `target` as an operator would: a reassignment that
   * puts `target` first in the same replica set, then a preferred election (ElectLeaders).
   * Resolves with ElectLeaders' error code (0: elected; the election may be refused, say when
   * `target` is not in the ISR), or -2 when the reassignment did not complete within
   * `reassignTimeoutMs` (it waits for every replica to be in the ISR; it goes on in the background).
   */
  async moveLeader(topic: string, partition: number, target: number, reassignTimeoutMs = 10_000): Promise<number> {
    const replicas = await this.zkReplicas(topic, partition);
    if (!replicas || !replicas.includes(target)) throw new Error(`${target} is not a replica of ${topic}-${partition}`);
    const admin = this.admin();
    try {
      if (replicas[0] !== target) {
        const order = [target, ...replicas.filter((r) => r !== target)];
        const res = await alterReassignments(admin, [{ topic, partition, replicas: order }]);
        const err = res.get(`${topic}-${partition}`);
        if (err) return err.code;
        const done = await this.waitFor(
          `${topic}-${partition} assigned as ${order.join(',')}`,
          reassignTimeoutMs,
          async () => (await this.zkReplicas(topic, partition))?.[0] === target,
        ).catch(() => false);
        if (!done) return -2;
      }
      const results = await electLeaders(admin, 0, [{ topic, partition }]);
      return results[0]?.errorCode ?? -1;
    } finally {
      await admin.close();
    }
  }

  /** Who is controller, ZooKeeper's partition state and every broker's view of it (failure messages). */
  async describe(topic: string, partition = 0): Promise<string> {
    const zk = await this.zk();
    const ctl = await zk.getIfExists('/controller').catch(() => undefined);
    const lines = [
      `controller: ${ctl ? ctl.data.toString() : 'none'}; state: ${JSON.stringify(await this.zkState(topic, partition).catch(() => undefined))}; rules: ${this.faults.active}`,
    ];
    for (const b of this.brokers) {
      const p = this.partition(b.id, topic, partition);
      if (!b.broker) lines.push(`broker ${b.id}: down`);
      else if (!p) lines.push(`broker ${b.id}: no replica`);
      else {
        const fetchers = b.broker.services.replicaManager.replicaFetchers;
        const fetcher = fetchers?.fetcherOf(topic, partition);
        lines.push(
          `broker ${b.id}: leader=${p.isLeader} leaderId=${p.leaderId} epoch=${p.leaderEpoch} hw=${p.highWatermark} leo=${p.logEndOffset} isr=${p.isr.join(',')} ` +
            `fetching=${fetchers?.isFetching(topic, partition) ?? false} from=${fetcher?.leader.leaderId ?? '-'} failed=${fetcher?.failed.has(`${topic}-${partition}`) ?? false}`,
        );
      }
    }
    return lines.join('\n');
  }

  waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
    return waitFor(what, timeoutMs, probe);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.faults.clear();
    await Promise.all(this.brokers.map((b) => this.kill(b.id).catch(() => undefined)));
    await this.observer?.close().catch(() => undefined);
    await this.zkServer.stop();
    if (process.env.FJORD_KEEP_CLUSTER === '1') process.stderr.write(`cluster files kept in ${this.root}\n`);
    else await rm(this.root, { recursive: true, force: true });
  }
}
