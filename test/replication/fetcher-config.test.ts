/** The replica fetcher's settings: Kafka's names, defaults and checks (one clear line each). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/index.js';
import { defaultBrokerConfig } from '../../src/server/config/index.js';

test("replica fetcher settings: Kafka's defaults", () => {
  const c = defaultBrokerConfig({});
  assert.equal(c.numReplicaFetchers, 1);
  assert.equal(c.replicaFetchMaxBytes, 1048576);
  assert.equal(c.replicaFetchResponseMaxBytes, 10485760);
  assert.equal(c.replicaFetchMinBytes, 1);
  assert.equal(c.replicaFetchWaitMaxMs, 500);
  assert.equal(c.replicaFetchBackoffMs, 1000);
  assert.equal(c.replicaSocketTimeoutMs, 30000);
});

test('replica fetcher settings out of range are refused with one line', () => {
  const cases: [Record<string, string>, string][] = [
    [{ 'num.replica.fetchers': '0' }, 'Invalid value 0 for configuration num.replica.fetchers: Value must be at least 1'],
    [{ 'replica.socket.timeout.ms': '0' }, 'Invalid value 0 for configuration replica.socket.timeout.ms: Value must be at least 1'],
    [{ 'replica.fetch.wait.max.ms': '-1' }, 'Invalid value -1 for configuration replica.fetch.wait.max.ms: Value must be at least 0'],
    [
      { 'replica.fetch.wait.max.ms': '5000', 'replica.socket.timeout.ms': '1000' },
      'replica.socket.timeout.ms (1000) should always be at least replica.fetch.wait.max.ms (5000) to prevent unnecessary socket timeouts',
    ],
  ];
  for (const [overrides, message] of cases) {
    assert.throws(
      () => defaultBrokerConfig(overrides),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.message, message);
        return true;
      },
    );
  }
});
