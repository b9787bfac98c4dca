// The finding as an attacker sees it, against a broker child process with default settings:
// 12 connections each send a frame declaring 100 MB and stop after 90 MB. The broker's RSS must
// stay under RSS_BOUND (it reached 1.2 GB before queued.max.request.bytes existed) while a
// well-behaved client on another connection keeps getting answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { once } from 'node:events';
import { RawClient } from '../../helpers/raw-client.js';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec } from '../../../src/protocol/messages/index.js';
import { brokerChildEntry } from '../../helpers/built.js';

const MB = 1_000_000;
/** Default queued.max.request.bytes is 256 MiB; the admitted partial frames hold at most 2 x 90 MB. */
const RSS_BOUND = 400 * 1024 * 1024;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status);
  if (kb === null) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb[1]) * 1024;
}

test('12 connections holding 90 MB partial frames keep a default broker under 400 MB RSS, and others are served', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-memory-'));
  const props = { listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': dir };
  const child = spawn(process.execPath, [...brokerChildEntry(), JSON.stringify({ props, stats: false })], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, 'exit');
  const attackers: net.Socket[] = [];
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`broker did not start: ${stderr}`)), 60_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /READY (\d+)/.exec(out);
        if (m !== null) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.on('exit', (code) => reject(new Error(`broker exited with ${code}: ${stderr}`)));
    });
    const pid = child.pid!;
    const good = await RawClient.connect(port);
    const ask = async (): Promise<void> => {
      const r = await good.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'good', clientSoftwareVersion: '1' });
      assert.equal(r.errorCode, 0);
    };
    await ask();
    const startRss = rssOf(pid);
    let peakRss = startRss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssOf(pid));
    }, 50);

    // One 90 MB body written to every socket (Node does not copy it).
    const body = Buffer.alloc(90 * MB - 8, 0x61);
    let delivered = 0;
    for (let i = 0; i < 12; i++) {
      const s = net.connect(port, '127.0.0.1');
      await once(s, 'connect');
      s.on('error', () => undefined);
      const head = Buffer.alloc(12);
      head.writeInt32BE(100 * MB, 0); // declared: 100 MB, under socket.request.max.bytes
      head.writeInt16BE(0, 4); // Produce
      head.writeInt16BE(3, 6);
      head.writeInt32BE(i, 8);
      s.write(head);
      s.write(body, () => delivered++);
      attackers.push(s);
    }
    // While the attack runs, the good client keeps asking; wait until the broker has taken all
    // it will take (two frames handed to the kernel in full), then watch a little longer.
    let answers = 0;
    const deadline = Date.now() + 60_000;
    while (delivered < 2 && Date.now() < deadline) {
      await ask();
      answers++;
    }
    assert.ok(delivered >= 2, `only ${delivered} attacker frames were delivered in 60 s`);
    const watchUntil = Date.now() + 2000;
    while (Date.now() < watchUntil) {
      await ask();
      answers++;
    }
    peakRss = Math.max(peakRss, rssOf(pid));
    clearInterval(sampler);
    t.diagnostic(
      `broker RSS: start ${(startRss / 2 ** 20).toFixed(0)} MiB, peak ${(peakRss / 2 ** 20).toFixed(0)} MiB; ${delivered} of 12 frames delivered; ${answers} answers to the good client`,
    );
    assert.ok(peakRss < RSS_BOUND, `broker RSS peaked at ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
    assert.ok(answers >= 5, `the good client got only ${answers} answers`);
    assert.ok(delivered < 12, 'the broker read every attacker frame: nothing paused reading');

    for (const s of attackers) s.destroy();
    await ask();
    good.close();
  } finally {
    for (const s of attackers) s.destroy();
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
});
