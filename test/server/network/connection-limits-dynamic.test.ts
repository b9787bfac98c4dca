// The connection limits are dynamic broker configs, as Kafka's DynamicConnectionQuota: a change
// through IncrementalAlterConfigs (kafka-configs.sh) applies to new connections at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  IncrementalAlterConfigsRequestCodec,
  IncrementalAlterConfigsResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { buildBrokerConfig } from '../../../src/server/config/index.js';
import { ConfigError } from '../../../src/config/index.js';

const BROKER = 4;
const SET = 0;

/** Connects and asks ApiVersions: true when answered, false when the broker closed the connection. */
async function served(port: number, keep: RawClient[]): Promise<boolean> {
  const c = await RawClient.connect(port);
  try {
    await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    keep.push(c);
    return true;
  } catch {
    c.close();
    return false;
  }
}

test('max.connections.per.ip and its overrides change at run time through IncrementalAlterConfigs', async () => {
  const b = await startTestBroker();
  const admin = await RawClient.connect(b.port);
  const open: RawClient[] = [];
  try {
    const alter = async (resourceName: string, configs: Record<string, string>) => {
      const res = await admin.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
        resources: [{ resourceType: BROKER, resourceName, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: SET, value })) }],
        validateOnly: false,
      });
      return res.responses[0]!;
    };
    // Kafka's rule: 0 only with overrides.
    const zero = await alter('', { 'max.connections.per.ip': '0' });
    assert.equal(zero.errorCode, ErrorCode.INVALID_REQUEST);
    assert.match(zero.errorMessage ?? '', /max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set/);

    // Cluster default: 3 per address (the admin connection is one of them).
    assert.equal((await alter('', { 'max.connections.per.ip': '3' })).errorCode, ErrorCode.NONE);
    assert.equal(await served(b.port, open), true);
    assert.equal(await served(b.port, open), true);
    assert.equal(await served(b.port, open), false, 'a fourth connection from 127.0.0.1 is closed');
    // This broker: an override for 127.0.0.1 lets two more in.
    assert.equal((await alter('0', { 'max.connections.per.ip.overrides': '127.0.0.1:5' })).errorCode, ErrorCode.NONE);
    assert.equal(await served(b.port, open), true);
    assert.equal(await served(b.port, open), true);
    assert.equal(await served(b.port, open), false, 'a sixth connection from 127.0.0.1 is closed');
    const bad = await alter('0', { 'max.connections.per.ip.overrides': '127.0.0.1:many' });
    assert.equal(bad.errorCode, ErrorCode.INVALID_REQUEST);
  } finally {
    for (const c of open) c.close();
    admin.close();
    await b.stop();
  }
});

test("server.properties: max.connections.per.ip=0 without overrides stops start-up with Kafka's line", () => {
  assert.throws(
    () => buildBrokerConfig(new Map([['max.connections.per.ip', '0']])),
    (err: unknown) => err instanceof ConfigError && /can be set to zero only if max.connections.per.ip.overrides property is set/.test(err.message),
  );
  assert.doesNotThrow(() =>
    buildBrokerConfig(
      new Map([
        ['max.connections.per.ip', '0'],
        ['max.connections.per.ip.overrides', '10.0.0.1:5'],
      ]),
    ),
  );
  assert.throws(() => buildBrokerConfig(new Map([['max.connections.per.ip.overrides', 'host']])), ConfigError);
  assert.throws(() => buildBrokerConfig(new Map([['listener.name.plaintext.max.connections', '-1']])), ConfigError);
});
