/**
 * The metrics listener (metrics.listener) of an in-process broker on port 0: /metrics parses as
 * Prometheus text and carries the process metrics; HEAD; 404, 405, 400 for an unknown path, a
 * method, a malformed request; a request body is dropped; basic auth 401 / 200 (health open);
 * https with a test certificate and client certificates required; /health/ready 503 while a
 * broker starts (a cluster-mode broker waiting for ZooKeeper, before log recovery) and 200 once
 * started; a bind failure names the key; a flood of 200 concurrent scrapes while a producer runs:
 * produce latency stays under FLOOD_PRODUCE_BOUND_MS and the broker keeps serving; at most
 * MAX_CONNECTIONS connections at once; kafka-server-start.sh's one line for a bad https set-up
 * and for a port in use.
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { connect, createServer, type Socket } from 'node:net';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { makeTestCerts, type TestCerts } from '../../helpers/tls-certs.js';
import { Broker } from '../../../src/server/broker.js';
import { buildBrokerConfig } from '../../../src/server/config/index.js';
import { silentLogger } from '../../../src/server/logger.js';
import { Producer } from '../../../src/client/producer.js';
import { MAX_CONNECTIONS } from '../../../src/server/metrics/http-listener.js';
import { run, type RunResult } from '../../helpers/run.js';
import { REPO_ROOT } from '../../helpers/repo-root.js';

const USER = 'prometheus';
const PASSWORD = 'sc:rape-me';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
/** The issue's bound on the Kafka listener during a scrape flood (produce round trip, acks=all, loopback, shared 2-core CI). */
const FLOOD_PRODUCE_BOUND_MS = 1000;

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(
  port: number,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; tls?: https.RequestOptions } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const lib = opts.tls ? https : http;
    const req = lib.request(
      { host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: opts.headers, agent: false, ...(opts.tls ?? {}) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Sends raw bytes; resolves with whatever came back before the server closed (or 3 s). */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => s.destroy(), 3000);
    s.on('connect', () => s.write(bytes));
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.on('close', () => (clearTimeout(timer), resolve(out)));
    s.on('error', () => undefined);
  });
}

/** A strict reading of the Prometheus text format (0.0.4): every line a HELP, a TYPE or a sample. */
function parsePrometheus(text: string): Map<string, { type: string; samples: { name: string; labels: string; value: number }[] }> {
  const families = new Map<string, { type: string; samples: { name: string; labels: string; value: number }[] }>();
  const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)( -?\d+)?$/;
  let family = '';
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*$/.exec(line);
    if (m) continue;
    m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m) {
      family = m[1]!;
      assert.ok(!families.has(family), `family ${family} declared twice`);
      families.set(family, { type: m[2]!, samples: [] });
      continue;
    }
    m = SAMPLE.exec(line);
    assert.ok(m, `not a Prometheus line: ${line}`);
    // As Prometheus reads values (Go's ParseFloat): NaN and Inf in any case (prom-client writes "Nan").
    const special = /^([+-]?)(inf|nan)$/i.exec(m[3]!);
    const value = special ? (special[2]!.toLowerCase() === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity) : Number(m[3]);
    assert.ok(special || !Number.isNaN(value), `not a number in: ${line}`);
    assert.ok(m[1]!.startsWith(family), `${m[1]} outside its family ${family}`);
    families.get(family)!.samples.push({ name: m[1]!, labels: m[2] ?? '', value });
  }
  return families;
}

let plain: TestBroker;
before(async () => {
  plain = await startTestBroker({ 'metrics.listener': 'http://127.0.0.1:0', 'metrics.basic.auth.user': USER, 'metrics.basic.auth.password': PASSWORD });
});
after(async () => {
  await plain?.stop();
});

