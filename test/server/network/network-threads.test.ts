/**
 * num.network.threads=3 (docs/threads.md "Step 4, as built"): network threads accept on every
 * listener, read frames and write answers; the main thread serves the requests. Real clients
 * (kcat, kafkajs, confluent-kafka) on many connections get their records back exactly, with
 * partitions on the main thread (num.io.threads=1) and on shard workers (3); the connections
 * spread over more than one thread. A malformed frame closes only its connection, a thread that
 * dies closes only its own connections and is started again, and stopping the broker ends every
 * thread and the listener. (SSL, SASL_SSL and quota throttling: their own files, run with
 * FJORD_TEST_NETWORK_THREADS=3.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { once } from 'node:events';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { PYTHON, requirePeer } from '../../helpers/peers.js';
import { RawClient } from '../../helpers/raw-client.js';
import { waitFor } from '../../helpers/wait-for.js';
import { kcatConsume, kcatProduce } from '../../interop/kcat-helpers.js';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec } from '../../../src/protocol/messages/index.js';
import type { SocketServer } from '../../../src/server/network/index.js';

const serverOf = (b: TestBroker): SocketServer => b.broker.socketServer!;

const CONFLUENT = `
import sys
from confluent_kafka import Producer, Consumer
bootstrap, topic = sys.argv[1], sys.argv[2]
p = Producer({'bootstrap.servers': bootstrap})
for i in range(200):
    p.produce(topic, value=('py%d' % i).encode())
assert p.flush(30) == 0
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'net4-py', 'auto.offset.reset': 'earliest', 'enable.auto.commit': False})
c.subscribe([topic])
seen = []
while len(seen) < 200:
    m = c.poll(10)
    if m is None: break
    if m.error(): continue
    seen.append(m.value().decode())
c.close()
print(','.join(sorted(seen, key=lambda v: int(v[2:]))))
`;

function python(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, args, { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

async function apiVersions(c: RawClient): Promise<number> {
  const res = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'net4', clientSoftwareVersion: '1' });
  return res.errorCode;
}

for (const ioThreads of ['1', '3']) {
  test(`num.network.threads=3, num.io.threads=${ioThreads}: kcat, kafkajs and confluent-kafka get their records back exactly; connections spread over the threads`, async (t) => {
    if (!requirePeer(t, 'kcat') || !requirePeer(t, 'python3-confluent-kafka')) return;
    const b = await startTestBroker({ 'num.network.threads': '3', 'num.io.threads': ioThreads, 'num.partitions': '3' });
    try {
      // kcat: four producers at once, each on its own connections.
      const lines = (p: number): string[] => Array.from({ length: 500 }, (_, i) => `kc${p}-${i}`);
      await Promise.all([0, 1, 2, 3].map((p) => kcatProduce(b.bootstrap, 'net4-kcat', lines(p).join('\n') + '\n')));
      const consumed = (await kcatConsume(b.bootstrap, 'net4-kcat')).trim().split('\n').sort();
      assert.deepEqual(consumed, [0, 1, 2, 3].flatMap(lines).sort());

      // kafkajs: three clients, idempotent producers, keyed values.
      const client = (): kafkajs.Kafka => new kafkajs.Kafka({ clientId: 'net4', brokers: [b.bootstrap], logLevel: kafkajs.logLevel.NOTHING });
      await Promise.all(
        [0, 1, 2].map(async (p) => {
          const producer = client().producer({ idempotent: true, allowAutoTopicCreation: true });
          await producer.connect();
          try {
            for (let batch = 0; batch < 4; batch++) {
              await producer.send({
                topic: 'net4-kjs',
                acks: -1,
                messages: Array.from({ length: 25 }, (_, i) => ({ key: `p${p}`, value: `kjs${p}-${batch * 25 + i}` })),
              });
            }
          } finally {
            await producer.disconnect();
          }
        }),
      );
      const kjs = (await kcatConsume(b.bootstrap, 'net4-kjs', ['-f', '%k=%s\n'])).trim().split('\n');
      for (const p of [0, 1, 2]) {
        // One key, one partition: each producer's values in the order it sent them.
        assert.deepEqual(
          kjs.filter((l) => l.startsWith(`p${p}=`)),
          Array.from({ length: 100 }, (_, i) => `p${p}=kjs${p}-${i}`),
        );
      }

      // confluent-kafka (librdkafka from Python): produce, then a group consumer reads them all.
      const py = (await python(['-c', CONFLUENT, b.bootstrap, 'net4-py'])).trim();
      assert.equal(py, Array.from({ length: 200 }, (_, i) => `py${i}`).join(','));

      const accepts = serverOf(b).networkThreadAccepts();
      assert.equal(accepts.length, 3);
      assert.ok(accepts.filter((n) => n > 0).length > 1, `connections on more than one thread: ${accepts.join(', ')}`);
    } finally {
      await b.stop();
    }
  });
}

test('num.network.threads=3: a malformed frame closes only its connection; a thread that dies closes only its connections and is started again; stop ends every thread', async () => {
  const b = await startTestBroker({ 'num.network.threads': '3' });
  let stopped = false;
  try {
    const server = serverOf(b);
    const acceptsBefore = server.networkThreadAccepts();
    const clients = await Promise.all(Array.from({ length: 12 }, () => RawClient.connect(b.port)));
    for (const c of clients) assert.equal(await apiVersions(c), 0);
    // This test is the broker's only client: the threads' accepts since are its connections.
    const oursNow = () => server.networkThreadAccepts().map((n, i) => n - acceptsBefore[i]!);
    // The kernel may hand a burst of connections to one thread (seen: 0, 12, 0 on a loaded
    // machine); more, one at a time, until two threads hold some, so a crash leaves others open.
    await waitFor('our connections on two threads', 20_000, async () => {
      if (oursNow().filter((n) => n > 0).length > 1) return true;
      const c = await RawClient.connect(b.port);
      clients.push(c);
      assert.equal(await apiVersions(c), 0);
      return false;
    });
    const ours = oursNow();
    assert.equal(
      ours.reduce((a, n) => a + n, 0),
      clients.length,
    );

    // A negative size prefix: that connection is closed by its thread, the others still answer.
    const bad = net.connect(b.port, '127.0.0.1');
    await once(bad, 'connect');
    const badClosed = once(bad, 'close');
    bad.write(Buffer.from([0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0]));
    await badClosed;
    await waitFor('the refused frame is in the close log', 10_000, () => server.closedConnections('bad-frame') === 1);
    for (const c of clients) assert.equal(await apiVersions(c), 0);

    // The thread holding the most of our connections dies: exactly its connections close.
    const victim = ours.indexOf(Math.max(...ours));
    await server.crashNetworkThreadForTest(victim);
    await waitFor('the dead thread’s connections close', 10_000, () => clients.filter((c) => c.closed).length === ours[victim]);
    const open = clients.filter((c) => !c.closed);
    assert.ok(open.length > 0, `connections on the other threads stay open (ours per thread: ${ours.join(', ')})`);
    for (const c of open) assert.equal(await apiVersions(c), 0);
    await waitFor('the main thread forgot the closed connections', 10_000, () => server.connectionCount() === open.length);

    // The thread is started again and takes new connections (each one served, whoever took it).
    await waitFor('the dead thread started again', 10_000, () => server.liveNetworkThreads() === 3);
    const victimAccepts = server.networkThreadAccepts()[victim]!;
    const fresh: RawClient[] = [];
    await waitFor('a connection on the restarted thread', 20_000, async () => {
      const c = await RawClient.connect(b.port);
      fresh.push(c);
      assert.equal(await apiVersions(c), 0);
      return server.networkThreadAccepts()[victim]! > victimAccepts;
    });
    for (const c of [...open, ...fresh]) c.socket.destroy();

    await b.stop();
    stopped = true;
    assert.equal(server.liveNetworkThreads(), 0);
    const refused = net.connect(b.port, '127.0.0.1');
    const [err] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    assert.equal(err.code, 'ECONNREFUSED');
  } finally {
    if (!stopped) await b.stop();
  }
});

test('num.network.threads=3: a listener port in use stops the start with the listener named (libuv defers that bind error)', async () => {
  const other = net.createServer().listen(0, '127.0.0.1');
  await once(other, 'listening');
  const port = (other.address() as net.AddressInfo).port;
  try {
    await assert.rejects(
      // num.io.threads=1: a broker whose start fails leaves its shard workers running (the
      // process never exits), whatever num.network.threads is: not this test's subject.
      startTestBroker({ 'num.network.threads': '3', 'num.io.threads': '1', listeners: `PLAINTEXT://127.0.0.1:${port}` }),
      new RegExp(`Cannot bind listener PLAINTEXT on 127\\.0\\.0\\.1:${port}: EADDRINUSE`),
    );
  } finally {
    other.close();
  }
});
