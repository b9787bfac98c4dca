/**
 * Requests captured from real clients (tools/capture-requests.ts) decode to what the clients
 * sent, and re-encode to the same bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Reader, Writer, type MessageCodec } from '../../src/protocol/primitives/index.js';
import { ApiVersionsRequestCodec, MetadataRequestCodec, RequestHeaderCodec } from '../../src/protocol/messages/index.js';
import { isFlexible, readRequestHeader, requestHeaderVersion } from '../../src/server/request-header.js';

const dir = join(import.meta.dirname, '../fixtures/requests');

function decode<T>(file: string, codec: MessageCodec<T>) {
  const frame = readFileSync(join(dir, file));
  const apiKey = frame.readInt16BE(0);
  const version = frame.readInt16BE(2);
  const flexible = isFlexible(codec as MessageCodec<unknown>, version);
  const r = new Reader(frame);
  const header = readRequestHeader(r, apiKey, flexible);
  const body = codec.read(r, version);
  assert.equal(r.remaining, 0, `${file}: trailing bytes`);
  // re-encode: identical bytes
  const w = new Writer(64);
  RequestHeaderCodec.write(
    w,
    { requestApiKey: apiKey, requestApiVersion: version, correlationId: header.correlationId, clientId: header.clientId },
    requestHeaderVersion(apiKey, flexible),
  );
  codec.write(w, body as never, version);
  assert.deepEqual(w.result(), frame, `${file}: re-encoding differs`);
  return { header, body };
}

test('kcat (librdkafka 2.0.2) ApiVersions v3', () => {
  const { header, body } = decode('kcat-api-versions-v3.bin', ApiVersionsRequestCodec);
  assert.deepEqual(header, { apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'rdkafka' });
  assert.deepEqual(body, { clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.0.2' });
});

test('kcat Metadata v4 for one topic', () => {
  const { header, body } = decode('kcat-metadata-v4.bin', MetadataRequestCodec);
  assert.equal(header.apiVersion, 4);
  assert.equal(header.clientId, 'rdkafka');
  assert.deepEqual(
    body.topics?.map((t) => t.name),
    ['bigdata'],
  );
  assert.equal(body.allowAutoTopicCreation, true);
});

test('kafkajs 2.2.4 ApiVersions v2', () => {
  const { header, body } = decode('kafkajs-api-versions-v2.bin', ApiVersionsRequestCodec);
  assert.deepEqual(header, { apiKey: 18, apiVersion: 2, correlationId: 0, clientId: 'golden' });
  assert.deepEqual(body, { clientSoftwareName: '', clientSoftwareVersion: '' });
});

test('kafkajs Metadata v6 for all topics (null list)', () => {
  const { header, body } = decode('kafkajs-metadata-v6.bin', MetadataRequestCodec);
  assert.equal(header.apiVersion, 6);
  assert.equal(body.topics, null);
  assert.equal(body.allowAutoTopicCreation, false);
});
