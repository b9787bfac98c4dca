/** The broker-wide cap on logs cleaned at once across shard threads (storage/cleaner/cleaner-slots.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { cleanerSlotsOf, newSharedCleanerSlots, releaseSlotOf } from '../../src/storage/cleaner/cleaner-slots.js';

test('at most `limit` holders clean at once; a slot given back is free again; 0 counts as 1', () => {
  const shared = newSharedCleanerSlots(2, 3);
  const [a, b, c] = [0, 1, 2].map((h) => cleanerSlotsOf(shared, h));
  assert.equal(a!.tryTake(), true);
  assert.equal(b!.tryTake(), true);
  assert.equal(c!.tryTake(), false, 'two already clean');
  b!.give();
  assert.equal(c!.tryTake(), true);
  assert.equal(newSharedCleanerSlots(0, 1).limit, 1);
});

test('the slot of a holder that ended is given back for it, once; a holder without one gives nothing back', () => {
  const shared = newSharedCleanerSlots(1, 2);
  const [a, b] = [0, 1].map((h) => cleanerSlotsOf(shared, h));
  assert.equal(a!.tryTake(), true);
  releaseSlotOf(shared, 1); // b held none: the count stays
  assert.equal(b!.tryTake(), false);
  releaseSlotOf(shared, 0); // a "died" holding it
  releaseSlotOf(shared, 0); // and a second release changes nothing
  assert.equal(b!.tryTake(), true);
  assert.equal(a!.tryTake(), false);
});

test('the count is shared with another thread', async () => {
  const shared = newSharedCleanerSlots(1, 2);
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const cells = new Int32Array(workerData.cells);
     Atomics.add(cells, 0, 1); Atomics.store(cells, 2, 1);
     parentPort.postMessage('taken');`,
    { eval: true, workerData: shared },
  );
  await new Promise((resolve) => worker.once('message', resolve));
  await worker.terminate();
  const mine = cleanerSlotsOf(shared, 0);
  assert.equal(mine.tryTake(), false, 'the other thread holds the one slot');
  releaseSlotOf(shared, 1);
  assert.equal(mine.tryTake(), true);
});
