/**
 * kafka-configs.sh --entity-type users|clients with --bootstrap-server: alter, delete, describe
 * with Kafka 3.9's output, combined user + client id entities, defaults, and one-line errors.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { runCli } from './helpers.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker({});
});
after(async () => {
  await b.stop();
});

const configs = (...args: string[]) => runCli('kafka-configs', ['--bootstrap-server', b.bootstrap, ...args], { timeoutMs: 60_000 });

function oneLineError(r: { code: number | null; stderr: string }, message: string | RegExp): void {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr.split('\n').length, 2, `one line: ${r.stderr}`);
  if (typeof message === 'string') assert.equal(r.stderr, `kafka-configs.sh: ${message}\n`);
  else assert.match(r.stderr, message);
}

test("users, clients, a user's client id and defaults: alter, describe and delete as Kafka 3.9 prints them", async () => {
  const a = await configs(
    '--alter',
    '--add-config',
    'producer_byte_rate=1048576,consumer_byte_rate=2097152',
    '--entity-type',
    'users',
    '--entity-name',
    'alice',
  );
  assert.equal(a.stdout, 'Completed updating config for user alice.\n', a.stderr);
  const both = await configs(
    '--alter',
    '--add-config',
    'producer_byte_rate=10485760',
    '--entity-type',
    'users',
    '--entity-name',
    'alice',
    '--entity-type',
    'clients',
    '--entity-name',
    'app',
  );
  assert.equal(both.stdout, 'Completed updating config for user alice.\n', both.stderr);
  const dflt = await configs('--alter', '--add-config', 'request_percentage=50', '--entity-type', 'clients', '--entity-default');
  assert.equal(dflt.stdout, 'Completed updating default config for clients in the cluster.\n', dflt.stderr);
  const store = b.broker.services.clientEntities;
  assert.deepEqual(store.get('users/alice'), { producer_byte_rate: '1048576', consumer_byte_rate: '2097152' });
  assert.deepEqual(store.get('users/alice/clients/app'), { producer_byte_rate: '10485760' });
  assert.deepEqual(store.get('clients/<default>'), { request_percentage: '50.0' });

  const d = await configs('--describe', '--entity-type', 'users', '--entity-name', 'alice');
  assert.equal(d.code, 0, d.stderr);
  assert.match(
    d.stdout,
    /^Quota configs for user-principal 'alice' are (producer_byte_rate=1048576\.0, consumer_byte_rate=2097152\.0|consumer_byte_rate=2097152\.0, producer_byte_rate=1048576\.0)\n$/,
  );
  const dBoth = await configs('--describe', '--entity-type', 'users', '--entity-name', 'alice', '--entity-type', 'clients', '--entity-name', 'app');
  assert.equal(dBoth.stdout, "Quota configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1.048576E7\n");
  const dDefault = await configs('--describe', '--client-defaults');
  assert.equal(dDefault.stdout, 'Quota configs for the default client-id are request_percentage=50.0\n');
  const dAllClients = await configs('--describe', '--entity-type', 'clients');
  assert.equal(dAllClients.stdout, 'Quota configs for the default client-id are request_percentage=50.0\n');

  const del = await configs('--alter', '--delete-config', 'consumer_byte_rate', '--user', 'alice');
  assert.equal(del.code, 0, del.stderr);
  assert.deepEqual(store.get('users/alice'), { producer_byte_rate: '1048576' });
  oneLineError(
    await configs('--alter', '--delete-config', 'consumer_byte_rate', '--entity-type', 'users', '--entity-name', 'alice'),
    'Invalid config(s): consumer_byte_rate',
  );
});

test('one-line errors: unknown keys, bad values, a missing name, SCRAM keys on clients', async () => {
  oneLineError(
    await configs('--alter', '--add-config', 'retention.ms=1', '--entity-type', 'clients', '--entity-name', 'x'),
    "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: retention.ms",
  );
  oneLineError(
    await configs('--alter', '--add-config', 'producer_byte_rate=abc', '--entity-type', 'users', '--entity-name', 'x'),
    'Cannot parse quota configuration value for producer_byte_rate: abc',
  );
  oneLineError(
    await configs('--alter', '--add-config', 'producer_byte_rate=1.5', '--entity-type', 'users', '--entity-name', 'x'),
    /producer_byte_rate must be a LONG value/,
  );
  oneLineError(
    await configs('--alter', '--add-config', 'producer_byte_rate=1', '--entity-type', 'users'),
    '--entity-name or --entity-default must be specified with --alter of users',
  );
  oneLineError(
    await configs(
      '--alter',
      '--add-config',
      'producer_byte_rate=1',
      '--entity-type',
      'users',
      '--entity-name',
      'a',
      '--entity-type',
      'topics',
      '--entity-name',
      't',
    ),
    /Only 'users' and 'clients' entity types can be combined/,
  );
});
