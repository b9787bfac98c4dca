/**
 * Time of a full SASL/SCRAM handshake (TCP connect → ApiVersions → SaslHandshake →
 * SaslAuthenticate ×2 → authenticated) against an in-process Fjord broker, for SCRAM-SHA-256
 * and -512, with Fjord's client and with librdkafka (confluent-kafka via /usr/bin/python3:
 * new client → first Metadata answered, which adds one small request), beside the cost of the
 * client's PBKDF2 alone at the same iteration count, measured in the same run (the floor: the
 * client must compute it; the broker only stores its result).
 *
 *   node --import tsx bench/sasl-handshake.ts [rounds=50] [iterations=4096]
 */
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAverage } from './suite/measure.js';
import { Broker } from '../src/server/broker.js';
import { buildBrokerConfig } from '../src/server/config/index.js';
import { silentLogger } from '../src/server/logger.js';
import { Admin } from '../src/client/index.js';
import { Connection } from '../src/client/connection.js';
import { alterUserScramCredentials } from '../src/client/admin-scram.js';
import type { ScramMechanism } from '../src/security/sasl/scram.js';

const rounds = Number(process.argv[2] ?? 50);
const iterations = Number(process.argv[3] ?? 4096);
const MECHS: ScramMechanism[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number): string => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2);
  return `median ${q(0.5)} ms, p90 ${q(0.9)} ms, min ${s[0]!.toFixed(2)} ms`;
}

const PY = `
import sys, time, json
from confluent_kafka import Producer
bootstrap, mech, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = []
for i in range(rounds):
    t0 = time.perf_counter()
    p = Producer({'bootstrap.servers': bootstrap, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanisms': mech, 'sasl.username': 'bench', 'sasl.password': 'bench-secret'})
    p.list_topics(timeout=10)
    out.append((time.perf_counter() - t0) * 1000)
    del p
print(json.dumps(out))
`;

function python(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn('/usr/bin/python3', ['-c', PY, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`python exited ${code}: ${err}`))));
  });
}

const dir = await mkdtemp(join(tmpdir(), 'fjord-bench-sasl-'));
const broker = new Broker(
  buildBrokerConfig(
    new Map(
      Object.entries({
        listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
        'log.dirs': dir,
        'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512',
        'security.inter.broker.protocol': 'PLAINTEXT',
      }),
    ),
  ),
  silentLogger(),
);
await broker.start();
try {
  const plain = broker.boundPorts().get('PLAINTEXT')!;
  const port = broker.boundPorts().get('SASL_PLAINTEXT')!;
  const admin = new Admin({ bootstrapServers: `127.0.0.1:${plain}` });
  await alterUserScramCredentials(
    admin.cluster,
    MECHS.map((mechanism) => ({ user: 'bench', mechanism, op: 'upsert' as const, password: 'bench-secret', iterations })),
  );
  await admin.close();
  console.log(`rounds ${rounds}, iterations ${iterations}, load average ${loadAverage()}`);
  for (const mechanism of MECHS) {
    const hash = mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
    const pbkdf2: number[] = [];
    const fjord: number[] = [];
    for (let i = 0; i < rounds; i++) {
      let t0 = performance.now();
      crypto.pbkdf2Sync('bench-secret', crypto.randomBytes(24), iterations, hash === 'sha256' ? 32 : 64, hash);
      pbkdf2.push(performance.now() - t0);
      t0 = performance.now();
      const c = await Connection.connect('127.0.0.1', port, {
        clientId: 'bench',
        connectTimeoutMs: 10000,
        requestTimeoutMs: 10000,
        security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism, username: 'bench', password: 'bench-secret' } },
      });
      fjord.push(performance.now() - t0);
      c.close();
    }
    const rd = JSON.parse(await python([`127.0.0.1:${port}`, mechanism, String(rounds)])) as number[];
    console.log(`${mechanism}: PBKDF2 alone          ${stats(pbkdf2)}`);
    console.log(`${mechanism}: Fjord client handshake ${stats(fjord)}`);
    console.log(`${mechanism}: librdkafka to Metadata ${stats(rd)}`);
  }
} finally {
  await broker.stop();
  await rm(dir, { recursive: true, force: true });
}
