import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient, encodeRequest } from '../helpers/raw-client.js';
import { Reader } from '../../src/protocol/primitives/index.js';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec, MetadataRequestCodec, MetadataResponseCodec } from '../../src/protocol/messages/index.js';
import { handlerTable } from '../../src/server/handlers/index.js';
import { ErrorCode, ERRORS_BY_CODE, isRetriable } from '../../src/protocol/errors.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker();
});
after(() => b.stop());

test('ApiVersions advertises exactly the handler table, at every version 0-4', async () => {
  const c = await RawClient.connect(b.port);
  const table = handlerTable();
  for (let v = 0; v <= 4; v++) {
    const res = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, v, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    assert.equal(res.errorCode, 0);
    assert.deepEqual(
      res.apiKeys.map((k) => [k.apiKey, k.minVersion, k.maxVersion]),
      [...table.values()].sort((x, y) => x.apiKey - y.apiKey).map((h) => [h.apiKey, h.minVersion, h.maxVersion]),
    );
  }
  c.close();
});

test('an ApiVersions version the broker does not know gets UNSUPPORTED_VERSION in the v0 layout', async () => {
  const c = await RawClient.connect(b.port);
  const frame = encodeRequest(18, ApiVersionsRequestCodec, 4, { clientSoftwareName: 'future', clientSoftwareVersion: '9' }, 42);
  frame.writeInt16BE(99, 6); // claim version 99
  const answer = once(c.socket, 'data');
  c.socket.write(frame);
  const [chunk] = (await answer) as [Buffer];
  const r = new Reader(chunk, 4);
  assert.equal(r.int32(), 42); // response header v0: correlation id only
  const res = ApiVersionsResponseCodec.read(r, 0);
  assert.equal(res.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.ok(res.apiKeys.some((k) => k.apiKey === 18 && k.maxVersion === 4));
  c.close();
});

test('an unsupported Metadata version closes only that connection', async () => {
  const bad = await RawClient.connect(b.port);
  const frame = encodeRequest(3, MetadataRequestCodec, 12, { topics: null }, 5);
  frame.writeInt16BE(13, 6);
  bad.socket.write(frame);
  await once(bad.socket, 'close');
  const good = await RawClient.connect(b.port);
  const md = await good.request(3, MetadataRequestCodec, MetadataResponseCodec, 12, { topics: null });
  assert.equal(md.brokers.length, 1);
  good.close();
});

test('an unknown API key closes the connection', async () => {
  const c = await RawClient.connect(b.port);
  const frame = encodeRequest(18, ApiVersionsRequestCodec, 0, {}, 1);
  frame.writeInt16BE(999, 4);
  c.socket.write(frame);
  await once(c.socket, 'close');
  assert.ok(c.closed);
});

test('error table: Kafka codes, names and retriability', () => {
  assert.equal(ERRORS_BY_CODE.get(3)?.name, 'UNKNOWN_TOPIC_OR_PARTITION');
  assert.equal(isRetriable(ErrorCode.NOT_LEADER_OR_FOLLOWER), true);
  assert.equal(isRetriable(ErrorCode.OFFSET_OUT_OF_RANGE), false);
  assert.equal(ERRORS_BY_CODE.get(82)?.name, 'FENCED_INSTANCE_ID');
  for (const [name, code] of Object.entries(ErrorCode)) assert.equal(ERRORS_BY_CODE.get(code)?.name, name);
});
