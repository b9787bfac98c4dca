/**
 * A Fjord cluster for tests: Debian's ZooKeeper (test/helpers/zookeeper.ts) and N brokers as
 * child processes (broker-child-main.mjs) with broker.id 0..N-1, each on a free port fixed for
 * the cluster's life and its own log dir, so a broker can be killed and started again as itself.
 * Timeouts are short but Kafka-like (ZooKeeper session 6 s), so failover tests take seconds.
 *
 *   const c = await Cluster.start();          // in before(); after(() => c.stop())
 *   await c.broker(1).kill();                 // kill -9
 *   await c.waitFor('a new controller', 30_000, async () => ...);
 *
 * `stop()` stops everything it started (also if the test process exits first: an exit hook
 * SIGKILLs what is left). Guard tests with requirePeer(t, 'zookeeper').
 * Each broker logs JSON lines to <root>/broker-<id>.log (FJORD_LOG_LEVEL); Cluster.waitFor
 * timeouts quote their tails (as readable lines); stop() fails when a line is not strict JSON
 * with unique keys (log-lines.ts). FJORD_KEEP_CLUSTER=1 keeps the folder after stop() for a post-mortem.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { freePort } from '../interop/groups/crash-helpers.js';
import { formatPrettyLine } from '../../src/server/logger.js';
import { waitFor as pollFor } from './wait-for.js';
import { closeDeadSession } from './zk-dead-session.js';
import { readLogLines } from './log-lines.js';
import { ZOOKEEPER_JAR, connectedSessions, restartZooKeeper, startZooKeeper, zkCli, zkGet, zkLs, type ZooKeeperServer } from './zookeeper.js';
import { brokerChildEntry } from './built.js';
import { withTestIoThreads } from './io-threads.js';

export const SESSION_TIMEOUT_MS = 6000;
/** FJORD_NATURAL_EXPIRY=1: killAndExpire and expireDead leave a killed broker's session to time out. */
export const NATURAL_EXPIRY = process.env.FJORD_NATURAL_EXPIRY === '1';

