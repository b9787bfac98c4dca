import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errText } from '../../tools/fuzz/broker-process.js';

test("a broker error logged as an object reads as its message, not '[object Object]'", () => {
  // pino's shape for an Error; the soak's report showed 20 lines of '[object Object]'
  assert.equal(errText({ type: 'Error', message: 'ENOENT: no such file', code: 'ENOENT', stack: '...' }), 'Error ENOENT: ENOENT: no such file');
  assert.equal(errText('plain'), 'plain');
  assert.equal(errText({ a: 1 }), '{"a":1}');
  assert.equal(errText(undefined), '');
});
