/**
 * Dynamic broker configs (AlterConfigs on a BROKER resource): per-broker values (resource name =
 * broker id) and cluster-wide defaults (resource name ""). They sit above server.properties in
 * precedence and are kept in memory. A single broker persists them as a small JSON file next to
 * the metadata file; in cluster mode they live where Kafka keeps them, /config/brokers/<id> and
 * /config/brokers/<default> in ZooKeeper (a SharedConfigStore), so a change made through any
 * broker or `kafka-configs.sh --zookeeper` reaches the broker it is for. Which keys may change,
 * and their check, are config/dynamic-broker-keys.ts.
 */
import { writeFileAtomically } from '../../storage/checkpoint/atomic-file.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrokerConfig } from '../config/index.js';
import type { BrokerConfigLayers } from '../../config/topic-configs.js';

export const DYNAMIC_BROKER_CONFIG_FILE = 'fjord-dynamic-broker-configs.json';

interface PersistedDynamicConfigs {
  version: 1;
  /** Keyed by broker id as text; "" holds the cluster-wide defaults. */
  scopes: Record<string, Record<string, string>>;
}

/** Where cluster mode keeps dynamic broker configs (scope "" = the cluster default). */
export interface SharedConfigStore {
  read(scope: string): Promise<Record<string, string>>;
  write(scope: string, entries: Record<string, string>): Promise<void>;
}

export class DynamicBrokerConfigs {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string | null,
    private readonly brokerId: number,
    private readonly scopes: Map<string, Map<string, string>>,
    private readonly shared: SharedConfigStore | null = null,
  ) {}

  /** Cluster mode: this broker's scope and the cluster default, read from the shared store. */
  static async openShared(store: SharedConfigStore, brokerId: number): Promise<DynamicBrokerConfigs> {
    const d = new DynamicBrokerConfigs(null, brokerId, new Map(), store);
    for (const scope of ['', String(brokerId)]) d.set(scope, new Map(Object.entries(await store.read(scope))));
    return d;
  }

  /** Whether `scope` is one this broker follows ("" or its own id). */
  follows(scope: string): boolean {
    return scope === '' || scope === this.selfScope;
  }

  /** Re-reads a scope from the shared store after a change notification; false when not shared or not ours. */
  async reload(scope: string): Promise<boolean> {
    if (!this.shared || !this.follows(scope)) return false;
    this.set(scope, new Map(Object.entries(await this.shared.read(scope))));
    return true;
  }

  private set(scope: string, entries: ReadonlyMap<string, string>): void {
    if (entries.size === 0) this.scopes.delete(scope);
    else this.scopes.set(scope, new Map(entries));
  }

  /** Loads the file in `dir` (null dir: memory only, for tests). */
  static async open(dir: string | null, brokerId: number): Promise<DynamicBrokerConfigs> {
    const scopes = new Map<string, Map<string, string>>();
    const file = dir === null ? null : join(dir, DYNAMIC_BROKER_CONFIG_FILE);
    if (file) {
      try {
        const state = JSON.parse(await readFile(file, 'utf8')) as PersistedDynamicConfigs;
        for (const [scope, entries] of Object.entries(state.scopes ?? {})) scopes.set(scope, new Map(Object.entries(entries)));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw new Error(`cannot read dynamic broker configs ${file}: ${(err as Error).message}`);
        }
      }
    }
    return new DynamicBrokerConfigs(file, brokerId, scopes);
  }

  /** The scope name of this broker's own dynamic configs. */
  get selfScope(): string {
    return String(this.brokerId);
  }

  /** Dynamic configs of a scope (this broker's id or "" for cluster defaults). */
  get(scope: string): ReadonlyMap<string, string> {
    return this.scopes.get(scope) ?? new Map();
  }

  /** True when some dynamic config is set (only then can logs differ from what the data plane configures). */
  get isEmpty(): boolean {
    return this.scopes.size === 0;
  }

  layers(config: BrokerConfig): BrokerConfigLayers {
    return { dynamicBroker: this.get(this.selfScope), dynamicDefault: this.get(''), static: config.raw };
  }

  async replace(scope: string, entries: ReadonlyMap<string, string>): Promise<void> {
    // Shared: the store first (a failed write changes nothing here); the notification it causes
    // makes every other broker reload.
    if (this.shared) await this.shared.write(scope, Object.fromEntries(entries));
    this.set(scope, entries);
    await this.persist();
  }

  private persist(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    const state: PersistedDynamicConfigs = { version: 1, scopes: {} };
    for (const [scope, entries] of this.scopes) state.scopes[scope] = Object.fromEntries(entries);
    const text = JSON.stringify(state, null, 1);
    // Serialised, and written atomically, so a crash leaves either the old or the new file.
    this.writing = this.writing.then(() => writeFileAtomically(file, text));
    return this.writing;
  }

  async close(): Promise<void> {
    await this.writing;
  }
}
