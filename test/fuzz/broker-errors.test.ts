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

test('a log directory the broker takes offline is named in the report and fails the verdict', async () => {
  const { offlineDirOf } = await import('../../tools/fuzz/broker-process.js');
  const { emptyReport } = await import('../../tools/fuzz/run-context.js');
  const { formatReport, verdict } = await import('../../tools/fuzz/report.js');
  // LogManager.takeOffline's line (the last soak's: ENOENT from a produce racing a DeleteTopics)
  assert.equal(
    offlineDirOf(
      "log directory /tmp/fjord-fuzz-x/logs is offline: ENOENT: no such file or directory, open '/tmp/fjord-fuzz-x/logs/t-0/00000000000000000160.log'",
    ),
    '/tmp/fjord-fuzz-x/logs',
  );
  assert.equal(offlineDirOf('log fuzz-steady-1 is in an offline log directory /tmp/x'), null);
  assert.equal(offlineDirOf(undefined), null);
  const r = { ...emptyReport(1), brokerUpAtEnd: true };
  assert.deepEqual(verdict(r, { rssBoundBytes: 1 }), []);
  assert.ok(formatReport(r).includes('log dirs offline: none'));
  r.logDirsOffline.push('log directory /d is offline: EIO');
  assert.deepEqual(verdict(r, { rssBoundBytes: 1 }), ['1 log dir(s) went offline']);
  assert.ok(formatReport(r).some((l) => l.startsWith('LOG DIR OFFLINE (1)') && l.includes('/d is offline: EIO')));
});
