/**
 * Groups' dynamic configs as every broker keeps them: all in memory (stored text, and parsed for
 * the group coordinator's lookups at each heartbeat), persisted where this broker keeps its other
 * dynamic entity configs. Embedded: one JSON file beside the metadata file
 * (fjord-group-configs.json), replaced atomically. Cluster mode: /config/groups/<group> znodes
 * (names URL-encoded, one znode whatever the name), each write announced under /config/changes,
 * so every broker re-reads the group's configs (reload). Storing an empty set deletes them.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { GroupConfigLookup, GroupConfigOverrides } from '../../coordinator/group/consumer/settings.js';
import { readJsonFile } from '../../metadata/embedded/json-file.js';
import type { ZkMode } from '../../metadata/zk/zk-mode.js';
import { writeFileAtomically } from '../../storage/checkpoint/atomic-file.js';
import type { ConfigAdmin } from './config-admin.js';
import { parseGroupConfigs } from './group-configs.js';

export const GROUP_CONFIGS_FILE = 'fjord-group-configs.json';

/** Where groups' configs are persisted. */
export interface GroupConfigBackend {
  loadAll(): Promise<Map<string, Record<string, string>>>;
  load(group: string): Promise<Record<string, string>>;
  store(group: string, configs: Record<string, string>): Promise<void>;
}

export class GroupConfigStore {
  private readonly parsed = new Map<string, GroupConfigOverrides>();

  private constructor(
    private readonly backend: GroupConfigBackend,
    private readonly byGroup: Map<string, Record<string, string>>,
    private readonly onInvalid: (group: string, err: Error) => void,
  ) {
    for (const [group, configs] of byGroup) this.cacheParsed(group, configs);
  }

  /** `onInvalid`: a stored config that does not parse (written by hand, or by another tool) is ignored and reported. */
  static async open(backend: GroupConfigBackend, onInvalid: (group: string, err: Error) => void = () => undefined): Promise<GroupConfigStore> {
    return new GroupConfigStore(backend, await backend.loadAll(), onInvalid);
  }

  /** The group's stored configs; `{}` when it sets none. */
  get(group: string): Readonly<Record<string, string>> {
    return this.byGroup.get(group) ?? {};
  }

  /** The group's configs as the coordinator reads them (undefined when it sets none); bound, to be handed over as it is. */
  readonly lookup: GroupConfigLookup = (group) => this.parsed.get(group);

  /** Replaces the group's configs (empty: deletes them); resolves once durable (and announced in cluster mode). */
  async set(group: string, configs: Record<string, string>): Promise<void> {
    await this.backend.store(group, configs);
    this.apply(group, configs);
  }

  /** Re-reads one group's configs after another broker changed them. */
  async reload(group: string): Promise<void> {
    this.apply(group, await this.backend.load(group));
  }

  private apply(group: string, configs: Record<string, string>): void {
    if (Object.keys(configs).length === 0) this.byGroup.delete(group);
    else this.byGroup.set(group, { ...configs });
    this.cacheParsed(group, configs);
  }

  private cacheParsed(group: string, configs: Record<string, string>): void {
    this.parsed.delete(group);
    if (Object.keys(configs).length === 0) return;
    try {
      this.parsed.set(group, parseGroupConfigs(configs));
    } catch (err) {
      this.onInvalid(group, err as Error);
    }
  }
}

interface PersistedGroupConfigs {
  version: 1;
  groups: Record<string, Record<string, string>>;
}

/** The embedded broker's file. */
export class EmbeddedGroupConfigBackend implements GroupConfigBackend {
  private readonly file: string;
  private current = new Map<string, Record<string, string>>();
  private writing: Promise<void> = Promise.resolve();

  constructor(dir: string) {
    this.file = join(dir, GROUP_CONFIGS_FILE);
  }

  async loadAll(): Promise<Map<string, Record<string, string>>> {
    const read = (await readJsonFile(this.file)) as PersistedGroupConfigs | undefined;
    if (read === undefined) return new Map();
    if (read.version !== 1 || typeof read.groups !== 'object' || read.groups === null) throw new Error(`${this.file}: unknown format`);
    this.current = new Map(Object.entries(read.groups));
    return new Map([...this.current].map(([k, v]) => [k, { ...v }]));
  }

  async load(group: string): Promise<Record<string, string>> {
    return { ...(this.current.get(group) ?? {}) };
  }

  store(group: string, configs: Record<string, string>): Promise<void> {
    // Serialised, so the file always holds the latest of overlapping changes.
    const next = this.writing.then(async () => {
      const updated = new Map(this.current);
      if (Object.keys(configs).length === 0) updated.delete(group);
      else updated.set(group, { ...configs });
      const body: PersistedGroupConfigs = { version: 1, groups: Object.fromEntries(updated) };
      await writeFileAtomically(this.file, JSON.stringify(body, null, 1));
      this.current = updated;
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}

/** What the ZooKeeper backend needs of Kafka's ZooKeeper client (metadata/zk's KafkaZkApi has it). */
export interface GroupConfigZk {
  getEntityConfigs(type: 'groups', name: string): Promise<Record<string, string>>;
  setEntityConfigs(type: 'groups', name: string, configs: Record<string, string>): Promise<void>;
  getConfigChildren?(subPath: string): Promise<string[]>;
}

/** Cluster mode: /config/groups/<group>. */
export class ZkGroupConfigBackend implements GroupConfigBackend {
  constructor(private readonly zk: GroupConfigZk) {}

  async loadAll(): Promise<Map<string, Record<string, string>>> {
    const all = new Map<string, Record<string, string>>();
    for (const child of (await this.zk.getConfigChildren?.('groups')) ?? []) {
      const configs = await this.zk.getEntityConfigs('groups', child);
      if (Object.keys(configs).length > 0) all.set(groupNameOf(child), configs);
    }
    return all;
  }

  load(group: string): Promise<Record<string, string>> {
    return this.zk.getEntityConfigs('groups', encodeURIComponent(group));
  }

  store(group: string, configs: Record<string, string>): Promise<void> {
    return this.zk.setEntityConfigs('groups', encodeURIComponent(group), configs);
  }
}

/** The group a /config/groups child znode (or change notification) names; a name not URL-encoded is taken as it is. */
export function groupNameOf(znodeName: string): string {
  try {
    return decodeURIComponent(znodeName);
  } catch {
    return znodeName;
  }
}

/**
 * Opens the store where this broker keeps dynamic entity configs (following other brokers'
 * changes in cluster mode); `configAdmin` then serves GROUP resources from it.
 */
export async function openGroupConfigStore(logDir: string, zkMode: ZkMode | undefined, configAdmin: ConfigAdmin, logger: Logger): Promise<GroupConfigStore> {
  const backend = zkMode ? new ZkGroupConfigBackend(await zkMode.zkClient()) : new EmbeddedGroupConfigBackend(logDir);
  const store = await GroupConfigStore.open(backend, (group, err) => logger.warn({ group, err: err.message }, `stored configs of group ${group} ignored`));
  zkMode?.onGroupConfigChange((name) => store.reload(groupNameOf(name)));
  configAdmin.groupConfigs = store;
  return store;
}
