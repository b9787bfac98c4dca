/**
 * Cluster mode's links from this broker to the others, wired from its configuration: joining the
 * cluster (registering, hosting the controller, waiting for its first word), the connections for
 * requests made on a client's behalf, and the controlled shutdown that moves leadership away
 * before the listeners close.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { Endpoint } from './broker-services.js';
import type { ListenerSpec } from './network/index.js';
import { BrokerConnections } from '../client/broker-connections.js';
import type { InterBrokerInterceptor } from '../client/inter-broker-interceptor.js';
import type { ZkMode } from '../metadata/zk/zk-mode.js';
import type { ZkBrokerMetadata } from '../metadata/zk/zk-broker-metadata.js';
import type { KafkaController } from '../controller/index.js';

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

/**
 * Cluster mode, once the listeners are bound: registers this broker and hosts its controller
 * (every broker hosts one; it acts only while this broker holds /controller).
 */
export async function registerAndHostController(
  zk: ZkMode,
  image: ZkBrokerMetadata,
  cfg: BrokerConfig,
  advertised: readonly ListenerSpec[],
  logger: Logger,
  interceptor: InterBrokerInterceptor | undefined,
): Promise<KafkaController> {
  await zk.register(advertised.map((l) => ({ listenerName: l.name, securityProtocol: l.securityProtocol, host: l.host, port: l.port })));
  // Until the controller speaks, Metadata answers with this broker alone (as it did before).
  image.seedSelf({ id: cfg.brokerId, rack: cfg.brokerRack, endpoints: new Map(advertised.map((l) => [l.name, { host: l.host, port: l.port }])) });
  const { KafkaController } = await import('../controller/index.js');
  const controller = new KafkaController({
    brokerId: cfg.brokerId,
    zk: await zk.zkClient(),
    membership: zk.membership,
    config: cfg,
    logger,
    ...(interceptor ? { interBrokerInterceptor: interceptor } : {}),
  });
  controller.start();
  zk.onTopicConfigChange((topic) => controller.topicConfigChanged(topic));
  return controller;
}

/**
 * Waits (bounded by zookeeper.connection.timeout.ms) for the controller's first UpdateMetadata,
 * so that start() resolves with a broker that knows the cluster.
 */
export async function awaitFirstUpdateMetadata(image: ZkBrokerMetadata, cfg: BrokerConfig, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const arrived = await Promise.race([
    image.firstUpdateMetadata.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), cfg.zookeeperConnectionTimeoutMs))),
  ]);
  clearTimeout(timer);
  if (!arrived) {
    logger.warn({ waitedMs: cfg.zookeeperConnectionTimeoutMs }, 'no UpdateMetadata from the controller yet; serving what this broker knows until it comes');
  }
}
