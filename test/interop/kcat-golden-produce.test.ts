/**
 * Golden Produce requests: the raw frames kcat (librdkafka) and kafkajs send with each codec,
 * captured through a small TCP proxy in front of the broker. Committed fixtures in
 * test/fixtures/produce/<client>-<codec>.bin are decoded with our records module, proving we
 * read batches exactly as real clients compress them. FJORD_WRITE_FIXTURES=1 refreshes them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { requirePeer } from '../helpers/peers.js';
import { Reader } from '../../src/protocol/primitives/index.js';
import { ProduceRequestCodec, type ProduceRequest } from '../../src/protocol/messages/index.js';
import { CompressionType, compressionOf, decodeBatch, iterateBatches } from '../../src/protocol/records/index.js';
import { isFlexible, peekHeader, readRequestHeader } from '../../src/server/request-header.js';
import { kcatProduce } from './kcat-helpers.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'produce');
const WRITE = process.env.FJORD_WRITE_FIXTURES === '1';
const VALUES = Array.from({ length: 20 }, (_, i) => `golden-${i}-${'abc'.repeat(i)}`);
const CODEC_IDS: Record<string, CompressionType> = {
  none: CompressionType.None,
  gzip: CompressionType.Gzip,
  snappy: CompressionType.Snappy,
  lz4: CompressionType.Lz4,
  zstd: CompressionType.Zstd,
};

const require = createRequire(import.meta.url);
type CodecFactory = () => { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> };
const LZ4Codec = require('kafkajs-lz4') as new () => { codec: CodecFactory };
const codecs = kafkajs.CompressionCodecs as unknown as { [type: number]: CodecFactory };
codecs[kafkajs.CompressionTypes.Snappy] = require('kafkajs-snappy') as CodecFactory;
codecs[kafkajs.CompressionTypes.LZ4] = new LZ4Codec().codec;

/** A proxy that forwards bytes both ways and keeps every client→broker Produce frame. */
class CapturingProxy {
  readonly frames: Buffer[] = [];
  private readonly server: net.Server;
  port = 0;
  /** The broker port; set once the broker runs (it advertises the proxy, so clients stay on it). */
  target = 0;
  constructor() {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target, '127.0.0.1');
      let pending = Buffer.alloc(0);
      client.on('data', (chunk: Buffer) => {
        upstream.write(chunk);
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
          const frame = pending.subarray(4, 4 + pending.readInt32BE(0));
          if (frame.readInt16BE(0) === 0) this.frames.push(Buffer.from(frame));
          pending = pending.subarray(4 + frame.length);
        }
      });
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
  }
  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as net.AddressInfo).port;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function decodeProduceFrame(frame: Buffer): { version: number; request: ProduceRequest } {
  const { apiKey, apiVersion } = peekHeader(frame);
  assert.equal(apiKey, 0);
  const r = new Reader(frame);
  readRequestHeader(r, apiKey, isFlexible(ProduceRequestCodec, apiVersion));
  return { version: apiVersion, request: ProduceRequestCodec.read(r, apiVersion) };
}

/** Every record value in the frame, checking each batch uses the expected codec. */
function valuesInFrame(frame: Buffer, codec: CompressionType): string[] {
  const values: string[] = [];
  for (const t of decodeProduceFrame(frame).request.topicData) {
    for (const p of t.partitionData) {
      for (const e of iterateBatches(p.records!)) {
        assert.equal(compressionOf(p.records!, e.start), codec);
        for (const rec of decodeBatch(p.records!, e.start, { maxBytes: 1 << 30 }).records) values.push(rec.value!.toString());
      }
    }
  }
  return values;
}

let b: TestBroker;
let proxy: CapturingProxy;
before(async () => {
  proxy = new CapturingProxy();
  await proxy.start();
  b = await startTestBroker({ 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port}` });
  proxy.target = b.port;
});
after(async () => {
  await proxy.stop();
  await b.stop();
});

async function captured(run: () => Promise<void>): Promise<Buffer> {
  const from = proxy.frames.length;
  await run();
  const frames = proxy.frames.slice(from);
  assert.ok(frames.length > 0, 'no Produce frame captured');
  return frames.length === 1 ? frames[0]! : frames[frames.length - 1]!;
}

for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
  test(`kcat ${codec} Produce frames decode with our records module`, async (t) => {
    if (!requirePeer(t, 'kcat')) return;
    const frame = await captured(() =>
      kcatProduce(`127.0.0.1:${proxy.port}`, `golden-kcat-${codec}`, VALUES.join('\n') + '\n', ['-z', codec, '-p', '0', '-X', 'linger.ms=100']),
    );
    assert.deepEqual(valuesInFrame(frame, CODEC_IDS[codec]!), VALUES);
    if (WRITE) await writeFile(path.join(FIXTURES, `kcat-${codec}.bin`), frame);
  });
}

for (const codec of ['none', 'gzip', 'snappy', 'lz4']) {
  test(`kafkajs ${codec} Produce frames decode with our records module`, async () => {
    const kafka = new kafkajs.Kafka({ clientId: 'golden', brokers: [`127.0.0.1:${proxy.port}`], logLevel: kafkajs.logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    const compression = {
      none: kafkajs.CompressionTypes.None,
      gzip: kafkajs.CompressionTypes.GZIP,
      snappy: kafkajs.CompressionTypes.Snappy,
      lz4: kafkajs.CompressionTypes.LZ4,
    }[codec]!;
    try {
      const frame = await captured(async () => {
        await producer.send({ topic: `golden-kjs-${codec}`, compression, messages: VALUES.map((v) => ({ value: v, partition: 0 })) });
      });
      assert.deepEqual(valuesInFrame(frame, CODEC_IDS[codec]!), VALUES);
      if (WRITE) await writeFile(path.join(FIXTURES, `kafkajs-${codec}.bin`), frame);
    } finally {
      await producer.disconnect();
    }
  });
}

test('committed golden Produce frames (kcat and kafkajs, every codec) decode to the known values', async () => {
  const files = (await readdir(FIXTURES)).filter((f) => f.endsWith('.bin'));
  assert.ok(files.length >= 9, `expected at least 9 fixtures, found ${files.length}`);
  for (const f of files) {
    const codec = f
      .replace(/\.bin$/, '')
      .split('-')
      .pop()!;
    const frame = await readFile(path.join(FIXTURES, f));
    assert.deepEqual(valuesInFrame(frame, CODEC_IDS[codec]!), VALUES, f);
  }
});