test('GET /metrics: Prometheus text with the process metrics and event-loop utilisation; HEAD answers the same headers', async () => {
  const port = plain.broker.observability.port!;
  assert.ok(port > 0);
  const r = await request(port, '/metrics', { headers: { authorization: AUTH } });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['content-type'], plain.broker.metrics.contentType);
  const families = parsePrometheus(r.body);
  for (const [name, type] of [
    ['process_cpu_seconds_total', 'counter'],
    ['process_resident_memory_bytes', 'gauge'],
    ['process_open_fds', 'gauge'],
    ['process_max_fds', 'gauge'],
    ['process_start_time_seconds', 'gauge'],
    ['nodejs_eventloop_lag_seconds', 'gauge'],
    ['nodejs_eventloop_lag_p99_seconds', 'gauge'],
    ['nodejs_heap_size_used_bytes', 'gauge'],
    ['nodejs_gc_duration_seconds', 'histogram'],
    ['nodejs_eventloop_utilization_ratio', 'gauge'],
  ] as const) {
    assert.equal(families.get(name)?.type, type, `${name} ${type}`);
  }
  const rss = families.get('process_resident_memory_bytes')!.samples[0]!.value;
  assert.ok(rss > 10_000_000, `rss ${rss}`);
  assert.ok(families.get('process_open_fds')!.samples[0]!.value > 0);
  const elu = families.get('nodejs_eventloop_utilization_ratio')!.samples[0]!.value;
  assert.ok(elu >= 0 && elu <= 1, `utilisation ${elu}`);
  // The registry's text as served: the same families as broker.metrics.metrics().
  assert.deepEqual([...families.keys()].sort(), [...parsePrometheus(await plain.broker.metrics.metrics()).keys()].sort());

  const head = await request(port, '/metrics', { method: 'HEAD', headers: { authorization: AUTH } });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['content-type'], plain.broker.metrics.contentType);
  assert.ok(Number(head.headers['content-length']) > 1000);
});

test('health: live 200, ready 200 once started (JSON); HEAD; no credentials needed', async () => {
  const port = plain.broker.observability.port!;
  const live = await request(port, '/health/live');
  assert.equal(live.status, 200);
  assert.deepEqual(JSON.parse(live.body), { status: 'live' });
  const ready = await request(port, '/health/ready');
  assert.equal(ready.status, 200, ready.body);
  assert.equal(ready.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(ready.body), { status: 'ready' });
  const head = await request(port, '/health/ready?probe=1', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
});

test('bad requests: unknown path 404, other methods 405 with Allow, malformed 400, a body is dropped; the broker serves on', async () => {
  const port = plain.broker.observability.port!;
  for (const path of ['/metric', '/metrics/', '/health', '/../metrics/x', '/%00']) {
    const r = await request(port, path, { headers: { authorization: AUTH } });
    assert.equal(r.status, 404, path);
  }
  // / is the web console (console.enable, on by default; issue 25), behind the same basic auth.
  assert.equal((await request(port, '/')).status, 401);
  assert.match((await request(port, '/', { headers: { authorization: AUTH } })).headers['content-type'] ?? '', /^text\/html/);
  for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
    for (const path of ['/metrics', '/health/ready']) {
      const r = await request(port, path, { method, headers: { authorization: AUTH } });
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.headers.allow, 'GET, HEAD');
    }
  }
  assert.match(await rawExchange(port, 'GARBAGE\r\n\r\n'), /^HTTP\/1\.1 400 /);
  assert.match(await rawExchange(port, 'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'), /^HTTP\/1\.1 400 /);
  assert.match(await rawExchange(port, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), /^HTTP\/1\.1 431 /);
  // A body on a GET is read and dropped; keep-alive carries the next request on the same socket.
  const twoOnOneSocket = await rawExchange(
    port,
    'GET /health/live HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /health/ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  );
  assert.equal(twoOnOneSocket.match(/HTTP\/1\.1 200 OK/g)?.length, 2, twoOnOneSocket);
  // A body over the bound loses its connection, nothing else.
  const big = await request(port, '/health/live', { method: 'GET', body: 'x'.repeat(2 * 1024 * 1024), headers: { 'content-type': 'text/plain' } }).catch(
    (err: Error) => err,
  );
  assert.ok(big instanceof Error || big.status === 200, String(big));
  assert.equal((await request(port, '/health/live')).status, 200);
});

test('basic auth: /metrics without or with wrong credentials is 401 with WWW-Authenticate; right ones 200', async () => {
  const port = plain.broker.observability.port!;
  const wrong = [
    undefined,
    `Basic ${Buffer.from(`${USER}:nope`).toString('base64')}`,
    `Basic ${Buffer.from(`other:${PASSWORD}`).toString('base64')}`,
    `Basic ${Buffer.from(`${USER}:${PASSWORD}x`).toString('base64')}`,
    `Bearer ${PASSWORD}`,
    'Basic !!!',
  ];
  for (const authorization of wrong) {
    const r = await request(port, '/metrics', authorization ? { headers: { authorization } } : {});
    assert.equal(r.status, 401, String(authorization));
    assert.match(r.headers['www-authenticate'] ?? '', /^Basic realm="fjord metrics"/);
    assert.doesNotMatch(r.body, /process_/);
  }
  assert.equal((await request(port, '/metrics', { headers: { authorization: AUTH } })).status, 200);
});

