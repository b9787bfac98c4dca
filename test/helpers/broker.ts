/**
 * Starts a real Fjord broker in this process on a free port with a fresh temporary log dir.
 * Always `await b.stop()` (it also removes the directory unless `keepDir`).
 * FJORD_TEST_IO_THREADS sets num.io.threads on it (io-threads.ts), FJORD_TEST_NETWORK_THREADS num.network.threads (network-threads.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker, type BrokerOptions } from '../../src/server/broker.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { withTestIoThreads } from './io-threads.js';
import { withTestNetworkThreads } from './network-threads.js';

export interface TestBroker {
  broker: Broker;
  port: number;
  bootstrap: string;
  dir: string;
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

export async function startTestBroker(props: Record<string, string> = {}, dir?: string, options: BrokerOptions = {}): Promise<TestBroker> {
  const logDir = dir ?? (await mkdtemp(join(tmpdir(), 'fjord-test-')));
  const raw = new Map<string, string>(
    Object.entries({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'log.dirs': logDir,
      'group.initial.rebalance.delay.ms': '0',
      ...withTestNetworkThreads(withTestIoThreads(props)),
    }),
  );
  const broker = new Broker(buildBrokerConfig(raw), silentLogger(), options);
  await broker.start();
  const ports = broker.boundPorts();
  const port = ports.get('PLAINTEXT') ?? [...ports.values()][0]!;
  return {
    broker,
    port,
    bootstrap: `127.0.0.1:${port}`,
    dir: logDir,
    async stop(opts) {
      await broker.stop();
      if (!opts?.keepDir && !dir) await rm(logDir, { recursive: true, force: true });
    },
  };
}
