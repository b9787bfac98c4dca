// Issue 21, F2 (network half), as an attacker does it against a broker child process with the
// default config: one connection pipelines 300 Fetch requests whose answers are ~900 KB each and
// reads none of them. Before, the broker built every answer (RSS +270 MB and more); now it builds
// one at a time and stops reading that connection once the kernel holds what it can, while a
// client beside it keeps being answered promptly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { BrokerChild } from '../../helpers/broker-child.js';
import { RawClient, encodeRequest } from '../../helpers/raw-client.js';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec, FetchRequestCodec } from '../../../src/protocol/messages/index.js';
import { batchOf, produce } from '../handlers/data-plane-helpers.js';

const MiB = 1 << 20;
const REQUESTS = 300;
/** Before: every answer was built (300 x 900 KB). The bound leaves room for GC noise and the kernel's share. */
const RSS_GROWTH_BOUND = 80 * MiB;
/** Generous for a loaded 2-core machine. */
const SIDE_DELAY_BOUND_MS = 500;

test('a connection pipelining 300 large Fetch answers it never reads keeps the broker bounded; others are served', async (t) => {
  const b = await BrokerChild.start({ topics: [{ name: 'big' }] });
  const attacker = new net.Socket();
  attacker.on('error', () => undefined);
  try {
    const side = await RawClient.connect(b.port);
    side.socket.setMaxListeners(0);
    const value = 'x'.repeat(900_000);
    const produced = await produce(side, 7, 'big', 0, batchOf([value]), 1);
    assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, 0);
    const ask = async (): Promise<number> => {
      const t0 = performance.now();
      const r = await side.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'side', clientSoftwareVersion: '1' });
      assert.equal(r.errorCode, 0);
      return performance.now() - t0;
    };
    await ask();
    await b.settle();
    b.resetPeaks();
    const baseRss = b.rss;

    attacker.connect(b.port, '127.0.0.1');
    await once(attacker, 'connect');
    attacker.pause(); // never reads
    const fetchFrame = (id: number): Buffer =>
      encodeRequest(
        1,
        FetchRequestCodec,
        4,
        {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: MiB,
          topics: [{ topic: 'big', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: MiB }] }],
        },
        id,
      );
    attacker.write(Buffer.concat(Array.from({ length: REQUESTS }, (_, i) => fetchFrame(i + 1))));

    // Watch for 3 s: the side client keeps asking; the broker's RSS is sampled every 50 ms.
    let worst = 0;
    let answers = 0;
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      worst = Math.max(worst, await ask());
      answers++;
    }
    await b.settle();
    const growth = b.peakRss - baseRss;
    t.diagnostic(
      `broker RSS +${(growth / MiB).toFixed(0)} MiB while ${REQUESTS} answers of ~900 KB went unread; side client: ${answers} answers, worst ${worst.toFixed(1)} ms`,
    );
    assert.ok(growth < RSS_GROWTH_BOUND, `broker RSS grew by ${(growth / MiB).toFixed(0)} MiB for one connection that reads nothing`);
    assert.ok(worst < SIDE_DELAY_BOUND_MS, `the side client waited ${worst.toFixed(0)} ms`);

    // Once the attacker reads, every answer comes, in order.
    let pending = Buffer.alloc(0);
    let next = 1;
    const allRead = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${next - 1} of ${REQUESTS} answers arrived`)), 30_000);
      attacker.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 8 && pending.length >= 4 + pending.readInt32BE(0)) {
          const size = pending.readInt32BE(0);
          const id = pending.readInt32BE(4);
          if (id !== next) reject(new Error(`answer ${id} came where ${next} was due`));
          assert.ok(size > 900_000, `answer ${id} is ${size} bytes`);
          next++;
          pending = pending.subarray(4 + size);
        }
        if (next > REQUESTS) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    attacker.resume();
    await allRead;
    side.close();
  } finally {
    attacker.destroy();
    await b.stop();
  }
});
