/**
 * Cluster mode's links from this broker to the others, wired from its configuration: the
 * connections for requests made on a client's behalf, and the controlled shutdown that moves
 * leadership away before the listeners close.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { Endpoint } from './broker-services.js';
import { BrokerConnections } from '../client/broker-connections.js';
import type { InterBrokerInterceptor } from '../client/inter-broker-interceptor.js';
import type { ZkMode } from '../metadata/zk/zk-mode.js';
import type { ZkBrokerMetadata } from '../metadata/zk/zk-broker-metadata.js';

/** Connections to the other brokers' inter-broker listener, with its TLS/SASL and the test seam. */
export function interBrokerConnections(
  cfg: BrokerConfig,
  endpoint: (brokerId: number) => Endpoint | undefined,
  interceptor: InterBrokerInterceptor | undefined,
): BrokerConnections {
  return new BrokerConnections({
    brokerId: cfg.brokerId,
    clientId: `broker-${cfg.brokerId}`,
    endpoint,
    requestTimeoutMs: cfg.requestTimeoutMs,
    ...(cfg.interBrokerSecurity ? { security: cfg.interBrokerSecurity } : {}),
    ...(interceptor ? { interceptor } : {}),
  });
}

/** Asks the controller to move leadership away before the listeners close. */
export async function controlledShutdown(cfg: BrokerConfig, zk: ZkMode, image: ZkBrokerMetadata, logger: Logger): Promise<void> {
  const { controlledShutdown: shutDown } = await import('./cluster/controlled-shutdown.js');
  await shutDown({
    brokerId: cfg.brokerId,
    brokerEpoch: () => zk.brokerEpoch,
    controller: () => {
      const id = image.controllerId();
      const ep = id >= 0 ? image.endpoint(id, cfg.interBrokerListenerName) : undefined;
      return ep ? { id, ...ep } : undefined;
    },
    maxRetries: cfg.controlledShutdownMaxRetries,
    retryBackoffMs: cfg.controlledShutdownRetryBackoffMs,
    requestTimeoutMs: cfg.requestTimeoutMs,
    ...(cfg.interBrokerSecurity ? { security: cfg.interBrokerSecurity } : {}),
    logger: logger.child({ component: 'controlled-shutdown' }),
  });
}
