/**
 * kafka-configs.sh for config resources named by the user rather than found in the cluster
 * model (Kafka's ConfigCommand): `client-metrics` (KIP-714 subscriptions, resource type 16) and
 * `groups` (Kafka 4.0's group configs, type 32). --describe without --entity-name describes every
 * one the cluster lists, each printed as Kafka prints it (`Dynamic configs for <label> N are:`,
 * only the resource's own keys; `All configs` with --all, defaults included); --alter deletes only
 * keys the resource has (`Invalid config(s): k` otherwise, as Kafka's tool checks before it sends
 * anything).
 */
import { type Admin, ConfigResourceType, type ConfigEntry } from '../../client/index.js';
import { CliError } from './tool.js';

export interface NamedResourceConfigsArgs {
  admin: Admin;
  name: string | undefined;
  describe: boolean;
  all: boolean;
  adds: [string, string][];
  deletes: string[];
  /** kafka-configs' entry line (`  k=v sensitive=false synonyms={...}`). */
  entryLine: (e: ConfigEntry) => string;
}

interface ResourceKind {
  type: ConfigResourceType;
  /** The ConfigSource a resource's own keys carry (CLIENT_METRICS_CONFIG 7, GROUP_CONFIG 8). */
  ownSource: number;
  /** As Kafka's tool names one in its lines. */
  label: string;
  /** What --alter without --entity-name says is missing. */
  what: string;
  /** Every resource of the kind, for --describe without a name. */
  list: (admin: Admin) => Promise<string[]>;
}

const KINDS: Record<'client-metrics' | 'groups', ResourceKind> = {
  'client-metrics': {
    type: ConfigResourceType.ClientMetrics,
    ownSource: 7,
    label: 'client-metric',
    what: 'the client metrics subscription',
    list: (admin) => admin.listClientMetricsResources(),
  },
  groups: {
    type: ConfigResourceType.Group,
    ownSource: 8,
    label: 'group',
    what: 'the group',
    list: async (admin) => [...new Set((await admin.listGroups()).map((g) => g.groupId))].sort(),
  },
};

export async function namedResourceConfigs(kind: keyof typeof KINDS, a: NamedResourceConfigsArgs): Promise<number> {
  const { admin } = a;
  const k = KINDS[kind];
  const shown = async (name: string, all: boolean): Promise<ConfigEntry[]> => {
    const entries = await admin.describeConfigs(k.type, name);
    return all ? entries : entries.filter((e) => e.source === k.ownSource);
  };
  if (a.describe) {
    const names = a.name !== undefined ? [a.name] : await k.list(admin);
    for (const name of names) {
      const entries = await shown(name, a.all);
      console.log(`${a.all ? 'All' : 'Dynamic'} configs for ${k.label} ${name} are:`);
      for (const e of entries) console.log(a.entryLine(e));
    }
    return 0;
  }
  if (a.name === undefined || a.name === '') throw new CliError(`--alter needs --entity-name (${k.what})`);
  if (a.adds.length === 0 && a.deletes.length === 0) throw new CliError('--alter needs --add-config or --delete-config');
  const existing = new Set((await shown(a.name, false)).map((e) => e.name));
  const missing = a.deletes.filter((key) => !existing.has(key));
  if (missing.length > 0) throw new CliError(`Invalid config(s): ${missing.join(',')}`);
  await admin.alterConfigs(k.type, a.name, [
    ...a.adds.map(([key, v]) => ({ name: key, op: 'set' as const, value: v })),
    ...a.deletes.map((key) => ({ name: key, op: 'delete' as const })),
  ]);
  console.log(`Completed updating config for ${k.label} ${a.name}.`);
  return 0;
}