/** Every child process still running, SIGKILLed if the test process exits without `stop()`. */
const orphans = new Set<number>();
process.on('exit', () => {
  for (const pid of orphans) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** Cluster probes (ZooKeeper, Metadata from several brokers) poll every 200 ms. */
export function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
  return pollFor(what, timeoutMs, probe, { pollMs: 200 });
}

/** One broker of the cluster: a child process that can be killed, paused and started again. */
export class ClusterBroker {
  private child: ChildProcess | undefined;
  private stderr = '';

  constructor(
    readonly id: number,
    private portValue: number,
    /** Its log.dirs (kept across restarts). */
    readonly dir: string,
    readonly logFile: string,
    private readonly props: Record<string, string>,
    /** Ports of the extra listeners (ClusterOptions.extraListeners), by listener name. */
    private readonly extraPortsValue: Map<string, number> = new Map(),
    /** Whether Cluster.start chose the listeners' ports (they may then be replaced before the first start). */
    private readonly portsChosenHere = false,
  ) {}

  get port(): number {
    return this.portValue;
  }

  get extraPorts(): ReadonlyMap<string, number> {
    return this.extraPortsValue;
  }

  /**
   * The first start, before any client knows its ports: a port freePort() found can be taken
   * before the broker binds it (an outgoing connection gets it as its local port), so on
   * EADDRINUSE the ports Cluster.start chose are replaced by fresh ones and the start tried again.
   */
  async startFirst(attempts = 3): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.start();
        return;
      } catch (err) {
        if (!this.portsChosenHere || attempt >= attempts || !String(err).includes('EADDRINUSE')) throw err;
        const fresh = new Map<number, number>();
        for (const p of [this.portValue, ...this.extraPortsValue.values()]) fresh.set(p, await freePort());
        this.props.listeners = this.props.listeners!.replace(/:(\d+)(?=,|$)/g, (_m: string, p: string) => `:${fresh.get(Number(p)) ?? p}`);
        this.portValue = fresh.get(this.portValue)!;
        for (const [name, p] of this.extraPortsValue) this.extraPortsValue.set(name, fresh.get(p)!);
      }
    }
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** True while its process exists (also when paused). */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }

  /** Starts the broker process and waits until it listens (and, in cluster mode, registered). */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.running) throw new Error(`broker ${this.id} is already running`);
    const spec = { props: withTestIoThreads({ ...this.props, 'log.dirs': this.dir }), topics: [], stats: false, logFile: this.logFile };
    const child = spawn(process.execPath, [...brokerChildEntry(), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.stderr = '';
    orphans.add(child.pid!);
    child.on('exit', () => orphans.delete(child.pid!));
    child.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`broker ${this.id} did not start in ${timeoutMs} ms: ${this.stderr}\n${this.logTail()}`)), timeoutMs);
      const onExit = (code: number | null): void => {
        clearTimeout(timer);
        reject(new Error(`broker ${this.id} exited with ${code} while starting: ${this.stderr}\n${this.logTail()}`));
      };
      child.once('exit', onExit);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('READY')) {
          clearTimeout(timer);
          child.off('exit', onExit);
          resolve();
        }
      });
    });
  }

  /** kill -9: no controlled shutdown, its ZooKeeper session lingers until it times out. */
  async kill(): Promise<void> {
    await this.signalAndWait('SIGKILL');
  }

  /** SIGTERM: a graceful stop (controlled shutdown, deregistration). Resolves with the exit code. */
  async terminate(timeoutMs = 60_000): Promise<number | null> {
    const c = this.child;
    if (!c || !this.running) return c?.exitCode ?? null;
    c.kill('SIGCONT'); // a paused process would not act on SIGTERM
    const timer = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    const [code] = (await this.signalAndWait('SIGTERM')) ?? [null];
    clearTimeout(timer);
    return code;
  }

  /** Starts it again as the same broker (same id, port and log dir). */
  async restart(): Promise<void> {
    if (this.running) await this.kill();
    await this.start();
  }

  /** SIGSTOP: the process freezes; past the session timeout ZooKeeper expires its session. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** The last lines of its log file (for failure messages). */
  logTail(lines = 40): string {
    if (!existsSync(this.logFile)) return `(broker ${this.id}: no log)`;
    return `--- broker ${this.id} log (last ${lines} lines) ---\n${readFileSync(this.logFile, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .map((l) => (l === '' ? l : formatPrettyLine(l).trimEnd()))
      .join('\n')}`;
  }

  private async signalAndWait(signal: NodeJS.Signals): Promise<[number | null, string | null] | undefined> {
    const c = this.child;
    if (!c || !this.running) return undefined;
    const exited = once(c, 'exit') as Promise<[number | null, string | null]>;
    c.kill(signal);
    return exited;
  }
}

export interface ClusterOptions {
  /** Number of brokers (ids 0..n-1), default 3. */
  brokers?: number;
  /** A chroot for zookeeper.connect, e.g. '/fjord' (default none, as the seed's cluster). */
  chroot?: string;
  /** Extra broker properties, for every broker. */
  props?: Record<string, string>;
  /** Extra properties of one broker (after `props`), e.g. its own metrics.listener port. */
  brokerProps?: (id: number) => Record<string, string>;
  /** Listener names added beside PLAINTEXT, each on its own free port (e.g. SSL). */
  extraListeners?: string[];
  /** Runs once ZooKeeper is up, before any broker starts (e.g. bootstrap ACLs written with kafka-acls.sh). */
  beforeBrokers?: (zkConnect: string) => Promise<void>;
  /** Name of each broker's one listener (default PLAINTEXT; SASL_PLAINTEXT for an authenticated cluster). */
  listenerName?: string;
}

export class Cluster {
  private observer: ZkSession | undefined;
  private stopped = false;

  private constructor(
    private zkServer: ZooKeeperServer,
    readonly brokers: ClusterBroker[],
    readonly root: string,
    readonly chroot: string,
  ) {}

