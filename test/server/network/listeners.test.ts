import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveAdvertisedListeners, parseListeners, parseSecurityProtocolMap, resolveAdvertisedPorts } from '../../../src/server/network/index.js';

test('parseListeners: names, empty host, IPv6, custom names', () => {
  assert.deepEqual(parseListeners('PLAINTEXT://127.0.0.1:9092, other://:9093,V6://[::1]:0'), [
    { name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 'PLAINTEXT' },
    { name: 'OTHER', host: '0.0.0.0', port: 9093, securityProtocol: 'PLAINTEXT' },
    { name: 'V6', host: '::1', port: 0, securityProtocol: 'PLAINTEXT' },
  ]);
});

test('parseListeners: the four protocols, named listeners through the protocol map; unknown protocols and malformed entries refused', () => {
  assert.deepEqual(
    parseListeners('SSL://:9093,SASL_SSL://h:9094,sasl_plaintext://:9095').map((l) => `${l.name}:${l.securityProtocol}`),
    ['SSL:SSL', 'SASL_SSL:SASL_SSL', 'SASL_PLAINTEXT:SASL_PLAINTEXT'],
  );
  assert.deepEqual(
    parseListeners('INTERNAL://:9092,external://:9093', parseSecurityProtocolMap('INTERNAL:SSL,EXTERNAL:SASL_SSL')).map(
      (l) => `${l.name}:${l.securityProtocol}`,
    ),
    ['INTERNAL:SSL', 'EXTERNAL:SASL_SSL'],
  );
  assert.throws(
    () => parseListeners('INTERNAL://:9092', parseSecurityProtocolMap('INTERNAL:TLS')),
    /INTERNAL:\/\/:9092 uses security protocol TLS, which is none of/,
  );
  assert.throws(() => parseListeners('PLAINTEXT://host'), /not of the form NAME:\/\/host:port/);
  assert.throws(() => parseListeners('PLAINTEXT://h:70000'), /out of range/);
  assert.throws(() => parseListeners('A://:9092,A://:9093'), /name A is used twice/);
  assert.throws(() => parseListeners('A://:9092,B://:9092'), /port 9092 is used by two listeners/);
  assert.equal(parseListeners('A://:0,B://:0').length, 2);
});

test('advertised listeners default to listeners, wildcard hosts become the host name', () => {
  const listeners = parseListeners('PLAINTEXT://:9092,LOCAL://127.0.0.1:9093');
  assert.deepEqual(
    deriveAdvertisedListeners(listeners, null, undefined, 'myhost').map((l) => `${l.name}://${l.host}:${l.port}`),
    ['PLAINTEXT://myhost:9092', 'LOCAL://127.0.0.1:9093'],
  );
  assert.deepEqual(
    deriveAdvertisedListeners(listeners, 'PLAINTEXT://:19092', undefined, 'myhost').map((l) => `${l.host}:${l.port}`),
    ['myhost:19092'],
  );
  assert.throws(() => deriveAdvertisedListeners(listeners, 'PLAINTEXT://0.0.0.0:9092'), /nonroutable meta-address 0\.0\.0\.0/);
});

test('resolveAdvertisedPorts fills in ports bound for port 0', () => {
  const advertised = parseListeners('A://h:0,B://h:9000');
  assert.deepEqual(
    resolveAdvertisedPorts(
      advertised,
      new Map([
        ['A', 41000],
        ['B', 9000],
      ]),
    ).map((l) => l.port),
    [41000, 9000],
  );
});
