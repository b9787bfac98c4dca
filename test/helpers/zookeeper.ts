/**
 * A real Apache ZooKeeper for tests, from Debian's `zookeeper` package: a standalone server on a
 * free loopback port with its data in a temp dir, ready once it answers `ruok` with `imok`.
 * Guard tests with requirePeer(t, 'zookeeper') (fails under CI=true when it is missing).
 * `zkCli` runs the package's zkCli.sh, as an operator would, and `parseZkList` reads its `[a, b]`.
 * `ZkRelay` puts a TCP relay the test can cut between clients and the server, and
 * `expireSession` expires a session through it deterministically.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import zookeeper from 'node-zookeeper-client';
import type { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../interop/groups/crash-helpers.js';
import { run } from './run.js';

export const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
export const ZKCLI = '/usr/share/zookeeper/bin/zkCli.sh';

export interface ZooKeeperServer {
  port: number;
  /** The server's JVM, so a harness can SIGKILL it should the test process die first. */
  pid: number;
  /** `127.0.0.1:<port>`, for zookeeper.connect (append a chroot as needed). */
  connect: string;
  dir: string;
  /** SIGTERM (SIGKILL after 5 s); `keepData` leaves the dir so `restartZooKeeper` can reuse it. */
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

/** Sends a four-letter word; resolves with the answer ('' when the server is not up). */
function fourLetterWord(port: number, word: string): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let out = '';
    const done = (): void => {
      sock.destroy();
      resolve(out);
    };
    sock.setTimeout(2000, done);
    sock.on('connect', () => sock.write(word));
    sock.on('data', (d: Buffer) => (out += d.toString()));
    sock.on('end', done);
    sock.on('error', done);
  });
}

async function startOnce(port: number, timeoutMs: number, reuseDir?: string): Promise<ZooKeeperServer> {
  const dir = reuseDir ?? (await mkdtemp(join(tmpdir(), 'fjord-zk-')));
  await mkdir(join(dir, 'data'), { recursive: true });
  const cfg = join(dir, 'zoo.cfg');
  // Short ticks let tests use short session timeouts (the server allows 2 to 20 ticks by
  // default; the bounds below widen that).
  await writeFile(
    cfg,
    [
      'tickTime=500',
      `dataDir=${join(dir, 'data')}`,
      `clientPort=${port}`,
      'clientPortAddress=127.0.0.1',
      'minSessionTimeout=1000',
      'maxSessionTimeout=60000',
      'admin.enableServer=false',
      '4lw.commands.whitelist=ruok,srvr,stat,mntr,cons',
      '',
    ].join('\n'),
  );
  const classpath = [existsSync('/etc/zookeeper/conf') ? '/etc/zookeeper/conf' : '', ZOOKEEPER_JAR].filter(Boolean).join(':');
  const child: ChildProcess = spawn('java', ['-Xmx256m', '-cp', classpath, 'org.apache.zookeeper.server.ZooKeeperServerMain', cfg], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const stop = async (opts?: { keepData?: boolean }): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    if (!opts?.keepData) await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if ((await fourLetterWord(port, 'ruok')) === 'imok') return { port, pid: child.pid!, connect: `127.0.0.1:${port}`, dir, stop };
    await new Promise((r) => setTimeout(r, 100)); // polling interval, bounded by the deadline
  }
  await stop({ keepData: reuseDir !== undefined });
  throw new Error(`ZooKeeper did not start on port ${port} within ${timeoutMs} ms: ${stderr.slice(-1000)}`);
}

/** Starts ZooKeeper on a free port (retrying once should another process take the port). */
export async function startZooKeeper(timeoutMs = 30_000): Promise<ZooKeeperServer> {
  try {
    return await startOnce(await freePort(), timeoutMs);
  } catch {
    return startOnce(await freePort(), timeoutMs);
  }
}

/** Starts a stopped server again on its port and data dir (its znodes and sessions survive). */
export function restartZooKeeper(stopped: ZooKeeperServer, timeoutMs = 30_000): Promise<ZooKeeperServer> {
  return startOnce(stopped.port, timeoutMs, stopped.dir);
}

/**
 * Session ids (hex, as ZkStat.ephemeralOwner spells them) that have a live client connection now
 * (the `cons` four-letter word). A session restored by a restarted server keeps its ephemeral
 * nodes until it expires, whether or not its client came back: this tells which came back.
 */
export async function connectedSessions(port: number): Promise<Set<string>> {
  const out = await fourLetterWord(port, 'cons');
  return new Set([...out.matchAll(/sid=0x([0-9a-f]+)/g)].map((m) => m[1]!.replace(/^0+(?=.)/, '')));
}

/** Runs `zkCli.sh -server 127.0.0.1:<port> <args>`; returns its stdout (throws on failure). */
export async function zkCli(port: number, ...args: string[]): Promise<string> {
  const r = await run(ZKCLI, ['-server', `127.0.0.1:${port}`, ...args], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`zkCli.sh ${args.join(' ')} exited with ${r.code}: ${r.stderr.slice(-500)}`);
  return r.stdout;
}

