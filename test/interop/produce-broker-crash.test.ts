/**
 * The broker's central promise: an acknowledged write is never lost. A librdkafka producer
 * (confluent-kafka, acks=all, idempotent) writes while the broker process is SIGKILLed; after a
 * restart on the same log dir, every record the producer saw acknowledged is there, at the
 * offset it was acknowledged with, with its value.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requirePeer, PYTHON } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { BrokerProcess, freePort } from './groups/crash-helpers.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';

const PRODUCER = `
import sys
from confluent_kafka import Producer
p = Producer({'bootstrap.servers': sys.argv[1], 'acks': 'all', 'enable.idempotence': True,
              'linger.ms': 2, 'message.timeout.ms': 60000})
def report(err, msg):
    if err is None:
        sys.stdout.write('%d %d %s\\n' % (msg.partition(), msg.offset(), msg.value().decode()))
i = 0
while True:
    try:
        p.produce('durable', value=('v%d' % i).encode(), key=('k%d' % (i % 97)).encode(), on_delivery=report)
        i += 1
    except BufferError:
        p.poll(0.05)
    p.poll(0)
    if i % 1000 == 0:
        sys.stdout.flush()
`;

test('no acknowledged record is lost when the broker is SIGKILLed mid-stream', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka') || !requirePeer(t, 'kcat')) return;
  const dir = await mkdtemp(join(tmpdir(), 'fjord-crash-produce-'));
  const broker = new BrokerProcess(await freePort(), dir, { 'num.partitions': '3' });
  const acked = new Map<string, string>(); // "p:o" -> value
  try {
    await broker.start();
    const producer = spawn(PYTHON, ['-c', PRODUCER, broker.bootstrap], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    let stderr = '';
    producer.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const enough = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${acked.size} acks in 60 s; producer stderr: ${stderr.slice(-1000)}`)), 60_000);
      producer.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) {
          const [p, o, v] = l.split(' ');
          acked.set(`${p}:${o}`, v!);
        }
        if (acked.size >= 30_000) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    await enough;
    await broker.kill('SIGKILL'); // mid-stream: the producer is still sending
    const exited = once(producer, 'exit');
    producer.kill('SIGKILL');
    await exited;
    const ackedCount = acked.size;

    await broker.start();
    const r = await run('kcat', ['-b', broker.bootstrap, '-C', '-t', 'durable', '-o', 'beginning', '-e', '-q', '-f', '%p %o %s\\n'], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const stored = new Map<string, string>();
    for (const l of r.stdout.split('\n')) {
      if (!l) continue;
      const [p, o, v] = l.split(' ');
      stored.set(`${p}:${o}`, v!);
    }
    let missing = 0;
    let changed = 0;
    for (const [at, v] of acked) {
      const s = stored.get(at);
      if (s === undefined) missing++;
      else if (s !== v) changed++;
    }
    t.diagnostic(`acknowledged before the kill: ${ackedCount}; stored after restart: ${stored.size}`);
    assert.equal(missing, 0, `${missing} acknowledged records missing after restart`);
    assert.equal(changed, 0, `${changed} acknowledged offsets hold another value`);
    assert.ok(stored.size >= ackedCount);
    // Idempotence: no value was stored twice.
    const values = [...stored.values()];
    assert.equal(new Set(values).size, values.length, 'a value was stored twice');
  } finally {
    await broker.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
