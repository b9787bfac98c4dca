/**
 * 10,000 hostile frames (random bytes, truncated and mutated valid requests) on many connections,
 * while a well-behaved client keeps asking and checking: it must get correct answers throughout,
 * and the broker must still be up at the end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestBroker } from '../helpers/broker.js';
import { RawClient, encodeRequest } from '../helpers/raw-client.js';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec, MetadataRequestCodec, MetadataResponseCodec } from '../../src/protocol/messages/index.js';

const HOSTILE_FRAMES = 10_000;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function validFrames(): Buffer[] {
  const frames: Buffer[] = [];
  for (let v = 0; v <= 4; v++) frames.push(encodeRequest(18, ApiVersionsRequestCodec, v, { clientSoftwareName: 'fuzz', clientSoftwareVersion: '1' }, 7));
  for (let v = 0; v <= 12; v++) frames.push(encodeRequest(3, MetadataRequestCodec, v, { topics: [{ name: 'fuzzed' }], allowAutoTopicCreation: false }, 9));
  const dir = join(import.meta.dirname, '../fixtures/requests');
  for (const f of readdirSync(dir)) {
    const body = readFileSync(join(dir, f));
    const framed = Buffer.alloc(4 + body.length);
    framed.writeInt32BE(body.length, 0);
    body.copy(framed, 4);
    frames.push(framed);
  }
  return frames;
}

function hostileFrame(next: () => number, valid: Buffer[]): Buffer {
  const kind = Math.floor(next() * 3);
  if (kind === 0) {
    // random bytes behind a size prefix that is usually honest, sometimes a lie
    const n = Math.floor(next() * 200);
    const b = Buffer.alloc(4 + n);
    for (let i = 4; i < b.length; i++) b[i] = Math.floor(next() * 256);
    b.writeInt32BE(next() < 0.8 ? n : Math.floor(next() * 2 ** 31) * (next() < 0.5 ? -1 : 1), 0);
    return b;
  }
  const base = Buffer.from(valid[Math.floor(next() * valid.length)]!);
  if (kind === 1) {
    const cut = 4 + Math.floor(next() * (base.length - 4));
    const t = base.subarray(0, cut);
    t.writeInt32BE(cut - 4, 0); // a consistent frame whose body stops early
    return t;
  }
  const flips = 1 + Math.floor(next() * 4);
  for (let i = 0; i < flips; i++) base[4 + Math.floor(next() * (base.length - 4))] = Math.floor(next() * 256);
  return base;
}

/** Sends a few frames on one connection and waits until the broker answers or closes it. */
function attack(port: number, frames: Buffer[]): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const done = (): void => {
      clearTimeout(timer);
      s.destroy();
      resolve();
    };
    const timer = setTimeout(done, 2000); // a frame that lies about its size leaves the broker waiting
    s.on('connect', () => {
      for (const f of frames) s.write(f);
      s.end();
    });
    s.on('close', done);
    s.on('error', done);
    s.resume();
  });
}

test('broker survives 10,000 hostile frames while serving a good client', async () => {
  const b = await startTestBroker();
  try {
    await b.broker.services.metadata.createTopic({ name: 'steady', numPartitions: 3, replicationFactor: 1 });
    const valid = validFrames();
    const next = rng(0xf1a0d);
    let stopGood = false;
    let goodAnswers = 0;
    const good = (async () => {
      const c = await RawClient.connect(b.port);
      try {
        while (!stopGood) {
          const av = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'good', clientSoftwareVersion: '1' });
          assert.equal(av.errorCode, 0);
          assert.ok(av.apiKeys.some((k) => k.apiKey === 3 && k.maxVersion === 12));
          const md = await c.request(3, MetadataRequestCodec, MetadataResponseCodec, 12, { topics: [{ name: 'steady' }] });
          assert.equal(md.topics[0]!.errorCode, 0);
          assert.equal(md.topics[0]!.partitions.length, 3);
          goodAnswers++;
        }
      } finally {
        c.close();
      }
    })();
    let sent = 0;
    const concurrency = 32;
    const worker = async (): Promise<void> => {
      while (sent < HOSTILE_FRAMES) {
        const n = Math.min(1 + Math.floor(next() * 5), HOSTILE_FRAMES - sent);
        sent += n;
        const frames = Array.from({ length: n }, () => hostileFrame(next, valid));
        await attack(b.port, frames);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    stopGood = true;
    await good;
    assert.equal(sent, HOSTILE_FRAMES);
    assert.ok(goodAnswers > 10, `good client got ${goodAnswers} answer pairs`);
    // still up: a fresh connection is served
    const c = await RawClient.connect(b.port);
    const md = await c.request(3, MetadataRequestCodec, MetadataResponseCodec, 1, { topics: null });
    assert.ok(md.topics.some((t) => t.name === 'steady'));
    c.close();
  } finally {
    await b.stop();
  }
});
