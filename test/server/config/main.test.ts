// Start-up behaviour of src/server/main.ts, run as a child process like bin/kafka-server-start.sh does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseStartArgs } from '../../../src/server/main.js';
import { nodeEntry } from '../../helpers/built.js';

const SHIPPED_CONFIG = path.join(import.meta.dirname, '../../../config/server.properties');

function startMain(args: string[]): { child: ChildProcess; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, [...nodeEntry('server/main'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return { child, stdout: () => out, stderr: () => err };
}

async function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

test('argument parsing follows kafka-server-start.sh', () => {
  assert.deepEqual(parseStartArgs(['s.properties']), { configPath: 's.properties', overrides: [] });
  assert.deepEqual(parseStartArgs(['s.properties', '--override', 'a=1', '--override=b=2']), { configPath: 's.properties', overrides: ['a=1', 'b=2'] });
  assert.throws(() => parseStartArgs([]), { name: 'UsageError', message: /^USAGE: kafka-server-start\.sh/ });
  assert.throws(() => parseStartArgs(['s.properties', '--override']), { name: 'UsageError', message: /--override needs/ });
  assert.throws(() => parseStartArgs(['s.properties', 'extra']), { name: 'UsageError', message: /Unexpected argument extra/ });
  assert.throws(() => parseStartArgs(['-daemon', 's.properties']), { name: 'UsageError', message: /-daemon/ });
});

const failures: Array<[string, string[], RegExp]> = [
  ['no arguments', [], /^USAGE: kafka-server-start\.sh/],
  ['missing config file', ['/nonexistent/fjord.properties'], /^Cannot read config file \/nonexistent\/fjord\.properties: no such file$/],
  ['invalid value', [SHIPPED_CONFIG, '--override', 'num.partitions=abc'], /^Invalid value abc for configuration num\.partitions: Not a number of type INT$/],
  [
    'SSL listener without a key store',
    [SHIPPED_CONFIG, '--override', 'listeners=SSL://:9093'],
    /^Listener SSL uses TLS but has no key store: set ssl\.keystore\.type=PEM and ssl\.keystore\.location/,
  ],
  [
    'SSL listener with a JKS key store',
    [SHIPPED_CONFIG, '--override', 'listeners=SSL://:9093', '--override', 'ssl.keystore.location=/etc/kafka/broker.jks'],
    /^Listener SSL: ssl\.keystore\.type JKS is not supported; use PEM \(or PKCS12\)$/,
  ],
  // A recursive mkdir under /proc never returned: start-up hung without a word.
  [
    'a log dir that cannot be created (/proc)',
    [SHIPPED_CONFIG, '--override', 'log.dirs=/proc/fjord-no-such-dir'],
    /^Failed to create or validate log directory \/proc\/fjord-no-such-dir \(log\.dirs\): cannot create it: the file system does not allow creating it$/,
  ],
  // Was a raw "EEXIST: file already exists, mkdir '/etc/passwd'".
  [
    'a log dir that is a file',
    [SHIPPED_CONFIG, '--override', 'log.dirs=/etc/passwd'],
    /^Failed to create or validate log directory \/etc\/passwd \(log\.dirs\): it exists and is not a directory$/,
  ],
  [
    'a log dir below a file',
    [SHIPPED_CONFIG, '--override', 'log.dirs=/etc/passwd/x'],
    /^Failed to create or validate log directory \/etc\/passwd\/x \(log\.dirs\): \/etc\/passwd is not a directory$/,
  ],
];
for (const [what, args, expected] of failures) {
  test(`${what}: one line on stderr, exit 1`, { timeout: 60_000 }, async () => {
    const run = startMain(args);
    assert.equal(await exitCode(run.child), 1);
    const lines = run.stderr().trimEnd().split('\n');
    assert.equal(lines.length, 1, run.stderr());
    assert.match(lines[0]!, expected);
  });
}

test('each unusable log directory gets its own line; the usable ones are still created', { timeout: 60_000 }, async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fjord-main-'));
  try {
    const good = path.join(dir, 'new', 'logs');
    const run = startMain([SHIPPED_CONFIG, '--override', `log.dirs=/proc/fjord-no-such-dir,${good},/etc/passwd`]);
    assert.equal(await exitCode(run.child), 1);
    const lines = run.stderr().trimEnd().split('\n');
    assert.deepEqual(
      lines.map((l) => /^Failed to create or validate log directory (\S+) \(log\.dirs\)/.exec(l)?.[1]),
      ['/proc/fjord-no-such-dir', '/etc/passwd'],
      run.stderr(),
    );
    assert.ok((await fs.stat(good)).isDirectory());
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('starts, answers a request, and stops with exit 0 on SIGTERM', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fjord-main-'));
  const run = startMain([SHIPPED_CONFIG, '--override', 'listeners=PLAINTEXT://127.0.0.1:0', '--override', `log.dirs=${dir}`]);
  try {
    const deadline = Date.now() + 30000;
    let port: number | undefined;
    while (port === undefined) {
      const match = /listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(run.stdout());
      if (match) port = Number(match[1]);
      else if (run.child.exitCode !== null) assert.fail(`broker exited: ${run.stderr()}${run.stdout()}`);
      else if (Date.now() > deadline) assert.fail('broker did not start');
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // ApiVersions v0: the response starts with the correlation id we sent.
    const socket = net.connect({ host: '127.0.0.1', port });
    await once(socket, 'connect');
    const request = Buffer.from([0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0x30, 0x39, 0xff, 0xff]);
    socket.write(request);
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    assert.equal(chunk.readInt32BE(4), 0x3039);
    socket.destroy();

    run.child.kill('SIGTERM');
    assert.equal(await exitCode(run.child), 0);
    assert.match(run.stdout(), /SIGTERM received; shutting down/);
    assert.match(run.stdout(), /broker stopped/);
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    await fs.rm(dir, { recursive: true, force: true });
  }
});
