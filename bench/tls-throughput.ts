/**
 * TLS cost: produce and consume throughput over an SSL listener beside a PLAINTEXT listener of
 * the same broker, in the same run, with librdkafka (bench/rdkafka-perf.c, compiled here) as the
 * client, plus a physical reference measured in the same run: `openssl speed -evp aes-256-gcm`
 * (the cipher TLS 1.3 negotiates here, TLS_AES_256_GCM_SHA384) for 16 KiB blocks, which is what
 * one core can encrypt at best. Also the time of a full TLS 1.3 handshake against the broker.
 *
 *   node --import tsx bench/tls-throughput.ts [records=100000] [repeats=3]
 *
 * Each repeat, PLAINTEXT then SSL on fresh 1-partition topics: produce `records` x 1 KiB
 * (acks=1, linger.ms=5, batch.size=1 MB), then consume them from the beginning. MB/s = payload
 * bytes / time from the first send (assignment) to the last delivery report (record). Median and
 * range over the repeats. Certificates are made with openssl in a temporary directory. The
 * broker runs in this process; the load average is printed (other work on the 2-core machine
 * shows in every figure).
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import tls from 'node:tls';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestBroker, type TestBroker } from '../test/helpers/broker.js';
import { makeTestCerts } from '../test/helpers/tls-certs.js';
import { loadAverage } from './suite/measure.js';
import { medianWithRange, percentile } from './suite/stats.js';

const ARGS = process.argv.slice(2);
const RECORDS = Number(ARGS[0] ?? 100_000);
const REPEATS = Number(ARGS[1] ?? 3);
const SIZE = 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const mib = (bytesPerS: number): number => bytesPerS / (1024 * 1024);
const load = (): string => loadAverage();

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: out, stderr: err }));
  });
}

async function harness(bin: string, args: string[]): Promise<Record<string, number>> {
  const r = await run(bin, args);
  if (r.code !== 0) throw new Error(`rdkafka-perf ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, number>;
}

async function createTopic(b: TestBroker, name: string): Promise<void> {
  await b.broker.services.metadata.createTopic({ name, numPartitions: 1, replicationFactor: 1 });
  await b.broker.services.replicaManager.syncTopic(name);
}

async function dropTopic(b: TestBroker, name: string): Promise<void> {
  await b.broker.services.metadata.deleteTopic(name);
  await b.broker.services.replicaManager.syncTopic(name);
}

/** openssl speed -evp CIPHER: MB/s for 16 KiB blocks (its last column, in kB/s of 1000 bytes). */
async function opensslSpeed(cipher: string): Promise<number> {
  const r = await run('openssl', ['speed', '-evp', cipher, '-seconds', '2', '-bytes', '16384']);
  if (r.code !== 0) throw new Error(`openssl speed failed: ${r.stderr}`);
  const line = r.stdout.split('\n').find((l) => l.toLowerCase().startsWith(cipher.toLowerCase()))!;
  const kbps = Number(line.trim().split(/\s+/).pop()!.replace(/k$/, ''));
  return mib(kbps * 1000);
}

/** Full TLS 1.3 handshakes (no resumption) against the SSL listener, one after another: connect to secure. */
async function handshakes(port: number, ca: string, n = 50): Promise<string> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const s = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca });
    await once(s, 'secureConnect');
    ms.push(performance.now() - started);
    s.destroy();
  }
  return `| TLS 1.3 handshake (RSA 2048, full, Node client), ${n} in a row | p50 ${percentile(ms, 50).toFixed(2)} ms, p90 ${percentile(ms, 90).toFixed(2)} ms |`;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fjord-bench-tls-'));
  const certs = makeTestCerts();
  const bin = path.join(dir, 'rdkafka-perf');
  await promisify(execFile)('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const loadBefore = load();
  const b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': certs.broker.keystore,
    'auto.create.topics.enable': 'false',
  });
  const lines: string[] = [];
  try {
    const ports = b.broker.boundPorts();
    const setups = [
      { name: 'PLAINTEXT', bootstrap: `127.0.0.1:${ports.get('PLAINTEXT')!}`, extra: [] as string[] },
      { name: 'SSL (TLS 1.3)', bootstrap: `127.0.0.1:${ports.get('SSL')!}`, extra: ['-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${certs.caFile}`] },
    ];
    const figures = new Map(setups.map((s) => [s.name, { produce: [] as number[], consume: [] as number[] }]));
    for (let i = 0; i < REPEATS; i++) {
      for (const s of setups) {
        const topic = `bench-tls-${i}-${s.name === 'PLAINTEXT' ? 'plain' : 'ssl'}`;
        await createTopic(b, topic);
        const common = ['-b', s.bootstrap, '-t', topic, '-n', String(RECORDS), ...s.extra];
        const p = await harness(bin, ['produce', ...common, '-s', String(SIZE), '-a', '1', '-l', '5', '-B', '1000000']);
        if (p.failed !== 0) throw new Error(`${p.failed} records failed on ${topic}`);
        figures.get(s.name)!.produce.push(p.mb_per_s!);
        figures.get(s.name)!.consume.push((await harness(bin, ['consume', ...common])).mb_per_s!);
        await dropTopic(b, topic);
      }
    }
    lines.push(await handshakes(ports.get('SSL')!, certs.ca));
    for (const s of setups) {
      const f = figures.get(s.name)!;
      lines.push(`| Fjord produce over ${s.name}, 1 partition, acks=1 | ${medianWithRange(f.produce, ' MB/s')} |`);
      lines.push(`| Fjord consume over ${s.name}, 1 partition | ${medianWithRange(f.consume, ' MB/s')} |`);
    }
  } finally {
    await b.stop();
    certs.cleanup();
  }
  lines.push(`| openssl speed -evp aes-256-gcm, 16 KiB blocks (one core) | ${(await opensslSpeed('aes-256-gcm')).toFixed(0)} MB/s |`);
  await rm(dir, { recursive: true, force: true });
  console.log(
    `records: ${RECORDS} x ${SIZE} B, ${REPEATS} repeats; load average before ${loadBefore}, after ${load()}\n\n| measurement | result |\n|---|---|\n${lines.join('\n')}`,
  );
}

await main();
