import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  AlterClientQuotasRequestCodec,
  AlterClientQuotasResponseCodec,
  DescribeClientQuotasRequestCodec,
  DescribeClientQuotasResponseCodec,
} from '../../../src/protocol/messages/index.js';
import type { AlterClientQuotasResponse } from '../../../src/protocol/messages/49-alter-client-quotas.js';
import type { DescribeClientQuotasResponse } from '../../../src/protocol/messages/48-describe-client-quotas.js';
import { describeClientQuotas } from '../../../src/server/quotas/client-quota-admin.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({});
  c = await RawClient.connect(b.port);
});
after(async () => {
  c.close();
  await b.stop();
});

type Part = { entityType: string; entityName: string | null };
type Op = { key: string; value: number; remove?: boolean };
const alter = (version: number, entries: { entity: Part[]; ops: Op[] }[], validateOnly = false): Promise<AlterClientQuotasResponse> =>
  c.request(49, AlterClientQuotasRequestCodec, AlterClientQuotasResponseCodec, version, {
    entries: entries.map((e) => ({ entity: e.entity, ops: e.ops.map((o) => ({ key: o.key, value: o.value, remove: o.remove ?? false })) })),
    validateOnly,
  });
const describe = (
  version: number,
  components: { entityType: string; matchType: number; match: string | null }[],
  strict = false,
): Promise<DescribeClientQuotasResponse> => c.request(48, DescribeClientQuotasRequestCodec, DescribeClientQuotasResponseCodec, version, { components, strict });

