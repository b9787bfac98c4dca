// The table of broker configuration keys Fjord understands: Kafka's names, types and defaults.
// DescribeConfigs lists these; BrokerConfig is built from them. Keys marked `noEffect` are accepted
// so that a stock Kafka server.properties loads without warnings, but Fjord does not act on them.
// The definitions live by area in the defs-*.ts files; this is the one place that lists them all,
// in the order DescribeConfigs shows them.

import type { ConfigDef } from './config-def.js';
import { ACCEPTED_ONLY_DEFS } from './defs-accepted-only.js';
import { CLUSTER_AND_NETWORK_DEFS } from './defs-cluster-network.js';
import { LOG_DEFS } from './defs-log.js';
import { METRICS_LISTENER_DEFS } from './defs-metrics-listener.js';
import { REPLICATION_GROUPS_ACLS_DEFS } from './defs-replication-groups-acls.js';

export const BROKER_CONFIG_DEFS: readonly ConfigDef[] = [
  ...CLUSTER_AND_NETWORK_DEFS,
  ...LOG_DEFS,
  ...REPLICATION_GROUPS_ACLS_DEFS,
  ...ACCEPTED_ONLY_DEFS,
  ...METRICS_LISTENER_DEFS,
];

const DEFS_BY_NAME = new Map(BROKER_CONFIG_DEFS.map((d) => [d.name, d]));

export function configDef(name: string): ConfigDef | undefined {
  return DEFS_BY_NAME.get(name);
}
