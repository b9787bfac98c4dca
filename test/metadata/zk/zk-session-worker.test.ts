/**
 * ZkSession's worker thread (issue 21, F2(a)) against a real ZooKeeper: what the caller sees is
 * what it saw with the client on its own thread (the same watch events, in the same order
 * relative to replies), a watcher is forgotten once it can no longer fire, a worker that dies
 * is reported and replaced by a new session (its old session ended at once, not at its
 * timeout), and a closed session does not keep the process alive.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import pino from 'pino';
import { requirePeer } from '../../helpers/peers.js';
import { ZOOKEEPER_JAR, startZooKeeper, type ZooKeeperServer } from '../../helpers/zookeeper.js';
import { ZkSession, isZkError, type ZkSessionOptions, type ZkWatchEvent } from '../../../src/metadata/zk/zk-session.js';
import { waitFor } from '../../helpers/wait-for.js';

let zk: ZooKeeperServer | undefined;
const sessions: ZkSession[] = [];

before(async () => {
  if (existsSync(ZOOKEEPER_JAR)) zk = await startZooKeeper();
});

after(async () => {
  for (const s of sessions) await s.close();
  await zk?.stop();
});

async function open(extra: Partial<ZkSessionOptions> = {}): Promise<ZkSession> {
  const s = await ZkSession.open({ connect: zk!.connect, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000, ...extra });
  sessions.push(s);
  return s;
}

/** What the worker side of a session holds (the test reads it; it is not part of the API). */
function internals(s: ZkSession): { worker: Worker; watches: Map<number, unknown> } {
  return (s as unknown as { backend: { worker: Worker; watches: Map<number, unknown> } }).backend;
}

const until = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number) => waitFor(what, timeoutMs, cond);

/**
 * One script of watches and changes, as a log of what the caller saw: watch events and the
 * completion of each step, in order. The same watcher is set twice on one node (the client
 * registers it once) and as data and child watch of another (a deletion fires it for each).
 */
async function script(s: ZkSession, other: ZkSession, root: string): Promise<string[]> {
  const seen: string[] = [];
  const w = (e: ZkWatchEvent): void => void seen.push(`${e.type} ${e.path.slice(root.length)}`);
  await s.ensurePath(`${root}/a`);
  await s.create(`${root}/b`);
  await s.exists(`${root}/a`, w);
  await s.get(`${root}/a`, w);
  await s.set(`${root}/a`, 'x'); // our own change: its event comes before the reply
  seen.push('set a');
  await s.exists(`${root}/c`, w); // absent: an existence watch
  await other.create(`${root}/c`, 'y');
  await s.exists('/'); // any later reply comes after the event of a change completed before it
  seen.push('after c created');
  await s.get(`${root}/b`, w);
  await s.children(`${root}/b`, w);
  await other.delete(`${root}/b`);
  await s.exists('/');
  seen.push('after b deleted');
  await s.children(`${root}/a`, w);
  await s.create(`${root}/a/kid`);
  seen.push('kid created');
  return seen;
}

test('the worker delivers the watch events the caller-thread client does, in the same order relative to replies', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const other = await open({ thread: 'caller' });
  const onCaller = await script(await open({ thread: 'caller' }), other, '/parity-caller');
  const worker = await open();
  const onWorker = await script(worker, other, '/parity-worker');
  assert.deepEqual(onCaller, [
    'dataChanged /a',
    'set a',
    'created /c',
    'after c created',
    'deleted /b',
    'deleted /b',
    'after b deleted',
    'childrenChanged /a',
    'kid created',
  ]);
  assert.deepEqual(onWorker, onCaller);
  // Every watcher above has fired: none is kept for later.
  assert.equal(internals(worker).watches.size, 0);
});

