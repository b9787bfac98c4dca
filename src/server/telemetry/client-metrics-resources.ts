/**
 * The client-metrics resources (KIP-714 subscriptions) as every broker keeps them: all in memory,
 * persisted where this broker keeps its other dynamic entity configs. Embedded: one JSON file
 * beside the metadata file (fjord-client-metrics.json), replaced atomically. Cluster mode:
 * Kafka's /config/client-metrics/<name> znodes, each write announced under /config/changes, so
 * every broker re-reads the subscription (reload) and its clients see the change at their next
 * GetTelemetrySubscriptions or push. Storing an empty config set deletes the resource.
 */
import { join } from 'node:path';
import { readJsonFile } from '../../metadata/embedded/json-file.js';
import { writeFileAtomically } from '../../storage/checkpoint/atomic-file.js';

export const CLIENT_METRICS_FILE = 'fjord-client-metrics.json';

/** Where the subscriptions are persisted. */
export interface ClientMetricsBackend {
  loadAll(): Promise<Map<string, Record<string, string>>>;
  load(name: string): Promise<Record<string, string>>;
  store(name: string, configs: Record<string, string>): Promise<void>;
}

export class ClientMetricsResources {
  private readonly listeners: ((name: string) => void)[] = [];

  private constructor(
    private readonly backend: ClientMetricsBackend,
    private readonly byName: Map<string, Record<string, string>>,
  ) {}

  static async open(backend: ClientMetricsBackend): Promise<ClientMetricsResources> {
    return new ClientMetricsResources(backend, await backend.loadAll());
  }

  /** The subscription's configs; `{}` when there is none of that name. */
  get(name: string): Readonly<Record<string, string>> {
    return this.byName.get(name) ?? {};
  }

  /** Every subscription, by name. */
  entries(): ReadonlyMap<string, Readonly<Record<string, string>>> {
    return this.byName;
  }

  /** Replaces the subscription's configs (empty: deletes it); resolves once durable (and announced in cluster mode). */
  async set(name: string, configs: Record<string, string>): Promise<void> {
    await this.backend.store(name, configs);
    this.apply(name, configs);
  }

  /** Re-reads one subscription after another broker or tool changed it. */
  async reload(name: string): Promise<void> {
    this.apply(name, await this.backend.load(name));
  }

  onChange(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  private apply(name: string, configs: Record<string, string>): void {
    if (Object.keys(configs).length === 0) this.byName.delete(name);
    else this.byName.set(name, { ...configs });
    for (const l of this.listeners) l(name);
  }
}

interface PersistedSubscriptions {
  version: 1;
  subscriptions: Record<string, Record<string, string>>;
}

/** The embedded broker's file. */
export class EmbeddedClientMetricsBackend implements ClientMetricsBackend {
  private readonly file: string;
  private current = new Map<string, Record<string, string>>();
  private writing: Promise<void> = Promise.resolve();

  constructor(dir: string) {
    this.file = join(dir, CLIENT_METRICS_FILE);
  }

  async loadAll(): Promise<Map<string, Record<string, string>>> {
    const read = (await readJsonFile(this.file)) as PersistedSubscriptions | undefined;
    if (read === undefined) return new Map();
    if (read.version !== 1 || typeof read.subscriptions !== 'object' || read.subscriptions === null) throw new Error(`${this.file}: unknown format`);
    this.current = new Map(Object.entries(read.subscriptions));
    return new Map([...this.current].map(([k, v]) => [k, { ...v }]));
  }

  async load(name: string): Promise<Record<string, string>> {
    return { ...(this.current.get(name) ?? {}) };
  }

  store(name: string, configs: Record<string, string>): Promise<void> {
    // Serialised, so the file always holds the latest of overlapping changes.
    const next = this.writing.then(async () => {
      const updated = new Map(this.current);
      if (Object.keys(configs).length === 0) updated.delete(name);
      else updated.set(name, { ...configs });
      const body: PersistedSubscriptions = { version: 1, subscriptions: Object.fromEntries(updated) };
      await writeFileAtomically(this.file, JSON.stringify(body, null, 1));
      this.current = updated;
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}

/** What the ZooKeeper backend needs of Kafka's ZooKeeper client (metadata/zk's KafkaZkApi has it). */
export interface ClientMetricsZk {
  getEntityConfigs(type: 'client-metrics', name: string): Promise<Record<string, string>>;
  setEntityConfigs(type: 'client-metrics', name: string, configs: Record<string, string>): Promise<void>;
  getConfigChildren?(subPath: string): Promise<string[]>;
}

/**
 * Cluster mode: /config/client-metrics/<name>, names URL-encoded in the znode path (as Kafka's
 * Sanitizer does for users and client ids) so that any name is one znode.
 */
export class ZkClientMetricsBackend implements ClientMetricsBackend {
  constructor(private readonly zk: ClientMetricsZk) {}

  async loadAll(): Promise<Map<string, Record<string, string>>> {
    const all = new Map<string, Record<string, string>>();
    for (const child of (await this.zk.getConfigChildren?.('client-metrics')) ?? []) {
      const configs = await this.zk.getEntityConfigs('client-metrics', child);
      if (Object.keys(configs).length > 0) all.set(subscriptionNameOf(child), configs);
    }
    return all;
  }

  load(name: string): Promise<Record<string, string>> {
    return this.zk.getEntityConfigs('client-metrics', encodeURIComponent(name));
  }

  store(name: string, configs: Record<string, string>): Promise<void> {
    return this.zk.setEntityConfigs('client-metrics', encodeURIComponent(name), configs);
  }
}

/** The subscription a /config/client-metrics child znode (or change notification) names; a name not URL-encoded is taken as it is. */
export function subscriptionNameOf(znodeName: string): string {
  try {
    return decodeURIComponent(znodeName);
  } catch {
    return znodeName;
  }
}
