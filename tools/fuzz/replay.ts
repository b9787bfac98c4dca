/**
 * Replays a repro file the fuzzer saved (crash-*.bin, probe-failure-*.bin) against a fresh broker,
 * one input per connection, and names the inputs that hurt it:
 *   npx tsx tools/fuzz/replay.ts FILE [--rss-kill-mb N]
 * For each input: its API key and version, how the broker answered (frames back, closed, or
 * silence), how long, and the broker's RSS after it.
 */
import { readFileSync } from 'node:fs';
import { BrokerProcess } from './broker-process.js';
import { mb, readEnvelopes } from './fuzz.js';
import { FuzzConnection, framingOf } from './wire.js';
import type { ApiVersionsRequest } from '../../src/protocol/messages/index.js';

const [file, flag, value] = process.argv.slice(2);
if (!file) {
  console.error('usage: replay FILE [--rss-kill-mb N]');
  process.exit(2);
}
const inputs = readEnvelopes(readFileSync(file));
const killMb = flag === '--rss-kill-mb' ? Number(value) : 1024;
let broker = await BrokerProcess.start({ rssKillBytes: killMb * 2 ** 20 });
console.log(`${inputs.length} inputs; broker RSS ${mb(broker.startRss)}`);
for (const [i, input] of inputs.entries()) {
  const key = input.length >= 6 ? input.readInt16BE(4) : NaN;
  const version = input.length >= 8 ? input.readInt16BE(6) : NaN;
  const before = broker.sample() ?? 0;
  broker.takeWindow();
  const t0 = Date.now();
  const conn = await FuzzConnection.connect(broker.port);
  await conn.write(input);
  const closed = await conn.waitClosed(300);
  // then the probe the fuzzer sends on the same connection
  let probe = 'no probe (closed)';
  if (!closed && !framingOf(input, 100 * 2 ** 20).inSync) probe = 'no probe (the broker waits for the rest of a frame)';
  else if (!closed) {
    try {
      await conn.request<ApiVersionsRequest>(18, 3, { clientSoftwareName: 'replay', clientSoftwareVersion: '1' }, 3000, 0x7e000000 + i);
      probe = 'probe answered';
    } catch (e) {
      probe = `PROBE: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  const answered = conn.framesReceived;
  conn.close();
  await new Promise((r) => setTimeout(r, 50));
  const w = broker.takeWindow();
  const ms = Date.now() - t0;
  const hurt = broker.exited || w.peakRss - before > 50 * 2 ** 20 || ms > 2000 || probe.startsWith('PROBE');
  const line = `#${i} key ${key} v${version} ${input.length} B: ${answered} answer(s), ${closed ? 'closed' : probe} after ${ms} ms; RSS peak ${mb(w.peakRss)}${broker.exited ? `; broker ${broker.describeExit()}` : ''}`;
  if (hurt || process.env.REPLAY_VERBOSE) console.log(`${hurt ? 'HURT ' : ''}${line}${hurt ? `\n  ${input.subarray(0, 96).toString('hex')}` : ''}`);
  if (broker.exited) {
    await broker.stop();
    broker = await BrokerProcess.start({ rssKillBytes: killMb * 2 ** 20 });
  }
}
await broker.stop();