test('a watcher stays known while it can still fire and is forgotten once it fired', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = await open();
  await s.create('/keep', 'v');
  const events: string[] = [];
  const w = (e: ZkWatchEvent): void => void events.push(e.type);
  await s.get('/keep', w);
  await s.children('/keep', w);
  assert.equal(internals(s).watches.size, 1, 'one watcher, held for two kinds');
  await s.set('/keep', 'v2'); // consumes the data watch only
  assert.deepEqual(events, ['dataChanged']);
  assert.equal(internals(s).watches.size, 1, 'still held as a child watch');
  await s.create('/keep/x');
  assert.deepEqual(events, ['dataChanged', 'childrenChanged']);
  assert.equal(internals(s).watches.size, 0);
  // A watch on a node that is not there is not set by get: nothing is kept.
  await assert.rejects(s.get('/absent', w), (err) => isZkError(err, 'NO_NODE'));
  assert.equal(internals(s).watches.size, 0);
});

test('a worker that dies is reported, its session ended at once, and a new session replaces it', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  // A long timeout: the old session's ephemeral node must go because it was ended, not expired.
  const s = await open({ sessionTimeoutMs: 30_000, logger });
  const observer = await open({ thread: 'caller' });
  await s.create('/crash-eph', 'old', 'ephemeral');
  const oldId = s.sessionId();
  const events: string[] = [];
  s.on('expired', () => events.push('expired'));
  s.on('newSession', () => events.push('newSession'));
  let fired = 0;
  await s.get('/crash-eph', () => fired++);
  const started = Date.now();
  await internals(s).worker.terminate(); // as an uncaught error or an out-of-memory would end it
  await until('a new session', () => events.includes('newSession'), 20_000);
  t.diagnostic(`new session ${Date.now() - started} ms after the worker died`);
  assert.deepEqual(events, ['expired', 'newSession']);
  assert.notEqual(s.sessionId(), oldId);
  assert.equal(await observer.exists('/crash-eph'), null, "the dead worker's session was ended: its ephemeral node is gone");
  assert.ok(Date.now() - started < 20_000);
  assert.equal(fired, 0, "the dead session's watch does not fire");
  assert.equal(internals(s).watches.size, 0);
  const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
  assert.ok(
    logged.some((l) => l.level === 50 && /ZooKeeper session thread exited with code 1.*session is lost/.test(l.msg)),
    `an error line says the thread died: ${lines.join('')}`,
  );
  assert.ok(logged.some((l) => /ended the ZooKeeper session of the thread that died/.test(l.msg)));
  // The new session works and owns what it creates.
  await s.create('/crash-eph', 'new', 'ephemeral');
  assert.equal((await observer.exists('/crash-eph'))!.ephemeralOwner, s.sessionId());
});

test('calls in flight when the worker dies fail with SESSION_EXPIRED; later calls wait for the new session', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = await open();
  await s.ensurePath('/inflight');
  const stopping = internals(s).worker.terminate();
  const inFlight = s.children('/inflight'); // sent to the worker as it stops: never answered there
  await assert.rejects(inFlight, (err) => isZkError(err, 'SESSION_EXPIRED'));
  await stopping;
  const later = await s.children('/inflight'); // issued while the new worker starts
  assert.deepEqual(later, []);
});

test('a closed session does not keep the process alive', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const src = new URL('../../../src/metadata/zk/zk-session.ts', import.meta.url).href;
  const code = [
    `const { ZkSession } = await import(${JSON.stringify(src)});`,
    `const s = await ZkSession.open({ connect: ${JSON.stringify(zk!.connect)}, sessionTimeoutMs: 6000, connectionTimeoutMs: 10000 });`,
    `await s.ensurePath('/exit-check');`,
    `await s.close();`,
    `console.log('closed');`,
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [exitCode, signal] = (await once(child, 'exit')) as [number | null, string | null];
  clearTimeout(timer);
  assert.equal(signal, null, `the process had to be killed: it did not exit by itself after close (${out})`);
  assert.equal(exitCode, 0, out);
  assert.match(out, /closed/);
});
