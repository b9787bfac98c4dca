/**
 * Issue 23, KIP-714 with a real client (not a test: librdkafka 2.5+ is not a dependency). Starts
 * an in-process Fjord broker with a client-metrics subscription for everything, runs a
 * node-rdkafka producer with enable.metrics.push=true, and prints what the broker re-exports for
 * it (the `org_apache_kafka_*` series with its client_id), then whether its terminating push on
 * disconnect removed them.
 * Setup, outside the repository (compiles librdkafka, about 2 minutes here):
 *   mkdir -p /tmp/rdk && cd /tmp/rdk && npm init -y && npm install node-rdkafka
 * Run: RDKAFKA_DIR=/tmp/rdk node --import tsx bench/telemetry-librdkafka.ts
 */
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Admin, ConfigResourceType } from '../src/client/index.js';
import { Broker } from '../src/server/broker.js';
import { buildBrokerConfig } from '../src/server/config/index.js';
import { silentLogger } from '../src/server/logger.js';

interface RdProducer {
  connect(opts: object, cb: (err: Error | null) => void): void;
  produce(topic: string, partition: number | null, value: Buffer): void;
  poll(): void;
  flush(timeoutMs: number, cb: (err: Error | null) => void): void;
  disconnect(cb: () => void): void;
  on(event: string, cb: (...args: unknown[]) => void): void;
}
interface RdKafka {
  librdkafkaVersion: string;
  Producer: new (conf: Record<string, unknown>) => RdProducer;
}

const dir = process.env.RDKAFKA_DIR ?? '/tmp/rdk';
const rdkafka = createRequire(path.join(dir, 'package.json'))('node-rdkafka') as RdKafka;
const CLIENT_ID = 'rdkafka-telemetry';

async function rdkafkaSeries(broker: Broker): Promise<string[]> {
  const text = await broker.metrics.metrics();
  return text.split('\n').filter((l) => l.startsWith('org_apache_kafka_') && l.includes(`client_id="${CLIENT_ID}"`));
}

async function main(): Promise<void> {
  const logDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-rdk-'));
  const broker = new Broker(
    buildBrokerConfig(
      new Map([
        ['listeners', 'PLAINTEXT://127.0.0.1:0'],
        ['log.dirs', logDir],
      ]),
    ),
    silentLogger(),
  );
  await broker.start();
  const bootstrap = `127.0.0.1:${[...broker.boundPorts().values()][0]!}`;
  const admin = new Admin({ bootstrapServers: bootstrap, enableMetricsPush: false });
  await admin.alterConfigs(ConfigResourceType.ClientMetrics, 'all-clients', [
    { name: 'metrics', op: 'set', value: '*' },
    { name: 'interval.ms', op: 'set', value: '1000' },
  ]);
  await admin.createTopics([{ name: 'rdk', numPartitions: 1, replicationFactor: 1 }]);
  await admin.close();
  console.log(`librdkafka ${rdkafka.librdkafkaVersion} -> Fjord at ${bootstrap}`);

  const producer = new rdkafka.Producer({
    'bootstrap.servers': bootstrap,
    'client.id': CLIENT_ID,
    'enable.metrics.push': true,
    ...(process.env.RDKAFKA_DEBUG ? { debug: process.env.RDKAFKA_DEBUG } : {}),
  });
  producer.on('event.log', (log) => console.log('rdkafka:', (log as { message: string }).message));
  await new Promise<void>((resolve, reject) => producer.connect({}, (err) => (err ? reject(err) : resolve())));
  const deadline = Date.now() + 20_000;
  let seen: string[] = [];
  while (Date.now() < deadline) {
    producer.produce('rdk', null, Buffer.from('x'));
    producer.poll();
    seen = await rdkafkaSeries(broker);
    if (seen.some((l) => l.includes('producer_node_request_latency'))) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  console.log(seen.length > 0 ? `re-exported after a push:\n${seen.join('\n')}` : 'no series from librdkafka within 20 s');
  await new Promise<void>((resolve) => producer.flush(5000, () => resolve()));
  await new Promise<void>((resolve) => producer.disconnect(() => resolve()));
  const left = await rdkafkaSeries(broker);
  console.log(`after disconnect (terminating push): ${left.length} series left`);
  await broker.stop();
  await rm(logDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