test('https with its own key store; client certificates required: without one the handshake fails, with one 200', async () => {
  let certs: TestCerts | undefined;
  let b: TestBroker | undefined;
  try {
    certs = makeTestCerts();
    b = await startTestBroker({
      'metrics.listener': 'https://127.0.0.1:0',
      'metrics.ssl.keystore.type': 'PEM',
      'metrics.ssl.keystore.location': certs.broker.keystore,
      'metrics.ssl.truststore.type': 'PEM',
      'metrics.ssl.truststore.location': certs.caFile,
      'metrics.ssl.client.auth': 'required',
    });
    const port = b.broker.observability.port!;
    const scraper = certs.client('scraper', '/O=Fjord Test/CN=prometheus');
    const r = await request(port, '/metrics', { tls: { ca: certs.ca, servername: 'localhost', key: scraper.key, cert: scraper.cert } });
    assert.equal(r.status, 200);
    assert.ok(parsePrometheus(r.body).has('process_cpu_seconds_total'));
    const noCert = await request(port, '/health/live', { tls: { ca: certs.ca, servername: 'localhost' } }).catch((err: Error) => err);
    assert.ok(noCert instanceof Error, 'no client certificate: refused');
    // Plain HTTP on the https port: a TLS error for the client, nothing for the broker.
    const plainOnTls = await rawExchange(port, 'GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.doesNotMatch(plainOnTls, /200 OK/);
    assert.equal((await request(port, '/health/ready', { tls: { ca: certs.ca, servername: 'localhost', key: scraper.key, cert: scraper.cert } })).status, 200);
  } finally {
    await b?.stop();
    certs?.cleanup();
  }
});

test('/health/ready is 503 naming what is missing while the broker starts (before log recovery), live is 200; stop closes the listener', async () => {
  // A cluster-mode broker whose ZooKeeper does not answer: start waits in ZkMode.start, before
  // the logs are opened, then fails; the metrics listener answers all along.
  const deadZk = await closedPort();
  const dir = await mkdtemp(join(tmpdir(), 'fjord-metrics-ready-'));
  const broker = new Broker(
    buildBrokerConfig(
      new Map(
        Object.entries({
          listeners: 'PLAINTEXT://127.0.0.1:0',
          'log.dirs': dir,
          'zookeeper.connect': `127.0.0.1:${deadZk}`,
          'zookeeper.connection.timeout.ms': '2000',
          'metrics.listener': 'http://127.0.0.1:0',
        }),
      ),
    ),
    silentLogger(),
  );
  const starting = broker.start().then(
    () => 'started',
    (err: Error) => err.message,
  );
  try {
    const deadline = Date.now() + 3000;
    while (broker.observability.port === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const port = broker.observability.port;
    assert.ok(port !== undefined, 'the listener is up early in start()');
    const ready = await request(port, '/health/ready');
    assert.equal(ready.status, 503);
    assert.deepEqual(JSON.parse(ready.body), { status: 'not ready', missing: ['log recovery', 'start-up'] });
    assert.equal((await request(port, '/health/live')).status, 200);
    assert.notEqual(await starting, 'started');
    await broker.stop();
    await assert.rejects(request(port, '/health/live'), /ECONNREFUSED/);
  } finally {
    await starting;
    await broker.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
});

test('a metrics.listener port in use stops start-up with one line naming the key', async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as { port: number }).port;
  const dir = await mkdtemp(join(tmpdir(), 'fjord-metrics-bind-'));
  const broker = new Broker(
    buildBrokerConfig(
      new Map([
        ['listeners', 'PLAINTEXT://127.0.0.1:0'],
        ['log.dirs', dir],
        ['metrics.listener', `http://127.0.0.1:${port}`],
      ]),
    ),
    silentLogger(),
  );
  try {
    await assert.rejects(broker.start(), (err: Error) => {
      assert.equal(err.message, `cannot bind metrics.listener http://127.0.0.1:${port}: EADDRINUSE`);
      return true;
    });
    assert.equal(broker.boundPorts().size, 0, 'the Kafka listeners never started');
  } finally {
    await broker.stop().catch(() => undefined);
    taken.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test(`a flood of 200 concurrent scrapes while a producer runs: produce latency stays under ${FLOOD_PRODUCE_BOUND_MS} ms, every scrape answered or refused at the connection, the broker serves on`, async (t) => {
  const port = plain.broker.observability.port!;
  const producer = new Producer({ bootstrapServers: [plain.bootstrap], clientId: 'flood-producer', acks: 'all' });
  try {
    await producer.send({ topic: 'flood', value: Buffer.from('warm-up') });
    const latencies: number[] = [];
    let flooding = true;
    const producing = (async () => {
      let i = 0;
      while (flooding || i < 20) {
        const t0 = performance.now();
        await producer.send({ topic: 'flood', value: Buffer.from(`m${i++}`) });
        latencies.push(performance.now() - t0);
      }
    })();
    const outcomes = { ok: 0, refused: 0, other: [] as string[] };
    const scrape = (): Promise<void> =>
      request(port, '/metrics', { headers: { authorization: AUTH } }).then(
        (r) => {
          if (r.status === 200) outcomes.ok++;
          else outcomes.other.push(String(r.status));
        },
        (err: NodeJS.ErrnoException) => {
          // Connections beyond MAX_CONNECTIONS are closed at once.
          if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.code === 'ECONNREFUSED') outcomes.refused++;
          else outcomes.other.push(String(err.code ?? err.message));
        },
      );
    const started = performance.now();
    for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: 200 }, scrape));
    const floodMs = performance.now() - started;
    flooding = false;
    await producing;
    const worst = Math.max(...latencies);
    t.diagnostic(
      `3 x 200 scrapes in ${Math.round(floodMs)} ms: ${outcomes.ok} served, ${outcomes.refused} refused; ${latencies.length} produces, worst ${worst.toFixed(1)} ms`,
    );
    assert.deepEqual(outcomes.other, [], 'every scrape served or refused at the connection');
    assert.ok(outcomes.ok >= MAX_CONNECTIONS, `served ${outcomes.ok}`);
    assert.ok(worst < FLOOD_PRODUCE_BOUND_MS, `worst produce ${worst} ms during the flood`);
    assert.equal((await request(port, '/health/ready')).status, 200);
    assert.equal((await request(port, '/metrics', { headers: { authorization: AUTH } })).status, 200);
  } finally {
    await producer.close();
  }
});

