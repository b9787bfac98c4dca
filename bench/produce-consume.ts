/**
 * Produce/consume throughput of a Fjord broker with librdkafka clients, beside Redis Streams and
 * iperf3 loopback on the same machine in the same run, plus produce latency at a fixed rate.
 *
 *   node --import tsx bench/produce-consume.ts [records=200000]
 *
 * - throughput: `kcat -P -l <file of 1 KiB lines>` (acks=1 / acks=all, 1 and 8 partitions), then
 *   `kcat -C -e -o beginning` to /dev/null; MB/s = payload bytes / wall time of the kcat process.
 * - Redis Streams: redis-server --appendonly yes, redis-benchmark XADD with 1 KiB values, -P 64.
 * - iperf3: loopback, 5 s, one stream.
 * - latency: confluent-kafka (librdkafka) producing 10,000 records/s for 5 s, acks=1, linger 0;
 *   per-record time from produce() to its delivery report.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestBroker } from '../test/helpers/broker.js';

const RECORDS = Number(process.argv[2] ?? 200_000);
const SIZE = 1024;

function run(cmd: string, args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      if (out.length < 1 << 20) out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: out, stderr: err, ms: performance.now() - started }));
    child.stdin.end(input ?? '');
  });
}

async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const mbps = (bytes: number, ms: number) => bytes / (1024 * 1024) / (ms / 1000);

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fjord-bench-'));
  const file = path.join(dir, 'records.txt');
  const line = (i: number) => `${String(i).padStart(10, '0')}${'x'.repeat(SIZE - 10)}`;
  await writeFile(file, Array.from({ length: RECORDS }, (_, i) => line(i)).join('\n') + '\n');
  const payload = RECORDS * SIZE;
  const results: string[] = [];
  const b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  try {
    for (const partitions of [1, 8]) {
      for (const acks of ['1', 'all']) {
        const topic = `bench-${partitions}-${acks}`;
        await b.broker.services.metadata.createTopic({ name: topic, numPartitions: partitions, replicationFactor: 1 });
        await b.broker.services.replicaManager.syncTopic(topic);
        const prodArgs = ['-P', '-b', b.bootstrap, '-t', topic, '-X', `acks=${acks === 'all' ? '-1' : '1'}`, '-X', 'linger.ms=5', '-X', 'batch.size=1000000', '-X', 'queue.buffering.max.kbytes=1048576', '-l', file];
        const p = await run('kcat', prodArgs);
        if (p.code !== 0) throw new Error(`kcat -P failed: ${p.stderr}`);
        const c = await run('kcat', ['-C', '-b', b.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%o\n', '-X', 'fetch.max.bytes=52428800']);
        if (c.code !== 0) throw new Error(`kcat -C failed: ${c.stderr}`);
        results.push(`| Fjord produce, ${partitions} partition(s), acks=${acks} | ${mbps(payload, p.ms).toFixed(1)} MB/s | ${(RECORDS / (p.ms / 1000) / 1000).toFixed(0)}k rec/s |`);
        results.push(`| Fjord consume, ${partitions} partition(s) | ${mbps(payload, c.ms).toFixed(1)} MB/s | ${(RECORDS / (c.ms / 1000) / 1000).toFixed(0)}k rec/s |`);
        console.error(results.slice(-2).join('\n'));
      }
    }

    // Produce latency at a fixed rate with librdkafka (confluent-kafka).
    await b.broker.services.metadata.createTopic({ name: 'bench-latency', numPartitions: 1, replicationFactor: 1 });
    await b.broker.services.replicaManager.syncTopic('bench-latency');
    const py = `
import sys, time
from confluent_kafka import Producer
p = Producer({'bootstrap.servers': sys.argv[1], 'acks': '1', 'linger.ms': 0})
lat = []
payload = b'x' * ${SIZE}
def cb(err, msg, t0):
    lat.append(time.perf_counter() - t0)
rate, seconds = 10000, 5
start = time.perf_counter()
for i in range(rate * seconds):
    due = start + i / rate
    while time.perf_counter() < due:
        p.poll(0)
    t0 = time.perf_counter()
    p.produce('bench-latency', payload, on_delivery=lambda err, msg, t0=t0: cb(err, msg, t0))
    p.poll(0)
p.flush(30)
lat.sort()
print('%.3f %.3f %d' % (lat[len(lat)//2]*1000, lat[int(len(lat)*0.99)]*1000, len(lat)))
`;
    const lat = await run('/usr/bin/python3', ['-c', py, b.bootstrap]);
    if (lat.code !== 0) throw new Error(`latency client failed: ${lat.stderr}`);
    const [p50, p99, n] = lat.stdout.trim().split(' ');
    results.push(`| Fjord produce latency at 10,000 rec/s, acks=1 (${n} records) | p50 ${p50} ms | p99 ${p99} ms |`);
  } finally {
    await b.stop();
  }

  // Redis Streams with AOF.
  const redisPort = await freePort();
  const redisDir = path.join(dir, 'redis');
  await run('mkdir', ['-p', redisDir]);
  await run('redis-server', ['--port', String(redisPort), '--appendonly', 'yes', '--dir', redisDir, '--save', '', '--daemonize', 'yes']);
  await new Promise((r) => setTimeout(r, 500));
  const value = 'x'.repeat(SIZE);
  const rb = await run('redis-benchmark', ['-p', String(redisPort), '-n', String(RECORDS), '-P', '64', '--csv', 'XADD', 'bench', '*', 'f', value]);
  await run('redis-cli', ['-p', String(redisPort), 'shutdown', 'nosave']);
  const rps = Number(rb.stdout.trim().split('\n').pop()!.split(',')[1]!.replace(/"/g, ''));
  results.push(`| Redis Streams XADD (appendonly yes, -P 64) | ${((rps * SIZE) / (1024 * 1024)).toFixed(1)} MB/s | ${(rps / 1000).toFixed(0)}k rec/s |`);

  // iperf3 loopback.
  const iperfPort = await freePort();
  const server = spawn('iperf3', ['-s', '-p', String(iperfPort), '-1'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const ip = await run('iperf3', ['-c', '127.0.0.1', '-p', String(iperfPort), '-t', '5', '-J']);
  server.kill();
  const bps = (JSON.parse(ip.stdout) as { end: { sum_received: { bits_per_second: number } } }).end.sum_received.bits_per_second;
  results.push(`| iperf3 loopback (1 stream, 5 s) | ${(bps / 8 / (1024 * 1024)).toFixed(1)} MB/s | |`);

  await rm(dir, { recursive: true, force: true });
  console.log(`records: ${RECORDS} x ${SIZE} B\n\n| measurement | throughput | |\n|---|---|---|\n${results.join('\n')}`);
}

await main();
