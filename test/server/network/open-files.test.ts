// Issue 21, F5: running out of file descriptors was silent. A broker child process runs under
// `ulimit -n 256` with a client listener and an inter-broker listener; 300 client connections
// arrive. Before, the descriptors ran out: libuv reset the connections beyond them, nothing was
// logged, and the inter-broker listener and the broker's own files were starved too. Now client
// connections stop at the ceiling the limit leaves (256 - 128 for segment files - 16 headroom =
// 112), the refusals are logged (rate-limited), the inter-broker listener is still served, the
// broker still creates a topic and appends to it, and once clients leave new ones get in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { RawClient } from '../../helpers/raw-client.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  CreateTopicsRequestCodec,
  CreateTopicsResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { batchOf, produce } from '../handlers/data-plane-helpers.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'fixtures/low-ulimit-broker.ts');
const ULIMIT = 256;
const CLIENTS = 300;
const CEILING = 112;

async function apiVersions(c: RawClient): Promise<void> {
  const r = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
  assert.equal(r.errorCode, 0);
}

test(`under ulimit -n ${ULIMIT}, ${CLIENTS} client connections leave room for the inter-broker listener and the broker's files, and refusals are logged`, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-open-files-'));
  const logFile = join(dir, 'broker.log');
  const props = {
    listeners: 'CLIENT://127.0.0.1:0,BROKER://127.0.0.1:0',
    'listener.security.protocol.map': 'CLIENT:PLAINTEXT,BROKER:PLAINTEXT',
    'inter.broker.listener.name': 'BROKER',
    'log.dirs': join(dir, 'logs'),
  };
  const child = spawn('bash', ['-c', `ulimit -n ${ULIMIT}; exec "$0" "$@"`, process.execPath, '--import', 'tsx', CHILD, JSON.stringify(props), logFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = once(child, 'exit');
  const clients: RawClient[] = [];
  try {
    const [line] = (await Promise.race([
      once(createInterface({ input: child.stdout! }), 'line'),
      exited.then(() => {
        throw new Error(`broker exited: ${stderr}`);
      }),
    ])) as [string];
    const ports = JSON.parse(line) as Record<string, number>;

    for (let i = 0; i < CLIENTS; i++) clients.push(await RawClient.connect(ports.CLIENT!));
    // Each connection is served or closed by the broker: none is left hanging.
    const outcome = async (c: RawClient): Promise<'served' | 'closed'> => {
      if (c.closed) return 'closed';
      try {
        await apiVersions(c);
        return 'served';
      } catch {
        return 'closed';
      }
    };
    const outcomes = await Promise.all(clients.map(outcome));
    const served = outcomes.filter((o) => o === 'served').length;
    const closed = outcomes.length - served;
    const log = async (): Promise<string> => readFile(logFile, 'utf8').catch(() => '');
    const deadline = Date.now() + 5000;
    while (!/refusing connection from .* open-file limit/.test(await log()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const text = await log();
    const refusalLines = text.split('\n').filter((l) => /refusing connection from .* open-file limit/.test(l));
    t.diagnostic(`${served} client connections served, ${closed} closed; ${refusalLines.length} refusal lines logged; first: ${refusalLines[0] ?? '(none)'}`);
    assert.ok(refusalLines.length >= 1, `no log line says why ${closed} connections were closed`);
    assert.ok(refusalLines.length <= 10, `${refusalLines.length} refusal lines: not rate-limited`);
    assert.equal(served, CEILING);

    // The inter-broker listener still gets in, and the broker can still open files.
    const peer = await RawClient.connect(ports.BROKER!);
    await apiVersions(peer);
    const created = await peer.request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, 4, {
      topics: [{ name: 'after-flood', numPartitions: 4, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 10000,
      validateOnly: false,
    });
    assert.equal(created.topics[0]!.errorCode, 0, created.topics[0]!.errorMessage ?? '');
    for (let p = 0; p < 4; p++) {
      const r = await produce(peer, 7, 'after-flood', p, batchOf([`v${p}`]), 1);
      assert.equal(r.responses[0]!.partitionResponses[0]!.errorCode, 0);
    }
    peer.close();

    // Clients leave: a new one is served again (once the broker has seen them go).
    for (const c of clients) c.close();
    let servedAgain = false;
    const until = Date.now() + 5000;
    while (!servedAgain && Date.now() < until) {
      const again = await RawClient.connect(ports.CLIENT!);
      servedAgain = (await outcome(again)) === 'served';
      again.close();
    }
    assert.ok(servedAgain, 'no new client is served after the flood');
  } finally {
    for (const c of clients) c.close();
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
});
