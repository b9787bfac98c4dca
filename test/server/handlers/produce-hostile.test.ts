/**
 * Compression bombs sent with Produce, against a broker in a child process so its memory and
 * event loop are measured on their own: each bomb is refused with MESSAGE_TOO_LARGE, the
 * broker's RSS stays bounded, a well-behaved client on another connection keeps being answered
 * promptly, and the attacker's connection still works for legitimate produce.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec, ProduceRequestCodec, ProduceResponseCodec } from '../../../src/protocol/messages/index.js';
import { CompressionType, encodeBatch } from '../../../src/protocol/records/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { BrokerChild } from '../../helpers/broker-child.js';
import { RawClient } from '../../helpers/raw-client.js';
import { compressFrameSync } from 'lz4-napi';
import { legacyGzipBomb, rawV2Batch, v2Bomb } from '../../helpers/bombs.js';
import { produce } from './data-plane-helpers.js';

const MB = 1 << 20;

/** Sends ApiVersions back to back until stopped; records the slowest round trip. */
function probe(c: RawClient): { stop(): Promise<number> } {
  let running = true;
  let worst = 0;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'probe', clientSoftwareVersion: '1' });
      worst = Math.max(worst, performance.now() - t0);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return worst;
    },
  };
}

function legitBatch(compression: CompressionType, seed: number): Buffer {
  // ~8 MB of records compressing to well under max.message.bytes, like a kafkajs send() of 20,000 messages.
  return encodeBatch({
    records: Array.from({ length: 20_000 }, (_, i) => ({
      attributes: 0,
      timestampDelta: 0,
      offsetDelta: i,
      key: null,
      value: Buffer.from(`legit value ${(i + seed) % 50}`.padEnd(400, '.')),
      headers: [],
    })),
    compression,
    baseTimestamp: 1_700_000_000_000n,
  });
}

