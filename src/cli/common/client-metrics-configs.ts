/**
 * kafka-configs.sh --entity-type client-metrics (Kafka 3.7+'s ConfigCommand): KIP-714's
 * client-metrics subscriptions as config resources of type 16. --describe without
 * --entity-name lists them (ListClientMetricsResources) and prints each as Kafka does
 * (`Dynamic configs for client-metric N are:`, then Kafka's entry lines); --alter deletes only
 * keys the subscription has (`Invalid config(s): k` otherwise, as Kafka's tool checks first).
 */
import { type Admin, ConfigResourceType, type ConfigEntry } from '../../client/index.js';
import { CliError } from './tool.js';

/** ConfigEntry.ConfigSource.CLIENT_METRICS_CONFIG: what a subscription's own keys carry. */
const CLIENT_METRICS_SOURCE = 7;

export interface ClientMetricsConfigsArgs {
  admin: Admin;
  name: string | undefined;
  describe: boolean;
  all: boolean;
  adds: [string, string][];
  deletes: string[];
  /** kafka-configs' entry line (`  k=v sensitive=false synonyms={...}`). */
  entryLine: (e: ConfigEntry) => string;
}

export async function clientMetricsConfigs(a: ClientMetricsConfigsArgs): Promise<number> {
  const { admin } = a;
  const own = async (name: string): Promise<ConfigEntry[]> => {
    const entries = await admin.describeConfigs(ConfigResourceType.ClientMetrics, name);
    return a.all ? entries : entries.filter((e) => e.source === CLIENT_METRICS_SOURCE);
  };
  if (a.describe) {
    const names = a.name !== undefined ? [a.name] : await admin.listClientMetricsResources();
    for (const name of names) {
      const entries = await own(name);
      console.log(`${a.all ? 'All' : 'Dynamic'} configs for client-metric ${name} are:`);
      for (const e of entries) console.log(a.entryLine(e));
    }
    return 0;
  }
  if (a.name === undefined || a.name === '') throw new CliError('--alter needs --entity-name (the client metrics subscription)');
  if (a.adds.length === 0 && a.deletes.length === 0) throw new CliError('--alter needs --add-config or --delete-config');
  const existing = new Set((await own(a.name)).map((e) => e.name));
  const missing = a.deletes.filter((k) => !existing.has(k));
  if (missing.length > 0) throw new CliError(`Invalid config(s): ${missing.join(',')}`);
  await admin.alterConfigs(ConfigResourceType.ClientMetrics, a.name, [
    ...a.adds.map(([k, v]) => ({ name: k, op: 'set' as const, value: v })),
    ...a.deletes.map((k) => ({ name: k, op: 'delete' as const })),
  ]);
  console.log(`Completed updating config for client-metric ${a.name}.`);
  return 0;
}
