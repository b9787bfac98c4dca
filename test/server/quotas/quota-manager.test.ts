import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientEntityConfigs, type ClientEntityBackend } from '../../../src/metadata/client-entity-configs.js';
import { QuotaManagers } from '../../../src/server/quotas/quota-manager.js';
import { userPrincipal } from '../../../src/security/principal.js';

function memoryBackend(): ClientEntityBackend {
  const m = new Map<string, Record<string, string>>();
  return {
    loadAll: async () => new Map(m),
    load: async (p) => ({ ...(m.get(p) ?? {}) }),
    store: async (p, c) => {
      if (Object.keys(c).length === 0) m.delete(p);
      else m.set(p, { ...c });
    },
  };
}

const alice = userPrincipal('alice');
const bob = userPrincipal('bob');
const WINDOWS = { samples: 11, windowMs: 1000 };

test('no quota: nothing recorded, 0 throttle; a quota set later applies at the next request; removed, it stops', async () => {
  const store = await ClientEntityConfigs.open(memoryBackend());
  let now = 0;
  const q = new QuotaManagers(store, WINDOWS, () => now);
  assert.equal(q.produce.quotasEnabled, false);
  assert.equal(q.produce.recordAndGetThrottleTimeMs(alice, 'app', 1e9), 0);
  await store.set('users/alice', { producer_byte_rate: '1000' });
  assert.equal(q.produce.quotasEnabled, true);
  assert.equal(q.fetch.quotasEnabled, false, 'per type');
  // 20000 bytes over the assumed 10 s = 2000/s against 1000/s: 10 s.
  assert.equal(q.produce.recordAndGetThrottleTimeMs(alice, 'app', 20_000), 10_000);
  now = 500;
  await store.set('users/alice', { producer_byte_rate: '4000' });
  assert.equal(q.produce.recordAndGetThrottleTimeMs(alice, 'app', 0), 0, 'the raised bound applies to the same measured rate');
  await store.set('users/alice', {});
  assert.equal(q.produce.quotasEnabled, false);
  assert.equal(q.produce.recordAndGetThrottleTimeMs(alice, 'app', 1e9), 0);
});

test('sharing: users/<u> is shared by all its client ids; users/<default> and clients/<default> give each their own rate', async () => {
  const store = await ClientEntityConfigs.open(memoryBackend());
  const q = new QuotaManagers(store, WINDOWS, () => 0);
  await store.set('users/alice', { producer_byte_rate: '1000' });
  await store.set('users/<default>', { producer_byte_rate: '1000' });
  await store.set('clients/<default>', { consumer_byte_rate: '1000' });
  assert.equal(q.produce.recordAndGetThrottleTimeMs(alice, 'a1', 10_000), 0);
  assert.ok(q.produce.recordAndGetThrottleTimeMs(alice, 'a2', 10_000) > 0, "alice's second client id shares her rate");
  assert.equal(q.produce.recordAndGetThrottleTimeMs(bob, 'b1', 10_000), 0, 'bob has his own default rate');
  assert.equal(q.produce.recordAndGetThrottleTimeMs(userPrincipal('carol'), 'c1', 10_000), 0, 'and carol hers');
  assert.equal(q.fetch.recordAndGetThrottleTimeMs(alice, 'x', 10_000), 0);
  assert.ok(q.fetch.recordAndGetThrottleTimeMs(bob, 'x', 10_000) > 0, 'client id x is one group whoever the user');
  assert.equal(q.fetch.recordAndGetThrottleTimeMs(bob, 'y', 10_000), 0);
  assert.equal(q.fetch.maxValueInQuotaWindow(bob, 'y'), 10_000);
  assert.equal(q.produce.maxValueInQuotaWindow(userPrincipal('dave'), 'z'), 10_000);
  await store.set('users/<default>', {});
  assert.equal(q.produce.maxValueInQuotaWindow(userPrincipal('dave'), 'z'), Infinity, 'the cached resolution was dropped on change');
});

test('unrecord takes a throttled fetch back', async () => {
  const store = await ClientEntityConfigs.open(memoryBackend());
  const q = new QuotaManagers(store, WINDOWS, () => 0);
  await store.set('clients/r', { consumer_byte_rate: '1000' });
  assert.ok(q.fetch.recordAndGetThrottleTimeMs(alice, 'r', 20_000) > 0);
  q.fetch.unrecord(alice, 'r', 20_000);
  assert.equal(q.fetch.recordAndGetThrottleTimeMs(alice, 'r', 5_000), 0);
});
