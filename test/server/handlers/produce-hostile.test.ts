/**
 * Compression bombs sent with Produce, against a broker in a child process so its memory and
 * event loop are measured on their own: each bomb is refused with MESSAGE_TOO_LARGE, the
 * broker's RSS stays bounded, a well-behaved client on another connection keeps being answered
 * promptly, and the attacker's connection still works for legitimate produce.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec } from '../../../src/protocol/messages/index.js';
import { CompressionType, encodeBatch } from '../../../src/protocol/records/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { BrokerChild } from '../../helpers/broker-child.js';
import { RawClient } from '../../helpers/raw-client.js';
import { legacyGzipBomb, v2Bomb } from '../../helpers/bombs.js';
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

test('compression bombs in Produce are refused with bounded memory while other clients are served', { timeout: 240_000 }, async () => {
  const b = await BrokerChild.start({ topics: [{ name: 'bombs', partitions: 2 }], heapMb: 1024 });
  const attacker = await RawClient.connect(b.port);
  const bystander = await RawClient.connect(b.port);
  try {
    const legit = encodeBatch({
      records: Array.from({ length: 20_000 }, (_, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(`legit value ${i % 50}`.padEnd(400, '.')), headers: [] })),
      compression: CompressionType.Zstd,
      baseTimestamp: 1_700_000_000_000n,
    });
    const bombs: [string, Buffer, number][] = [
      ['legacy gzip, 100 MB of messages (Produce v2)', legacyGzipBomb(100), 2],
      ['legacy gzip, ~1 GB of messages in under 1 MB (Produce v2)', legacyGzipBomb(900), 2],
      ['legacy gzip, 3 MB request (Produce v2)', legacyGzipBomb(2900), 2],
      ['v2 gzip, one 200 MB value', v2Bomb(CompressionType.Gzip, 200), 7],
      ['v2 zstd, one 200 MB value', v2Bomb(CompressionType.Zstd, 200), 7],
    ];
    await b.settle();
    const baseRss = b.rss;
    b.resetPeaks();
    const p = probe(bystander);
    for (const [what, records, version] of bombs) {
      const t0 = performance.now();
      const res = await produce(attacker, version, 'bombs', 0, records);
      const part = res.responses[0]!.partitionResponses[0]!;
      assert.equal(part.errorCode, ErrorCode.MESSAGE_TOO_LARGE, `${what}: ${part.errorMessage}`);
      // The same request carrying a legitimate batch for the other partition is still served.
      const ok = await produce(attacker, 7, 'bombs', 1, legit);
      assert.equal(ok.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE, what);
      console.log(`${what}: ${records.length} bytes refused in ${(performance.now() - t0).toFixed(0)} ms`);
    }
    const worstProbe = await p.stop();
    await b.settle();
    const growth = (b.peakRss - baseRss) / MB;
    console.log(`bystander worst ApiVersions round trip ${worstProbe.toFixed(1)} ms; broker worst event-loop delay ${b.worstLoopDelayMs} ms; RSS ${(baseRss / MB).toFixed(0)} MB -> peak ${(b.peakRss / MB).toFixed(0)} MB`);
    assert.ok(growth < 400, `broker RSS grew by ${growth.toFixed(0)} MB`);
    // Generous for a loaded 2-core machine; the unbounded code blocked for seconds.
    assert.ok(worstProbe < 1000, `bystander waited ${worstProbe.toFixed(0)} ms for ApiVersions`);
    assert.ok(!b.exited, 'broker still running');
  } finally {
    attacker.close();
    bystander.close();
    await b.stop();
  }
});