test('compression bombs in Produce are refused with bounded memory while other clients are served', { timeout: 240_000 }, async () => {
  const b = await BrokerChild.start({
    topics: [
      { name: 'bombs', partitions: 2 },
      { name: 'legit', partitions: 1 },
    ],
    heapMb: 1024,
  });
  const attacker = await RawClient.connect(b.port);
  const bystander = await RawClient.connect(b.port);
  const producer = await RawClient.connect(b.port);
  for (const c of [attacker, bystander, producer]) c.socket.setMaxListeners(0);
  try {
    const legit = [CompressionType.Zstd, CompressionType.Lz4, CompressionType.Gzip, CompressionType.Snappy].map((c, i) => legitBatch(c, i));
    const lz4Bomb = rawV2Batch(compressFrameSync(Buffer.alloc(200 << 20)), 1, CompressionType.Lz4);
    const bombs: [string, Buffer, number][] = [
      ['legacy gzip wrapper, 100 MB of messages (Produce v2)', legacyGzipBomb(100), 2],
      ['legacy gzip wrapper, ~1 GB of messages (Produce v2)', legacyGzipBomb(900), 2],
      ['v2 gzip, one 200 MB value', v2Bomb(CompressionType.Gzip, 200), 7],
      ['v2 zstd, one 200 MB value', v2Bomb(CompressionType.Zstd, 200), 7],
      ['v2 lz4, 200 MB of zeros', lz4Bomb, 7],
    ];
    await b.settle();
    // The noise floor of this (shared) machine: the same probe for 2 s with nothing else going on.
    const idle = probe(bystander);
    await new Promise((r) => setTimeout(r, 2000));
    const idleWorst = await idle.stop();
    await b.settle();
    const idleLoop = b.worstLoopDelayMs;
    const baseRss = b.rss;
    b.resetPeaks();
    const p = probe(bystander);
    // A well-behaved producer sends big compressed batches all along.
    let producing = true;
    let legitSent = 0;
    const legitLoop = (async () => {
      while (producing) {
        const res = await produce(producer, 7, 'legit', 0, Buffer.from(legit[legitSent % legit.length]!));
        assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE, res.responses[0]!.partitionResponses[0]!.errorMessage ?? '');
        legitSent++;
      }
    })();
    for (const [what, records, version] of bombs) {
      const t0 = performance.now();
      const res = await produce(attacker, version, 'bombs', 0, records);
      const part = res.responses[0]!.partitionResponses[0]!;
      assert.equal(part.errorCode, ErrorCode.MESSAGE_TOO_LARGE, `${what}: ${part.errorMessage}`);
      console.log(`${what}: ${records.length} bytes refused in ${(performance.now() - t0).toFixed(0)} ms`);
      // The attacker's connection itself is still served.
      const ok = await produce(attacker, 7, 'bombs', 1, Buffer.from(legit[0]!));
      assert.equal(ok.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE, what);
    }
    producing = false;
    await legitLoop;
    const worstProbe = await p.stop();
    await b.settle();
    const growth = (b.peakRss - baseRss) / MB;
    console.log(
      `idle: worst ApiVersions round trip ${idleWorst.toFixed(1)} ms, broker loop delay ${idleLoop} ms; under attack: ` +
        `bystander worst ApiVersions round trip ${worstProbe.toFixed(1)} ms; broker worst event-loop delay ${b.worstLoopDelayMs} ms; ` +
        `${legitSent} legit 8 MB batches beside; RSS ${(baseRss / MB).toFixed(0)} MB -> peak ${(b.peakRss / MB).toFixed(0)} MB`,
    );
    assert.ok(legitSent > 0);
    assert.ok(growth < 400, `broker RSS grew by ${growth.toFixed(0)} MB`);
    // Generous for a loaded 2-core machine; the unbounded code blocked for seconds.
    assert.ok(worstProbe < 1000, `bystander waited ${worstProbe.toFixed(0)} ms for ApiVersions`);
    assert.ok(!b.exited, 'broker still running');
  } catch (err) {
    throw new Error(`${(err as Error).message}; broker ${b.exited ? `exited (${b.exitCode})` : 'running'}; stderr: ${b.stderr}`, { cause: err });
  } finally {
    attacker.close();
    bystander.close();
    producer.close();
    await b.stop();
  }
});

test('a batch over max.message.bytes is refused before it is inflated (a 3 MB legacy bomb)', { timeout: 120_000 }, async () => {
  const b = await BrokerChild.start({ topics: [{ name: 'bombs' }] });
  const c = await RawClient.connect(b.port);
  try {
    const big = legacyGzipBomb(1000);
    assert.ok(big.length > 1048588);
    const t0 = performance.now();
    const res = await produce(c, 2, 'bombs', 0, big);
    assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    const ms = performance.now() - t0;
    assert.ok(ms < 5000, `refused in ${ms.toFixed(0)} ms`);
  } finally {
    c.close();
    await b.stop();
  }
});

test('many bombs in one request are inflated a few at a time: memory stays bounded', { timeout: 180_000 }, async () => {
  const b = await BrokerChild.start({ topics: [{ name: 'wide', partitions: 40 }], heapMb: 1024 });
  const c = await RawClient.connect(b.port);
  try {
    const bomb = v2Bomb(CompressionType.Gzip, 200);
    await b.settle();
    const baseRss = b.rss;
    b.resetPeaks();
    const res = await c.request(0, ProduceRequestCodec, ProduceResponseCodec, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 30_000,
      topicData: [{ name: 'wide', partitionData: Array.from({ length: 40 }, (_, index) => ({ index, records: bomb })) }],
    });
    for (const p of res.responses[0]!.partitionResponses) assert.equal(p.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    await b.settle();
    const growth = (b.peakRss - baseRss) / MB;
    console.log(`40 gzip bombs in one request: RSS ${(baseRss / MB).toFixed(0)} MB -> peak ${(b.peakRss / MB).toFixed(0)} MB`);
    assert.ok(growth < 400, `broker RSS grew by ${growth.toFixed(0)} MB`);
  } finally {
    c.close();
    await b.stop();
  }
});
