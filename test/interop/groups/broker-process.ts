/**
 * A Fjord broker in a child process, so tests can SIGKILL it. argv[2]: JSON of broker
 * properties. Prints "READY <port>" once it listens.
 */
import { Broker } from '../../../src/server/broker.js';
import { buildBrokerConfig } from '../../../src/server/config/index.js';
import { silentLogger } from '../../../src/server/logger.js';

const props = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>;
const broker = new Broker(buildBrokerConfig(new Map(Object.entries({ 'group.initial.rebalance.delay.ms': '0', ...props }))), silentLogger());
await broker.start();
process.stdout.write(`READY ${broker.boundPorts().get('PLAINTEXT')}\n`);
process.on('SIGTERM', () => void broker.stop().then(() => process.exit(0)));
