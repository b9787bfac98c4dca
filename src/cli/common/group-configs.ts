/**
 * kafka-configs.sh --entity-type groups (Kafka 4.0's ConfigCommand): a group's own configs
 * (consumer.session.timeout.ms, consumer.heartbeat.interval.ms), config resources of type 32.
 * --describe without --entity-name describes every group ListGroups knows; each is printed as
 * Kafka prints it (`Dynamic configs for group g are:`, only the group's own keys; `All configs`
 * with --all, the broker's values as DEFAULT_CONFIG). --alter deletes only keys the group has
 * (`Invalid config(s): k` otherwise, as Kafka's tool checks before it sends anything).
 */
import { type Admin, ConfigResourceType, type ConfigEntry } from '../../client/index.js';
import { CliError } from './tool.js';

/** ConfigEntry.ConfigSource.GROUP_CONFIG: what the group's own keys carry. */
const GROUP_CONFIG_SOURCE = 8;

export interface GroupConfigsArgs {
  admin: Admin;
  name: string | undefined;
  describe: boolean;
  all: boolean;
  adds: [string, string][];
  deletes: string[];
  /** kafka-configs' entry line (`  k=v sensitive=false synonyms={...}`). */
  entryLine: (e: ConfigEntry) => string;
}

export async function groupConfigs(a: GroupConfigsArgs): Promise<number> {
  const { admin } = a;
  const shown = async (group: string, all: boolean): Promise<ConfigEntry[]> => {
    const entries = await admin.describeConfigs(ConfigResourceType.Group, group);
    return all ? entries : entries.filter((e) => e.source === GROUP_CONFIG_SOURCE);
  };
  if (a.describe) {
    const names = a.name !== undefined ? [a.name] : [...new Set((await admin.listGroups()).map((g) => g.groupId))].sort();
    for (const name of names) {
      const entries = await shown(name, a.all);
      console.log(`${a.all ? 'All' : 'Dynamic'} configs for group ${name} are:`);
      for (const e of entries) console.log(a.entryLine(e));
    }
    return 0;
  }
  if (a.name === undefined || a.name === '') throw new CliError('--alter needs --entity-name (the group)');
  if (a.adds.length === 0 && a.deletes.length === 0) throw new CliError('--alter needs --add-config or --delete-config');
  const existing = new Set((await shown(a.name, false)).map((e) => e.name));
  const missing = a.deletes.filter((k) => !existing.has(k));
  if (missing.length > 0) throw new CliError(`Invalid config(s): ${missing.join(',')}`);
  await admin.alterConfigs(ConfigResourceType.Group, a.name, [
    ...a.adds.map(([k, v]) => ({ name: k, op: 'set' as const, value: v })),
    ...a.deletes.map((k) => ({ name: k, op: 'delete' as const })),
  ]);
  console.log(`Completed updating config for group ${a.name}.`);
  return 0;
}
