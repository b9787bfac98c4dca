/**
 * WireTxnMarkerWriter against fake brokers speaking the wire protocol: WriteTxnMarkers goes to
 * each partition's leader (one request per leader), answers map back per partition, and what
 * cannot be sent comes back as a code the coordinator retries (or drops, for deleted topics).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { Reader, Writer } from '../../../src/protocol/primitives/index.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  RequestHeaderCodec,
  ResponseHeaderCodec,
  WriteTxnMarkersRequestCodec,
  WriteTxnMarkersResponseCodec,
  type WriteTxnMarkersRequest,
} from '../../../src/protocol/messages/index.js';
import { requestHeaderVersion, responseHeaderVersion } from '../../../src/server/request-header.js';
import { WireTxnMarkerWriter } from '../../../src/coordinator/txn/markers.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { MetadataStore } from '../../../src/metadata/metadata-store.js';

/** A broker that answers ApiVersions and WriteTxnMarkers (when it serves it) from a script. */
async function fakeBroker(servesMarkers: boolean, codeFor: (topic: string, partition: number) => number) {
  const received: WriteTxnMarkersRequest[] = [];
  const server = net.createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const frame = buf.subarray(4, 4 + buf.readInt32BE(0));
        buf = buf.subarray(4 + frame.length);
        const apiKey = frame.readInt16BE(0);
        const version = frame.readInt16BE(2);
        const r = new Reader(frame);
        const w = new Writer(128);
        w.int32(0);
        if (apiKey === 18) {
          const header = RequestHeaderCodec.read(r, requestHeaderVersion(18, version >= ApiVersionsRequestCodec.flexibleFrom));
          ResponseHeaderCodec.write(w, { correlationId: header.correlationId }, 0);
          const apiKeys = [{ apiKey: 18, minVersion: 0, maxVersion: 3 }, ...(servesMarkers ? [{ apiKey: 27, minVersion: 0, maxVersion: 1 }] : [])];
          ApiVersionsResponseCodec.write(w, { errorCode: 0, apiKeys }, version);
        } else if (apiKey === 27) {
          const flexible = version >= WriteTxnMarkersRequestCodec.flexibleFrom;
          const header = RequestHeaderCodec.read(r, requestHeaderVersion(27, flexible));
          const req = WriteTxnMarkersRequestCodec.read(r, version);
          received.push(req);
          ResponseHeaderCodec.write(w, { correlationId: header.correlationId }, responseHeaderVersion(27, flexible));
          WriteTxnMarkersResponseCodec.write(
            w,
            {
              markers: req.markers.map((m) => ({
                producerId: m.producerId,
                topics: m.topics.map((t) => ({
                  name: t.name,
                  partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: codeFor(t.name, p) })),
                })),
              })),
            },
            version,
          );
        } else {
          sock.destroy();
          return;
        }
        const out = w.result();
        out.writeInt32BE(out.length - 4, 0);
        sock.write(out);
      }
    });
    sock.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  return { port, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function metadataWith(topics: Record<string, number[]>): MetadataStore {
  return {
    topic: (name: string) =>
      topics[name]
        ? {
            name,
            topicId: name,
            internal: false,
            configs: {},
            partitions: topics[name]!.map((leader, partition) => ({ partition, leader, leaderEpoch: 0, replicas: [leader], isr: [leader] })),
          }
        : undefined,
  } as unknown as MetadataStore;
}

test('markers go to each partition leader, one request per leader, and come back per partition', async () => {
  const b1 = await fakeBroker(true, (t, p) => (t === 'a' && p === 1 ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE));
  const b2 = await fakeBroker(true, () => ErrorCode.NONE);
  const ports = new Map([
    [1, b1.port],
    [2, b2.port],
  ]);
  const writer = new WireTxnMarkerWriter({
    brokerId: 0,
    metadata: metadataWith({ a: [1, 1, 2], b: [2, -1] }),
    endpoint: (id) => (ports.has(id) ? { host: '127.0.0.1', port: ports.get(id)! } : undefined),
    clientId: 'test',
    requestTimeoutMs: 5000,
  });
  try {
    const res = await writer.writeMarkers({
      producerId: 42n,
      producerEpoch: 3,
      coordinatorEpoch: 7,
      commit: true,
      partitions: [
        { topic: 'a', partition: 0 },
        { topic: 'a', partition: 1 },
        { topic: 'a', partition: 2 },
        { topic: 'b', partition: 0 },
        { topic: 'b', partition: 1 },
        { topic: 'gone', partition: 0 },
      ],
    });
    const codes = Object.fromEntries(res.map((r) => [`${r.topic}-${r.partition}`, r.errorCode]));
    assert.deepEqual(codes, {
      'a-0': 0,
      'a-1': ErrorCode.NOT_LEADER_OR_FOLLOWER,
      'a-2': 0,
      'b-0': 0,
      'b-1': ErrorCode.NOT_LEADER_OR_FOLLOWER,
      'gone-0': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    });
    assert.equal(b1.received.length, 1);
    assert.equal(b2.received.length, 1);
    const m = b1.received[0]!.markers[0]!;
    assert.deepEqual([m.producerId, m.producerEpoch, m.coordinatorEpoch, m.transactionResult], [42n, 3, 7, true]);
    assert.deepEqual(m.topics, [{ name: 'a', partitionIndexes: [0, 1] }]);
    assert.deepEqual(b2.received[0]!.markers[0]!.topics, [
      { name: 'a', partitionIndexes: [2] },
      { name: 'b', partitionIndexes: [0] },
    ]);
    // The connection is reused.
    await writer.writeMarkers({ producerId: 42n, producerEpoch: 3, coordinatorEpoch: 7, commit: false, partitions: [{ topic: 'a', partition: 0 }] });
    assert.equal(b1.received.length, 2);
    assert.equal(b1.received[1]!.markers[0]!.transactionResult, false);
  } finally {
    writer.close();
    await b1.close();
    await b2.close();
  }
});

test('a leader that does not serve WriteTxnMarkers, or cannot be reached, gives codes the coordinator retries', async () => {
  const old = await fakeBroker(false, () => ErrorCode.NONE);
  const closed = net.createServer();
  closed.listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const deadPort = (closed.address() as net.AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const writer = new WireTxnMarkerWriter({
    brokerId: 0,
    metadata: metadataWith({ a: [1, 2, 3] }),
    endpoint: (id) => (id === 1 ? { host: '127.0.0.1', port: old.port } : id === 2 ? { host: '127.0.0.1', port: deadPort } : undefined),
    clientId: 'test',
    requestTimeoutMs: 5000,
  });
  try {
    const res = await writer.writeMarkers({
      producerId: 1n,
      producerEpoch: 0,
      coordinatorEpoch: 0,
      commit: true,
      partitions: [0, 1, 2].map((partition) => ({ topic: 'a', partition })),
    });
    assert.deepEqual(
      res.map((r) => r.errorCode),
      [ErrorCode.UNSUPPORTED_VERSION, ErrorCode.NETWORK_EXCEPTION, ErrorCode.NETWORK_EXCEPTION],
    );
  } finally {
    writer.close();
    await old.close();
  }
});
