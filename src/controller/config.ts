/**
 * The controller's slice of the broker configuration. Field names match BrokerConfig so the
 * broker passes its config as is; the controller does not import the server layer.
 */
import type { ClientSecurity } from '../security/client-security.js';

export interface ControllerConfig {
  brokerId: number;
  interBrokerListenerName: string;
  /** SASL/TLS towards the other brokers' inter-broker listener; undefined = PLAINTEXT. */
  interBrokerSecurity?: ClientSecurity;
  uncleanLeaderElectionEnable: boolean;
  autoLeaderRebalanceEnable: boolean;
  leaderImbalanceCheckIntervalSeconds: number;
  /** Kafka's default 10; optional so a config without the key still type-checks. */
  leaderImbalancePerBrokerPercentage?: number;
  deleteTopicEnable: boolean;
  requestTimeoutMs: number;
}

export const DEFAULT_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE = 10;
