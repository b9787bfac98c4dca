// A renewed certificate without a restart: IncrementalAlterConfigs on
// listener.name.ssl.ssl.keystore.location (a new file, or the same path with new content) swaps
// the listener's TLS context for new connections; an unusable one is refused and changes nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { once } from 'node:events';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { makeTestCerts, type TestCerts } from '../../helpers/tls-certs.js';
import { Admin, ConfigResourceType } from '../../../src/client/index.js';
import { runCli } from '../../cli/helpers.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec } from '../../../src/protocol/messages/index.js';

let certs: TestCerts;
let b: TestBroker;
let keystore: string;
let sslPort: number;

before(async () => {
  certs = makeTestCerts();
  keystore = join(certs.dir, 'live.keystore.pem');
  copyFileSync(certs.broker.keystore, keystore);
  b = await startTestBroker({ listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0', 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': keystore });
  sslPort = b.broker.boundPorts().get('SSL')!;
});
after(async () => {
  await b.stop();
  certs.cleanup();
});

async function servedSerial(): Promise<string> {
  const s = tls.connect({ port: sslPort, host: '127.0.0.1', ca: certs.ca, servername: 'localhost' });
  await once(s, 'secureConnect');
  const serial = s.getPeerX509Certificate()!.serialNumber;
  s.destroy();
  return serial;
}
/** A TLS connection that sends ApiVersions and reads the answer (a refused certificate closes it first). */
async function roundTrip(options: tls.ConnectionOptions = {}): Promise<void> {
  const c = await RawClient.connectTls(sslPort, { ca: certs.ca, ...options });
  try {
    await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 0, {});
  } finally {
    c.close();
  }
}
const serialOf = (pem: string): string => new X509Certificate(pem).serialNumber;

test('AlterConfigs on listener.name.ssl.ssl.keystore.location: new connections get the new certificate', async () => {
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  try {
    assert.equal(await servedSerial(), serialOf(certs.broker.cert));
    const renewed = certs.server('renewed', '/O=Fjord Test/CN=localhost');
    await admin.alterConfigs(ConfigResourceType.Broker, '0', [{ name: 'listener.name.ssl.ssl.keystore.location', op: 'set', value: renewed.keystore }]);
    assert.equal(await servedSerial(), serialOf(renewed.cert));

    // Same path, new content (as a certificate renewal tool rewrites it): re-read when set again.
    const again = certs.server('again', '/O=Fjord Test/CN=localhost');
    copyFileSync(again.keystore, renewed.keystore);
    const cli = await runCli('kafka-configs', [
      '--bootstrap-server',
      b.bootstrap,
      '--entity-type',
      'brokers',
      '--entity-name',
      '0',
      '--alter',
      '--add-config',
      `listener.name.ssl.ssl.keystore.location=${renewed.keystore}`,
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(await servedSerial(), serialOf(again.cert));

    // Unusable: a missing file, or a certificate for another name. Refused, nothing changes.
    await assert.rejects(
      admin.alterConfigs(ConfigResourceType.Broker, '0', [{ name: 'listener.name.ssl.ssl.keystore.location', op: 'set', value: '/nonexistent/k.pem' }]),
      /SSLFactory failed: Listener SSL: cannot read ssl\.keystore\.location \/nonexistent\/k\.pem: no such file/,
    );
    const other = certs.server('other', '/O=Other/CN=elsewhere');
    await assert.rejects(
      admin.alterConfigs(ConfigResourceType.Broker, '0', [{ name: 'listener.name.ssl.ssl.keystore.location', op: 'set', value: other.keystore }]),
      /DistinguishedName or SubjectAltNames do not match/,
    );
    assert.equal(await servedSerial(), serialOf(again.cert));

    // ssl.client.auth changes too: required from now on, for new connections.
    await admin.alterConfigs(ConfigResourceType.Broker, '0', [
      { name: 'listener.name.ssl.ssl.client.auth', op: 'set', value: 'required' },
      { name: 'listener.name.ssl.ssl.truststore.type', op: 'set', value: 'PEM' },
      { name: 'listener.name.ssl.ssl.truststore.location', op: 'set', value: certs.caFile },
    ]);
    await assert.rejects(roundTrip(), /closed|certificate|ECONNRESET/);
    const carol = certs.client('carol', '/CN=carol');
    await roundTrip({ cert: carol.cert, key: carol.key });
  } finally {
    await admin.close();
  }
});