test(`at most ${MAX_CONNECTIONS} connections at once: one more is closed unanswered; once one goes, a new one is served`, async () => {
  const port = plain.broker.observability.port!;
  const held: Socket[] = [];
  try {
    // Each answered once and kept alive (HTTP/1.1), so the server counts it.
    for (let i = 0; i < MAX_CONNECTIONS; i++) {
      const s = connect(port, '127.0.0.1');
      held.push(s);
      s.on('error', () => undefined);
      const answered = new Promise<void>((resolve) => s.once('data', () => resolve()));
      s.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered;
    }
    const refused = await rawExchange(port, 'GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(refused, '', 'connection beyond the cap: closed without an answer');
    const closed = new Promise((resolve) => held[0]!.once('close', resolve));
    held[0]!.destroy();
    await closed;
    const deadline = Date.now() + 5000;
    let answer = '';
    while (!answer.includes('200 OK') && Date.now() < deadline)
      answer = await rawExchange(port, 'GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 200 OK/);
  } finally {
    for (const s of held) s.destroy();
  }
});

test('bin/kafka-server-start.sh: an https metrics.listener without a key store, or a port in use, is one line on stderr and exit 1', async () => {
  const root = REPO_ROOT;
  if (!existsSync(join(root, 'dist', 'server', 'main.js'))) spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: 'ignore' });
  const dir = await mkdtemp(join(tmpdir(), 'fjord-metrics-cli-'));
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as { port: number }).port;
  try {
    const start = (metricsListener: string): Promise<RunResult> =>
      run(
        join(root, 'bin', 'kafka-server-start.sh'),
        [
          join(root, 'config', 'server.properties'),
          ...['--override', `log.dirs=${dir}`, '--override', 'listeners=PLAINTEXT://127.0.0.1:0'],
          '--override',
          `metrics.listener=${metricsListener}`,
        ],
        { timeoutMs: 60_000, env: { ...process.env, LOG_DIR: dir } },
      );
    const noKeyStore = await start('https://127.0.0.1:0');
    assert.equal(noKeyStore.code, 1);
    assert.deepEqual(noKeyStore.stderr.trim().split('\n'), [
      'metrics.listener https://127.0.0.1:0 is https but has no key store: set metrics.ssl.keystore.location (metrics.ssl.keystore.type=PEM or PKCS12)',
    ]);
    const inUse = await start(`http://127.0.0.1:${port}`);
    assert.equal(inUse.code, 1);
    assert.deepEqual(inUse.stderr.trim().split('\n'), [`Fjord start-up failed: cannot bind metrics.listener http://127.0.0.1:${port}: EADDRINUSE`]);
  } finally {
    taken.close();
    await rm(dir, { recursive: true, force: true });
  }
});

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
