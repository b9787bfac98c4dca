/**
 * A Fjord broker in a child process, for tests where its memory and event loop must be measured
 * apart from the test's own, or that kill it. argv[2]: the folder its modules come from (dist/,
 * or src/ under tsx: test/helpers/built.ts picks); argv[3]: JSON { props, topics: [{ name,
 * partitions, configs }], stats?, logFile? }.
 * Prints "READY <port>" once it listens and the topics exist, then a line
 * "STATS <rss bytes> <worst event-loop delay ms since the last line>" every 50 ms (unless
 * `stats: false`: the cluster harness runs several brokers on few cores and reads no figures).
 * With `logFile`, the broker logs JSON lines there (FJORD_LOG_LEVEL, default info), as a broker
 * writes them when stdout is not a terminal, so a failing cluster test can show what each broker
 * did and the harness can check every line (test/helpers/log-lines.ts).
 * Plain JavaScript, so that it runs dist/ without tsx: under tsx's loader every module's import
 * costs a hop to the loader's thread, over a second of CPU per broker started.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const from = (path) => import(pathToFileURL(join(process.argv[2], path)).href);
const [{ Broker }, { buildBrokerConfig }, { createRootLogger, silentLogger }] = await Promise.all([
  from('server/broker.js'),
  from('server/config/index.js'),
  from('server/logger.js'),
]);

const spec = JSON.parse(process.argv[3] ?? '{}');
const broker = new Broker(
  buildBrokerConfig(new Map(Object.entries({ 'group.initial.rebalance.delay.ms': '0', ...spec.props }))),
  spec.logFile === undefined ? silentLogger() : createRootLogger('json', process.env.FJORD_LOG_LEVEL ?? 'info', (text) => appendFileSync(spec.logFile, text)),
);
await broker.start();
for (const t of spec.topics ?? []) {
  await broker.services.metadata.createTopic({ name: t.name, numPartitions: t.partitions, replicationFactor: 1, configs: t.configs });
  await broker.services.replicaManager.syncTopic(t.name);
}
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
process.stdout.write(`READY ${broker.boundPorts().get('PLAINTEXT')}\n`);
if (spec.stats !== false) {
  setInterval(() => {
    process.stdout.write(`STATS ${process.memoryUsage.rss()} ${(delay.max / 1e6).toFixed(1)}\n`);
    delay.reset();
  }, 50).unref();
}
// A failed stop still exits (non-zero), so a test waiting for the exit is not left hanging.
process.on(
  'SIGTERM',
  () =>
    void broker.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    ),
);
