import type { SecurityProtocol } from '../security/security-protocol.js';
import type { ListenerTls } from '../security/tls/server-tls.js';
/**
 * The controller's slice of the broker configuration. Field names match BrokerConfig so the
 * broker passes its config as is; the controller does not import the server layer.
 */
export interface ControllerConfig {
  brokerId: number;
  interBrokerListenerName: string;
  /** The inter-broker listener's protocol and TLS (BrokerConfig's); absent in tests: PLAINTEXT. */
  interBrokerSecurityProtocol?: SecurityProtocol;
  listenerTls?: ReadonlyMap<string, ListenerTls>;
  uncleanLeaderElectionEnable: boolean;
  autoLeaderRebalanceEnable: boolean;
  leaderImbalanceCheckIntervalSeconds: number;
  /** Kafka's default 10; optional so a config without the key still type-checks. */
  leaderImbalancePerBrokerPercentage?: number;
  deleteTopicEnable: boolean;
  requestTimeoutMs: number;
}

export const DEFAULT_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE = 10;
