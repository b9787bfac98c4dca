/**
 * A Fjord broker in a child process, for tests where its memory and event loop must be measured
 * apart from the test's own. argv[2]: JSON { props, topics: [{ name, partitions, configs }] }.
 * Prints "READY <port>" once it listens and the topics exist, then a line
 * "STATS <rss bytes> <worst event-loop delay ms since the last line>" every 50 ms.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Broker } from '../../src/server/broker.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';

interface ChildSpec {
  props: Record<string, string>;
  topics: { name: string; partitions: number; configs: Record<string, string> }[];
}

const spec = JSON.parse(process.argv[2] ?? '{}') as ChildSpec;
const broker = new Broker(
  buildBrokerConfig(new Map(Object.entries({ 'group.initial.rebalance.delay.ms': '0', ...spec.props }))),
  silentLogger(),
);
await broker.start();
for (const t of spec.topics) {
  await broker.services.metadata.createTopic({ name: t.name, numPartitions: t.partitions, replicationFactor: 1, configs: t.configs });
  await broker.services.replicaManager.syncTopic(t.name);
}
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
process.stdout.write(`READY ${broker.boundPorts().get('PLAINTEXT')}\n`);
setInterval(() => {
  process.stdout.write(`STATS ${process.memoryUsage.rss()} ${(delay.max / 1e6).toFixed(1)}\n`);
  delay.reset();
}, 50).unref();
process.on('SIGTERM', () => void broker.stop().then(() => process.exit(0)));
