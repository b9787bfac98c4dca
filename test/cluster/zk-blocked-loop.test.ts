/**
 * Issue 21, F2(a): a broker whose main loop is held by one slow request for longer than its
 * ZooKeeper session timeout keeps its session. The ZooKeeper client runs on its own thread (as
 * Kafka's does), so it goes on answering the server's pings; the ephemeral registration
 * /brokers/ids/<id> and /controller stay the same znodes (same czxid, same owner), no expiry or
 * new session is announced, and the controller keeps its epoch: no leadership moves.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { InprocCluster } from '../helpers/inproc-cluster.js';
import { waitFor } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';

/** Short, so the held loop outlasts it by far (ZooKeeper's minimum is 2 ticks: 1 s in the test server). */
const SESSION_MS = 3000;
/** Well past the session timeout and ZooKeeper's expiry check (one tick, 500 ms). */
const HOLD_MS = 5500;

let c: InprocCluster | undefined;
after(() => c?.stop());

/** Holds this thread without returning to the event loop: what a request that computes for seconds does. */
function holdMainLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

test('a main loop held past the ZooKeeper session timeout keeps the session, the registration and the controllership', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  c = await InprocCluster.start({ brokers: 1, props: { 'zookeeper.session.timeout.ms': String(SESSION_MS) } });
  const zkMode = c.broker(0).broker!.zookeeper!;
  const session = zkMode.session;
  assert.ok(session.sessionTimeoutMs() < HOLD_MS, `negotiated session timeout ${session.sessionTimeoutMs()} ms is shorter than the hold`);
  await waitFor('broker 0 to be controller', 20_000, () => zkMode.membership.isController);
  const zk = await c.zk(); // the test's own session (30 s timeout): it outlives the hold
  const registration = await zk.exists('/brokers/ids/0');
  const controller = await zk.exists('/controller');
  assert.ok(registration && controller);
  assert.equal(registration.ephemeralOwner, session.sessionId());
  const sessionId = session.sessionId();
  const epoch = zkMode.membership.controllerEpoch;
  const events: string[] = [];
  for (const e of ['expired', 'newSession', 'disconnected'] as const) session.on(e, () => events.push(e));

  const started = Date.now();
  holdMainLoop(HOLD_MS);
  t.diagnostic(`main loop held ${Date.now() - started} ms; negotiated session timeout ${session.sessionTimeoutMs()} ms`);

  // One round trip through the broker's own session: whatever happened to it while the loop was
  // held (an expiry is announced before any later reply) has been seen once this resolves.
  const own = await session.exists('/brokers/ids/0').catch((err: unknown) => err);
  assert.deepEqual(events, [], 'no ZooKeeper session event while the loop was held');
  assert.equal(session.sessionId(), sessionId, 'the same session');
  assert.ok(own !== null && !(own instanceof Error), `the broker's session still reads its registration: ${String(own)}`);
  const after = await zk.exists('/brokers/ids/0');
  assert.ok(after, '/brokers/ids/0 is there');
  assert.equal(after.czxid, registration.czxid, 'the same registration znode (czxid: the broker epoch)');
  assert.equal(after.ephemeralOwner, sessionId);
  const ctlAfter = await zk.exists('/controller');
  assert.ok(ctlAfter, '/controller is there');
  assert.equal(ctlAfter.czxid, controller.czxid, 'the same /controller znode');
  assert.ok(zkMode.membership.isController, 'still the controller');
  assert.equal(zkMode.membership.controllerEpoch, epoch, 'no new controller epoch');
});