  /** Starts ZooKeeper, then every broker (in parallel); on failure stops what started and throws. */
  static async start(opts: ClusterOptions = {}): Promise<Cluster> {
    const root = await mkdtemp(join(tmpdir(), 'fjord-cluster-'));
    let zk: ZooKeeperServer;
    try {
      zk = await startZooKeeper();
    } catch (err) {
      await rm(root, { recursive: true, force: true });
      throw err;
    }
    orphans.add(zk.pid);
    const chroot = opts.chroot ?? '';
    const brokers: ClusterBroker[] = [];
    for (let id = 0; id < (opts.brokers ?? 3); id++) {
      const port = await freePort();
      const extraPorts = new Map<string, number>();
      for (const name of opts.extraListeners ?? []) extraPorts.set(name, await freePort());
      const dir = join(root, `broker-${id}`);
      await mkdir(dir);
      const generated = [`${opts.listenerName ?? 'PLAINTEXT'}://127.0.0.1:${port}`, ...[...extraPorts].map(([name, p]) => `${name}://127.0.0.1:${p}`)].join(
        ',',
      );
      const props: Record<string, string> = {
        'broker.id': String(id),
        listeners: generated,
        'zookeeper.connect': `${zk.connect}${chroot}`,
        'zookeeper.session.timeout.ms': String(SESSION_TIMEOUT_MS),
        // Start-up on a loaded 2-core machine can take longer than a session timeout.
        'zookeeper.connection.timeout.ms': '20000',
        // Kafka's 50 partitions mean 150 replicas to set up on three brokers sharing two cores;
        // 10 still spreads group coordinators over every broker.
        'offsets.topic.num.partitions': '10',
        // Kafka waits 5 s between controlled-shutdown attempts; a test stopping the last
        // brokers (no controller left to answer) would wait 15 s each.
        'controlled.shutdown.retry.backoff.ms': '500',
        ...opts.props,
        ...opts.brokerProps?.(id),
      };
      const chosenHere = props.listeners === generated;
      brokers.push(new ClusterBroker(id, port, dir, join(root, `broker-${id}.log`), props, extraPorts, chosenHere));
    }
    const cluster = new Cluster(zk, brokers, root, chroot);
    try {
      await opts.beforeBrokers?.(`${zk.connect}${chroot}`);
      await Promise.all(brokers.map((b) => b.startFirst()));
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** Whether Debian's ZooKeeper is installed (tests then call requirePeer to skip or fail). */
  static available(): boolean {
    return existsSync(ZOOKEEPER_JAR);
  }

  get zkPort(): number {
    return this.zkServer.port;
  }

  /** zookeeper.connect of the brokers (with the chroot), for --zookeeper tools. */
  get zkConnect(): string {
    return `${this.zkServer.connect}${this.chroot}`;
  }

  broker(id: number): ClusterBroker {
    const b = this.brokers[id];
    if (!b) throw new Error(`no broker ${id}`);
    return b;
  }

  /** `host:port,...` of the running brokers (or of the given ids). */
  bootstrap(ids?: readonly number[]): string {
    const chosen = ids ? ids.map((id) => this.broker(id)) : this.brokers.filter((b) => b.running);
    return chosen.map((b) => b.bootstrap).join(',');
  }

  /** A ZooKeeper session of the test's own (under the chroot), reopened after a ZooKeeper restart. */
  async zk(): Promise<ZkSession> {
    this.observer ??= await ZkSession.open({ connect: this.zkConnect, sessionTimeoutMs: 30_000, connectionTimeoutMs: 20_000 });
    return this.observer;
  }

  /** zkCli.sh, as an operator types it (paths are under the chroot). */
  zkCliLs(path: string): Promise<string[]> {
    return zkLs(this.zkPort, this.chrooted(path));
  }

  zkCliGet(path: string): Promise<string> {
    return zkGet(this.zkPort, this.chrooted(path));
  }

  zkCli(...args: string[]): Promise<string> {
    return zkCli(this.zkPort, ...args);
  }

  /** /controller's broker id and /controller_epoch, or undefined while there is none. */
  async controller(): Promise<{ brokerId: number; epoch: number } | undefined> {
    const zk = await this.zk();
    const ctl = await zk.getIfExists('/controller');
    const epoch = await zk.getIfExists('/controller_epoch');
    if (!ctl || !epoch) return undefined;
    return { brokerId: (JSON.parse(ctl.data.toString()) as { brokerid: number }).brokerid, epoch: Number(epoch.data.toString()) };
  }

  /** Registered broker ids (/brokers/ids), sorted. */
  async registeredIds(): Promise<number[]> {
    return (await (await this.zk()).children('/brokers/ids')).map(Number).sort((a, b) => a - b);
  }

  /** Waits until exactly `ids` (default: the running brokers) are registered. */
  async waitForRegistered(ids = this.brokers.filter((b) => b.running).map((b) => b.id), timeoutMs = SESSION_TIMEOUT_MS * 5): Promise<void> {
    const want = [...ids].sort((a, b) => a - b).join(',');
    await this.waitFor(`/brokers/ids = [${want}]`, timeoutMs, async () => (await this.registeredIds()).join(',') === want);
  }

  /**
   * Waits until each of `ids` is registered by a session that has a live connection. After a
   * ZooKeeper restart the server restores every session with its ephemeral nodes, so
   * /brokers/ids looks complete even for a broker that has not reconnected (its node vanishes
   * when that session expires, and comes back when the broker registers again).
   */
  async waitForConnectedRegistrations(ids = this.brokers.filter((b) => b.running).map((b) => b.id), timeoutMs = SESSION_TIMEOUT_MS * 5): Promise<void> {
    await this.waitFor(`brokers ${ids.join(',')} registered by connected sessions`, timeoutMs, async () => {
      const zk = await this.zk();
      const live = await connectedSessions(this.zkPort);
      for (const id of ids) {
        const stat = await zk.exists(`/brokers/ids/${id}`);
        if (!stat || !live.has(stat.ephemeralOwner)) return false;
      }
      return true;
    });
  }

  /**
   * kill -9 of broker `id`, then its ZooKeeper session closed at once (zk-dead-session.ts): the
   * cluster sees what it sees when the session expires (registration and /controller gone), without
   * waiting out the session timeout. For tests about what follows the expiry; a test about the
   * window before it uses broker(id).kill(). FJORD_NATURAL_EXPIRY=1 leaves the session to time out
   * (the whole outage, as the recovery times in docs/durability.md were measured).
   */
  async killAndExpire(id: number): Promise<void> {
    await this.broker(id).kill();
    await this.expireDead(id);
  }

  /** Closes the ZooKeeper session of broker `id`, killed (kill -9) before, if it still holds its registration. */
  async expireDead(id: number): Promise<void> {
    if (this.broker(id).running) throw new Error(`broker ${id} is running: kill it first`);
    if (NATURAL_EXPIRY) return;
    const stat = await (await this.zk()).exists(`/brokers/ids/${id}`);
    if (stat) await closeDeadSession(this.zkServer.connect, stat.ephemeralOwner);
  }

  /** Waits for a controller satisfying `pred` (default: any), returns it. */
  async waitForController(
    pred: (c: { brokerId: number; epoch: number }) => boolean = () => true,
    timeoutMs = SESSION_TIMEOUT_MS * 5,
  ): Promise<{ brokerId: number; epoch: number }> {
    return this.waitFor('the controller', timeoutMs, async () => {
      const c = await this.controller();
      return c && pred(c) ? c : undefined;
    });
  }

  /** waitFor, with every broker's log tail added to the timeout message. */
  async waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
    try {
      return await waitFor(what, timeoutMs, probe);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${this.logTails()}`);
    }
  }

  logTails(lines = 30): string {
    return this.brokers.map((b) => b.logTail(lines)).join('\n');
  }

  /** Stops ZooKeeper (SIGTERM), keeping its data; the brokers see a lost connection. */
  async stopZooKeeper(): Promise<void> {
    await this.closeObserver();
    await this.zkServer.stop({ keepData: true });
    orphans.delete(this.zkServer.pid);
  }

  /** Starts ZooKeeper again on the same port and data dir (sessions younger than their timeout survive). */
  async startZooKeeper(): Promise<void> {
    this.zkServer = await restartZooKeeper(this.zkServer);
    orphans.add(this.zkServer.pid);
  }

  /** Stops every broker (SIGKILL: a test's cluster needs no graceful end) and ZooKeeper; removes the dirs. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(this.brokers.map((b) => b.kill()));
    await this.closeObserver();
    await this.zkServer.stop();
    orphans.delete(this.zkServer.pid);
    // Every line every broker wrote must be strict JSON with unique keys (issue 23).
    let badLog: unknown;
    try {
      for (const b of this.brokers) readLogLines(b.logFile);
    } catch (err) {
      badLog = err;
    }
    if (process.env.FJORD_KEEP_CLUSTER === '1') process.stderr.write(`cluster files kept in ${this.root}\n`);
    else await rm(this.root, { recursive: true, force: true });
    if (badLog) throw badLog;
  }

  private chrooted(path: string): string {
    return path === '/' && this.chroot !== '' ? this.chroot : `${this.chroot}${path}`;
  }

  private async closeObserver(): Promise<void> {
    const o = this.observer;
    this.observer = undefined;
    await o?.close().catch(() => undefined);
  }
}
