/**
 * test/helpers/built.ts's fallback: with FJORD_TEST_FROM_SOURCE=1 (as when src/ was edited after
 * the last build) the children the tests start run the sources through tsx. `npm test` builds
 * first, so the rest of the suite runs dist/ and would never see this path break.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerChild } from '../helpers/broker-child.js';
import { brokerChildEntry, nodeEntry, runsBuilt } from '../helpers/built.js';
import { runCli } from '../cli/helpers.js';

// Read on first use (runsBuilt decides once per process), so set before any child starts.
process.env.FJORD_TEST_FROM_SOURCE = '1';

test('FJORD_TEST_FROM_SOURCE=1: a broker child and a tool run from src/ through tsx, and work', async () => {
  assert.equal(runsBuilt(), false);
  assert.deepEqual(nodeEntry('cli/kafka-topics').slice(0, 2), ['--import', 'tsx']);
  assert.match(nodeEntry('cli/kafka-topics')[2]!, /\/src\/cli\/kafka-topics\.ts$/);
  assert.match(brokerChildEntry().at(-1)!, /\/src$/);
  const broker = await BrokerChild.start({ topics: [{ name: 'from-source', partitions: 2 }] });
  try {
    const listed = await runCli('kafka-topics', ['--bootstrap-server', `127.0.0.1:${broker.port}`, '--list'], { timeoutMs: 60_000 });
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(listed.stdout.trim().split('\n'), ['from-source']);
  } finally {
    await broker.stop();
  }
});