/** The last `[a, b, ...]` line of zkCli's output as a list. */
export function parseZkList(output: string): string[] {
  const line = output
    .split('\n')
    .map((l) => l.trim())
    .reverse()
    .find((l) => /^\[.*\]$/.test(l));
  if (line === undefined) throw new Error(`no [..] list in zkCli output: ${output.slice(-500)}`);
  const inner = line.slice(1, -1).trim();
  return inner === '' ? [] : inner.split(',').map((s) => s.trim());
}

/** `zkCli.sh ls <path>`, parsed. */
export async function zkLs(port: number, path: string): Promise<string[]> {
  return parseZkList(await zkCli(port, 'ls', path));
}

/** `zkCli.sh get <path>`: the node's data line (zkCli prints it after the connection chatter). */
export async function zkGet(port: number, path: string): Promise<string> {
  const out = await zkCli(port, 'get', path);
  const lines = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('WatchedEvent') && !l.startsWith('Connecting'));
  const last = lines.at(-1);
  if (last === undefined) throw new Error(`no data in zkCli get ${path} output`);
  return last;
}

/**
 * A TCP relay in front of a ZooKeeper server: clients given `connect` reach the server through
 * it; `cut()` drops their connections and refuses new ones (each is accepted, then closed, so the
 * client keeps retrying) until `restore()`. `mute()` drops them too, but holds new ones open
 * without ever answering (what ZooKeeper 3.8 does to a client connecting while it starts); those
 * stay silent after `restore()`. Close it at the end of the test.
 */
export class ZkRelay {
  private cutOff = false;
  private silent = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: ZooKeeperServer): Promise<ZkRelay> {
    let relay: ZkRelay | undefined;
    const server = createServer((inbound) => relay!.accept(inbound, target.port));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    relay = new ZkRelay(server, (server.address() as { port: number }).port);
    return relay;
  }

  /** `127.0.0.1:<relay port>`, for zookeeper.connect (append a chroot as needed). */
  get connect(): string {
    return `127.0.0.1:${this.port}`;
  }

  private accept(inbound: Socket, target: number): void {
    if (this.cutOff) return void inbound.destroy();
    if (this.silent) {
      this.sockets.add(inbound);
      inbound.on('error', () => undefined);
      inbound.on('close', () => this.sockets.delete(inbound));
      inbound.resume(); // read and ignore the handshake
      return;
    }
    const outbound = connect(target, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      this.sockets.add(s);
      s.on('error', () => undefined); // the pair is torn down on close below
      s.on('close', () => {
        this.sockets.delete(s);
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  }

  cut(): void {
    this.cutOff = true;
    for (const s of this.sockets) s.destroy();
  }

  mute(): void {
    this.cut();
    this.cutOff = false;
    this.silent = true;
  }

  /** New connections reach the server again (connections held silent by `mute()` stay so). */
  restore(): void {
    this.cutOff = false;
    this.silent = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Expires the session of `s` (connected through `relay`) as ZooKeeper's own tests do: a second
 * client joins the session with its id and password and closes it. The relay is cut meanwhile,
 * so the victim cannot win its session back by reconnecting first (without it, a loaded machine
 * lets the victim win most races). Resolves once the victim has seen the expiry.
 */
export async function expireSession(s: ZkSession, server: ZooKeeperServer, relay: ZkRelay, timeoutMs = 30_000): Promise<void> {
  let expired = false;
  s.once('expired', () => (expired = true));
  const victim = s.credentials();
  relay.cut();
  const twin = zookeeper.createClient(server.connect, { sessionTimeout: s.sessionTimeoutMs() });
  const cm = (twin as unknown as { connectionManager: { sessionId: Buffer; sessionPassword: Buffer } }).connectionManager;
  victim.sessionId.copy(cm.sessionId);
  victim.password.copy(cm.sessionPassword);
  let timer: NodeJS.Timeout | undefined;
  try {
    // 'expired' instead of 'connected': the session timed out by itself meanwhile, which is as good.
    const joining = Promise.race([
      once(twin, 'connected').then(() => true),
      once(twin, 'expired').then(() => false),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`could not join the session within ${timeoutMs} ms`)), timeoutMs))),
    ]);
    twin.connect();
    const joined = await joining;
    if (joined) {
      const closed = once(twin, 'disconnected');
      twin.close(); // closeSession: the server expires the session, then drops the connection
      await closed;
    }
  } catch (err) {
    try {
      twin.close();
    } catch {
      // never got a socket: nothing to close
    }
    throw err;
  } finally {
    clearTimeout(timer);
    relay.restore();
  }
  const deadline = Date.now() + timeoutMs;
  while (!expired) {
    if (Date.now() > deadline) throw new Error(`the session did not see its expiry within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20)); // poll interval, bounded by the deadline
  }
}
