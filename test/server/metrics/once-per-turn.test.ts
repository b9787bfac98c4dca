import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oncePerTurn } from '../../../src/server/metrics/once-per-turn.js';

test('oncePerTurn: one value for every call in a turn of the event loop, a new one in the next turn', async () => {
  let made = 0;
  const pass = oncePerTurn(() => ++made);
  assert.equal(pass(), 1);
  assert.equal(pass(), 1, 'the same turn shares the first value');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(pass(), 2, 'the next turn makes another');
  assert.equal(pass(), 2);
  assert.equal(made, 2);
});