const user = (name: string | null): Part => ({ entityType: 'user', entityName: name });
const client = (name: string | null): Part => ({ entityType: 'client-id', entityName: name });
const summary = (r: DescribeClientQuotasResponse): string[] =>
  (r.entries ?? [])
    .map(
      (e) =>
        `${e.entity.map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`).join(',')}:${e.values
          .map((v) => `${v.key}=${v.value}`)
          .sort()
          .join(',')}`,
    )
    .sort();

test('alter v0 and v1 store quotas where Kafka does; describe reads them back as doubles', async () => {
  for (const version of [0, 1]) {
    const res = await alter(version, [
      {
        entity: [user('alice')],
        ops: [
          { key: 'producer_byte_rate', value: 1048576 },
          { key: 'request_percentage', value: 50 },
        ],
      },
      { entity: [user('alice'), client('app')], ops: [{ key: 'consumer_byte_rate', value: 2097152 }] },
      { entity: [client(null)], ops: [{ key: 'controller_mutation_rate', value: 10 }] },
    ]);
    assert.deepEqual(
      res.entries.map((e) => e.errorCode),
      [0, 0, 0],
    );
    assert.deepEqual(res.entries[1]!.entity, [user('alice'), client('app')]);
  }
  const store = b.broker.services.clientEntities;
  assert.deepEqual(store.get('users/alice'), { producer_byte_rate: '1048576', request_percentage: '50.0' });
  assert.deepEqual(store.get('users/alice/clients/app'), { consumer_byte_rate: '2097152' });
  assert.deepEqual(store.get('clients/<default>'), { controller_mutation_rate: '10.0' });
  const all = await describe(1, []);
  assert.equal(all.errorCode, 0);
  assert.deepEqual(summary(all), [
    'client-id=<default>:controller_mutation_rate=10',
    'user=alice,client-id=app:consumer_byte_rate=2097152',
    'user=alice:producer_byte_rate=1048576,request_percentage=50',
  ]);
});

test('describe filters: exact, default, specified; strict leaves out entities with other types', async () => {
  await alter(1, [{ entity: [user(null)], ops: [{ key: 'producer_byte_rate', value: 100 }] }]);
  assert.deepEqual(summary(await describe(0, [{ entityType: 'user', matchType: 0, match: 'alice' }], true)), [
    'user=alice:producer_byte_rate=1048576,request_percentage=50',
  ]);
  assert.deepEqual(summary(await describe(1, [{ entityType: 'user', matchType: 0, match: 'alice' }])), [
    'user=alice,client-id=app:consumer_byte_rate=2097152',
    'user=alice:producer_byte_rate=1048576,request_percentage=50',
  ]);
  assert.deepEqual(summary(await describe(1, [{ entityType: 'user', matchType: 1, match: null }], true)), ['user=<default>:producer_byte_rate=100']);
  assert.deepEqual(summary(await describe(1, [{ entityType: 'user', matchType: 2, match: null }], true)), [
    'user=<default>:producer_byte_rate=100',
    'user=alice:producer_byte_rate=1048576,request_percentage=50',
  ]);
  assert.deepEqual(summary(await describe(1, [{ entityType: 'client-id', matchType: 2, match: null }], true)), [
    'client-id=<default>:controller_mutation_rate=10',
  ]);
  assert.deepEqual(
    summary(
      await describe(
        1,
        [
          { entityType: 'user', matchType: 0, match: 'alice' },
          { entityType: 'client-id', matchType: 0, match: 'app' },
        ],
        true,
      ),
    ),
    ['user=alice,client-id=app:consumer_byte_rate=2097152'],
  );
  assert.deepEqual(summary(await describe(1, [{ entityType: 'ip', matchType: 2, match: null }])), []);
});

test('describe validation: duplicate, empty, unknown types and ip beside user', async () => {
  const dup = await describe(1, [
    { entityType: 'user', matchType: 2, match: null },
    { entityType: 'user', matchType: 1, match: null },
  ]);
  assert.equal(dup.errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(dup.entries, null);
  assert.equal((await describe(1, [{ entityType: '', matchType: 2, match: null }])).errorCode, ErrorCode.INVALID_REQUEST);
  const custom = await describe(1, [{ entityType: 'group', matchType: 2, match: null }]);
  assert.equal(custom.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.match(custom.errorMessage ?? '', /Custom entity type 'group' not supported/);
  assert.equal(
    (
      await describe(1, [
        { entityType: 'ip', matchType: 2, match: null },
        { entityType: 'user', matchType: 2, match: null },
      ])
    ).errorCode,
    ErrorCode.INVALID_REQUEST,
  );
  assert.equal((await describe(1, [{ entityType: 'user', matchType: 7, match: null }])).errorCode, ErrorCode.INVALID_REQUEST);
});

test('alter validation: unknown keys, non-whole LONG values, bad entities fail alone; validate_only stores nothing', async () => {
  const res = await alter(1, [
    { entity: [user('bob')], ops: [{ key: 'SCRAM-SHA-256', value: 1 }] },
    { entity: [user('bob')], ops: [{ key: 'producer_byte_rate', value: 1.5 }] },
    { entity: [{ entityType: 'group', entityName: 'g' }], ops: [{ key: 'producer_byte_rate', value: 1 }] },
    { entity: [{ entityType: 'ip', entityName: '10.0.0.1' }], ops: [{ key: 'connection_creation_rate', value: 1 }] },
    { entity: [], ops: [{ key: 'producer_byte_rate', value: 1 }] },
    { entity: [user('carol')], ops: [{ key: 'consumer_byte_rate', value: 7 }] },
  ]);
  assert.deepEqual(
    res.entries.map((e) => e.errorCode),
    [42, 42, 42, 42, 42, 0],
  );
  assert.equal(res.entries[0]!.errorMessage, 'Invalid configuration key SCRAM-SHA-256');
  assert.equal(res.entries[1]!.errorMessage, 'Configuration producer_byte_rate must be a LONG value');
  assert.match(res.entries[3]!.errorMessage ?? '', /IP quotas/);
  const store = b.broker.services.clientEntities;
  assert.deepEqual(store.get('users/bob'), {});
  const dry = await alter(1, [{ entity: [user('dave')], ops: [{ key: 'producer_byte_rate', value: 5 }] }], true);
  assert.equal(dry.entries[0]!.errorCode, 0);
  assert.deepEqual(store.get('users/dave'), {});
});

test("removing a quota keeps the entity's other configs (SCRAM credentials); removing the last one drops the entity", async () => {
  const store = b.broker.services.clientEntities;
  await store.set('users/erin', { 'SCRAM-SHA-256': 'salt=c2FsdA==,stored_key=a2V5,server_key=a2V5,iterations=4096' });
  await alter(1, [{ entity: [user('erin')], ops: [{ key: 'producer_byte_rate', value: 10 }] }]);
  await alter(1, [{ entity: [user('erin')], ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] }]);
  assert.deepEqual(Object.keys(store.get('users/erin')), ['SCRAM-SHA-256']);
  // An entity with only a SCRAM credential has no quotas to describe.
  assert.deepEqual(describeClientQuotas(store, [{ entityType: 'user', matchType: 0, match: 'erin' }], true).entries, []);
  await alter(1, [{ entity: [user('carol')], ops: [{ key: 'consumer_byte_rate', value: 0, remove: true }] }]);
  assert.equal(store.entries().has('users/carol'), false);
});
