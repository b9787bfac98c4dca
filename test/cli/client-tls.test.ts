import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { clientTlsSecurityFrom } from '../../src/cli/common/client-tls.js';
import { clientOptionsFrom } from '../../src/cli/common/config.js';
import { makeTestCerts } from '../helpers/tls-certs.js';

const certs = makeTestCerts();
after(() => certs.cleanup());
const props = (o: Record<string, string>): Map<string, string> => new Map(Object.entries(o));

test("Kafka's client names: security.protocol, PEM trust store file or inline, PEM key store, host name checking", () => {
  assert.equal(clientTlsSecurityFrom(props({})), undefined);
  assert.deepEqual(clientTlsSecurityFrom(props({ 'security.protocol': 'plaintext' })), { protocol: 'PLAINTEXT' });
  const ssl = clientTlsSecurityFrom(props({ 'security.protocol': 'SSL', 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caFile }))!;
  assert.equal(ssl.protocol, 'SSL');
  assert.equal(ssl.tls!.ca, certs.ca.trim());
  assert.equal(ssl.tls!.verifyHostname, true);
  assert.equal(ssl.tls!.cert, undefined);
  const inline = clientTlsSecurityFrom(
    props({
      'security.protocol': 'SASL_SSL',
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.certificates': certs.ca.replace(/\n/g, ' '),
      'ssl.endpoint.identification.algorithm': '',
    }),
  )!;
  assert.equal(inline.protocol, 'SASL_SSL');
  assert.match(String(inline.tls!.ca), /^-----BEGIN CERTIFICATE-----\n/);
  assert.equal(inline.tls!.verifyHostname, false);
  const bob = certs.client('bob', '/CN=bob', { keyPassword: 'pw' });
  const mtls = clientTlsSecurityFrom(
    props({
      'security.protocol': 'SSL',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': bob.keystore,
      'ssl.key.password': 'pw',
      'ssl.enabled.protocols': 'TLSv1.3',
    }),
  )!;
  assert.match(String(mtls.tls!.key), /ENCRYPTED PRIVATE KEY/);
  assert.equal(mtls.tls!.cert, bob.cert.trim());
  assert.equal(mtls.tls!.passphrase, 'pw');
  assert.equal(mtls.tls!.minVersion, 'TLSv1.3');
  // clientOptionsFrom carries it to every tool.
  assert.equal(clientOptionsFrom(props({ 'security.protocol': 'SSL' }), 'h:1').security?.protocol, 'SSL');
});

test('bad client TLS settings are one-line CliErrors', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ 'security.protocol': 'TLS' }, /^security\.protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got "TLS"$/],
    [
      { 'security.protocol': 'SSL', 'ssl.truststore.location': '/x/t.jks' },
      /^client config: ssl\.truststore\.type JKS is not supported; use ssl\.truststore\.type=PEM$/,
    ],
    [
      { 'security.protocol': 'SSL', 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': '/nonexistent/ca.pem' },
      /^client config: cannot read ssl\.truststore\.location \/nonexistent\/ca\.pem: no such file$/,
    ],
    [
      { 'security.protocol': 'SSL', 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs.caFile },
      /must hold a PEM private key and its certificate chain$/,
    ],
  ];
  for (const [p, message] of cases) assert.throws(() => clientTlsSecurityFrom(props(p)), { name: 'CliError', message });
});
