/**
 * Everything a broker shows an operator, in one object the Broker holds: the metrics registry,
 * the readiness that /health/ready answers, the metrics listener, and each area's metrics,
 * registered once the broker's services exist. Broker.start() and stop() make three calls here
 * (startListener, registerAreas, close) instead of one per area.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from '../config/index.js';
import { BrokerHealth } from './health.js';
import { startMetricsEndpoint, type MetricsHttpListener } from './http-listener.js';
import { registerKafkaExporterMetrics, type ConsumerLagMetrics, type KafkaExporterSources } from './lag/index.js';
import { createMetricsRegistry, type MetricsRegistry } from './registry.js';
import { registerTrafficMetrics } from './traffic-metrics.js';
import { registerBrokerStateMetrics, type BrokerStateSources } from './broker-state-metrics.js';
import { registerKafkaServerMetrics } from './kafka-server-metrics.js';
import { registerShardWorkerMetrics } from './shard-worker-metrics.js';
import { RequestStats } from './request-stats.js';
import { BrokerTopicStats } from './topic-stats.js';
import type { BrokerServices } from '../broker-services.js';
import type { BrokerNetwork } from '../broker-network.js';
import { ConsoleHttp } from '../../console/console-http.js';
import type { ClientOptions } from '../../client/index.js';

/** What the areas' metrics read, handed over once the broker's services are up. */
export interface ObservedBroker {
  /** Replica manager, controller, logs, ZooKeeper and coordinators (broker-state-metrics.ts). */
  brokerState: BrokerStateSources;
  /** Requests, topics' traffic, connections, SASL and quotas (traffic-metrics.ts). */
  traffic: { services: BrokerServices; network: BrokerNetwork };
  /** kafka-exporter's consumer lag and topic families (lag/). */
  kafkaExporter: KafkaExporterSources;
}

export class BrokerObservability {
  readonly metrics: MetricsRegistry = createMetricsRegistry();
  readonly health = new BrokerHealth();
  /** Counted by the router and the connections (request-stats.ts), read at scrape time. */
  readonly requestStats = new RequestStats();
  /** Counted by Produce and Fetch per topic (topic-stats.ts). */
  readonly topicStats = new BrokerTopicStats();
  /** Consumer lag's background refresh (kafka_consumergroup_*); its refresh() is a test seam. */
  consumerLag: ConsumerLagMetrics | undefined;
  private listener: MetricsHttpListener | undefined;
  /** The web console on the listener (console.enable); its clients reach the broker at consoleBootstrap. */
  private console: ConsoleHttp | undefined;
  /** Set by the broker once it serves: where the console's clients connect, or why they cannot. */
  private consoleClient: ClientOptions | string = 'the broker is not serving yet';

  constructor(
    private readonly config: BrokerConfig,
    private readonly logger: Logger,
  ) {}

  /** The listener's bound port (undefined when metrics.listener is off). */
  get port(): number | undefined {
    return this.listener?.port;
  }

  /** First thing at start, so that /health/live and /health/ready (503) answer during recovery. */
  async startListener(): Promise<void> {
    const consoleOn = this.config.metricsListener !== null && this.config.values.get('console.enable') !== false;
    this.console = consoleOn ? new ConsoleHttp(() => this.consoleClient) : undefined;
    this.listener = await startMetricsEndpoint(
      this.config.metricsListener,
      this.metrics,
      this.health,
      this.logger.child({ component: 'metrics' }),
      this.console,
    );
  }

  registerAreas(broker: ObservedBroker): void {
    registerTrafficMetrics(this.metrics, broker.traffic.services, broker.traffic.network);
    // With shard workers (num.io.threads > 1) the per-partition families read every shard through the seam.
    const shards = broker.traffic.services.shards;
    registerBrokerStateMetrics(this.metrics, this.config, { ...broker.brokerState, shards });
    registerKafkaServerMetrics(this.metrics, this.health);
    registerShardWorkerMetrics(this.metrics, shards);
    this.consumerLag = registerKafkaExporterMetrics(this.metrics, this.config, { ...broker.kafkaExporter, shards });
  }

  /** Stops background work (with the services, before they close). */
  stopAreas(): void {
    this.consumerLag?.close();
    this.consoleClient = 'the broker is stopping';
    this.console?.close().catch(() => undefined);
  }

  /**
   * Once the broker serves: the console's clients connect to its first PLAINTEXT listener (a
   * wildcard host through loopback), else to its first SASL_PLAINTEXT one, where the console
   * asks each user to log in (console-sessions.ts). Without either the API says so.
   */
  serveConsoleThrough(advertised: readonly { host: string; port: number; securityProtocol: string }[]): void {
    const l = advertised.find((a) => a.securityProtocol === 'PLAINTEXT') ?? advertised.find((a) => a.securityProtocol === 'SASL_PLAINTEXT');
    const host = !l || l.host === '' || l.host === '0.0.0.0' || l.host === '::' ? '127.0.0.1' : l.host;
    this.consoleClient = l
      ? {
          bootstrapServers: [`${host.includes(':') ? `[${host}]` : host}:${l.port}`],
          ...(l.securityProtocol === 'SASL_PLAINTEXT' ? { security: { protocol: 'SASL_PLAINTEXT' as const } } : {}),
        }
      : 'the console needs a PLAINTEXT or SASL_PLAINTEXT listener on this broker: use bin/fjord-console.sh with --command-config';
  }

  /** Last thing at stop: probes see the listener until the broker is gone. */
  async closeListener(): Promise<void> {
    await this.listener?.close();
  }
}
