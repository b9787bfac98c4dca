import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveQuota } from '../../../src/server/quotas/resolver.js';
import { javaDoubleString, quotaValueText } from '../../../src/config/quota-configs.js';

const ALL: Record<string, Record<string, string>> = {
  'users/alice/clients/app': { producer_byte_rate: '1' },
  'users/alice/clients/<default>': { producer_byte_rate: '2' },
  'users/alice': { producer_byte_rate: '3' },
  'users/<default>/clients/app': { producer_byte_rate: '4' },
  'users/<default>/clients/<default>': { producer_byte_rate: '5' },
  'users/<default>': { producer_byte_rate: '6' },
  'clients/app': { producer_byte_rate: '7' },
  'clients/<default>': { producer_byte_rate: '8' },
};

/** The store with the `drop` most specific entities removed. */
function without(drop: number): (p: string) => Record<string, string> {
  const keep = Object.fromEntries(Object.entries(ALL).slice(drop));
  return (p) => keep[p] ?? {};
}

test('Kafka precedence: each level wins over every less specific one, with the right sharing', () => {
  const expected: [number, string, string, string][] = [
    [1, 'users/alice/clients/app', 'alice', 'app'],
    [2, 'users/alice/clients/<default>', 'alice', 'app'],
    [3, 'users/alice', 'alice', ''],
    [4, 'users/<default>/clients/app', 'alice', 'app'],
    [5, 'users/<default>/clients/<default>', 'alice', 'app'],
    [6, 'users/<default>', 'alice', ''],
    [7, 'clients/app', '', 'app'],
    [8, 'clients/<default>', '', 'app'],
  ];
  expected.forEach(([bound, entity, sensorUser, sensorClientId], i) => {
    assert.deepEqual(resolveQuota(without(i), 'alice', 'app', 'producer_byte_rate'), { bound, entity, sensorUser, sensorClientId }, `level ${i + 1}`);
  });
  assert.equal(resolveQuota(without(8), 'alice', 'app', 'producer_byte_rate'), undefined);
});

test('resolution is per key: a more specific entity without the key does not hide a default that has it', () => {
  const store: Record<string, Record<string, string>> = {
    'users/bob': { consumer_byte_rate: '100' },
    'clients/<default>': { producer_byte_rate: '50' },
  };
  const lookup = (p: string): Record<string, string> => store[p] ?? {};
  assert.equal(resolveQuota(lookup, 'bob', 'x', 'producer_byte_rate')?.entity, 'clients/<default>');
  assert.equal(resolveQuota(lookup, 'bob', 'x', 'consumer_byte_rate')?.bound, 100);
  assert.equal(resolveQuota(lookup, 'carol', 'x', 'consumer_byte_rate'), undefined);
});

test('other users and client ids do not pick up named entities; names are matched sanitized', () => {
  const store: Record<string, Record<string, string>> = {
    'users/CN%3Dbob%2COU%3Dx': { request_percentage: '25.0' },
    'users/alice/clients/app': { producer_byte_rate: '10' },
  };
  const lookup = (p: string): Record<string, string> => store[p] ?? {};
  assert.equal(resolveQuota(lookup, 'CN=bob,OU=x', 'any', 'request_percentage')?.bound, 25);
  assert.equal(resolveQuota(lookup, 'alice', 'other', 'producer_byte_rate'), undefined);
  assert.equal(resolveQuota(lookup, 'mallory', 'app', 'producer_byte_rate'), undefined);
  assert.equal(resolveQuota(lookup, 'ANONYMOUS', 'app', 'producer_byte_rate'), undefined);
});

test('stored values as Kafka stores them: LONG keys whole, DOUBLE keys as Java prints them', () => {
  assert.equal(quotaValueText('producer_byte_rate', 1048576), '1048576');
  assert.throws(() => quotaValueText('producer_byte_rate', 1.5), /must be a LONG value/);
  assert.equal(quotaValueText('request_percentage', 200), '200.0');
  assert.equal(quotaValueText('controller_mutation_rate', 0.5), '0.5');
  assert.throws(() => quotaValueText('SCRAM-SHA-256', 1), /Invalid configuration key SCRAM-SHA-256/);
  assert.equal(javaDoubleString(1048576), '1048576.0');
  assert.equal(javaDoubleString(10485760), '1.048576E7');
  assert.equal(javaDoubleString(1e-4), '1.0E-4');
});
