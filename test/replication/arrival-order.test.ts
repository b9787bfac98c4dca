/**
 * ArrivalOrder (src/replication/partition/arrival-order.ts): produce requests reach a partition's
 * log in the order they arrived, whatever order their validation finishes in; a turn taken with
 * nobody ahead is ready at once (no promise to wait on).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArrivalOrder } from '../../src/replication/partition/arrival-order.js';

/** Whether `p` has settled once the microtasks queued so far have run. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
}

test('a turn with nobody ahead is ready now; one behind an open turn waits for it', async () => {
  const order = new ArrivalOrder();
  const first = order.takeTurn();
  assert.equal(first.readyNow, true);
  assert.equal(await settled(first.ready), true);
  const second = order.takeTurn();
  assert.equal(second.readyNow, false);
  assert.equal(await settled(second.ready), false);
  first.done();
  assert.equal(await settled(second.ready), true);
  second.done();
  const third = order.takeTurn();
  assert.equal(third.readyNow, true, 'every earlier turn is done');
});

test('a later turn done first does not let the one after it overtake an earlier turn still open', async () => {
  const order = new ArrivalOrder();
  const [a, b, c] = [order.takeTurn(), order.takeTurn(), order.takeTurn()];
  b.done();
  b.done(); // idempotent
  assert.equal(await settled(c.ready), false, 'c waits for a, still validating');
  assert.equal(order.takeTurn().readyNow, false);
  a.done();
  assert.equal(await settled(b.ready), true);
  assert.equal(await settled(c.ready), true);
});

test('turns resolve in arrival order when validation finishes out of order', async () => {
  const order = new ArrivalOrder();
  const appended: number[] = [];
  const turns = [0, 1, 2, 3].map(() => order.takeTurn());
  const requests = turns.map(async (turn, i) => {
    await new Promise<void>((resolve) => setTimeout(resolve, (3 - i) * 5)); // the last validates first
    if (!turn.readyNow) await turn.ready;
    appended.push(i);
    turn.done();
  });
  await Promise.all(requests);
  assert.deepEqual(appended, [0, 1, 2, 3]);
  assert.equal(order.takeTurn().readyNow, true);
});
