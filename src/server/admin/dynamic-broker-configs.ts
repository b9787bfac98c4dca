/**
 * Dynamic broker configs (AlterConfigs on a BROKER resource): per-broker values (resource name =
 * broker id) and cluster-wide defaults (resource name ""). They sit above server.properties in
 * precedence, are kept in memory and persisted as a small JSON file next to the metadata file.
 */
import { writeFileAtomically } from '../../storage/checkpoints.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { BrokerConfig } from '../config/index.js';
import { configDef, ConfigError, parseConfigValue } from '../config/index.js';
import type { BrokerConfigLayers } from '../config/topic-configs.js';

export const DYNAMIC_BROKER_CONFIG_FILE = 'fjord-dynamic-broker-configs.json';

/**
 * The broker keys Kafka lets AlterConfigs change at run time (its DynamicBrokerConfig set, limited
 * to keys Fjord knows). The log.* ones change the defaults of topics without overrides.
 */
export const DYNAMIC_BROKER_KEYS: ReadonlySet<string> = new Set([
  'log.segment.bytes', 'log.roll.ms', 'log.roll.hours', 'log.roll.jitter.ms', 'log.roll.jitter.hours',
  'log.index.size.max.bytes', 'log.flush.interval.messages', 'log.flush.interval.ms',
  'log.retention.bytes', 'log.retention.ms', 'log.retention.minutes', 'log.retention.hours',
  'log.index.interval.bytes', 'log.cleaner.delete.retention.ms', 'log.cleaner.min.compaction.lag.ms',
  'log.cleaner.max.compaction.lag.ms', 'log.segment.delete.delay.ms', 'log.cleaner.min.cleanable.ratio',
  'log.cleanup.policy', 'unclean.leader.election.enable', 'min.insync.replicas', 'compression.type',
  'log.preallocate', 'message.max.bytes', 'log.message.timestamp.type', 'log.message.timestamp.difference.max.ms',
  'log.message.downconversion.enable', 'log.cleaner.threads', 'log.cleaner.backoff.ms',
  'num.io.threads', 'num.network.threads', 'num.replica.fetchers', 'num.recovery.threads.per.data.dir',
  'background.threads', 'max.connections', 'max.connections.per.ip', 'producer.id.expiration.ms',
]);

interface PersistedDynamicConfigs {
  version: 1;
  /** Keyed by broker id as text; "" holds the cluster-wide defaults. */
  scopes: Record<string, Record<string, string>>;
}

export class DynamicBrokerConfigs {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string | null,
    private readonly brokerId: number,
    private readonly scopes: Map<string, Map<string, string>>,
  ) {}

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
    if (entries.size === 0) this.scopes.delete(scope);
    else this.scopes.set(scope, new Map(entries));
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

/**
 * Checks proposed dynamic broker configs; throws KafkaError(INVALID_REQUEST) worded like Kafka's
 * ("Cannot update these configs dynamically: Set(broker.id)").
 */
export function validateDynamicBrokerConfigs(resourceName: string, entries: ReadonlyMap<string, string>): void {
  const prefix = `Invalid config value for resource ConfigResource(type=BROKER, name='${resourceName}'): `;
  const unknown = [...entries.keys()].filter((k) => configDef(k) === undefined);
  if (unknown.length > 0) {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `${prefix}Unknown broker configs: Set(${unknown.join(', ')})`);
  }
  const nonDynamic = [...entries.keys()].filter((k) => !DYNAMIC_BROKER_KEYS.has(k));
  if (nonDynamic.length > 0) {
    throw new KafkaError(ErrorCode.INVALID_REQUEST, `${prefix}Cannot update these configs dynamically: Set(${nonDynamic.join(', ')})`);
  }
  for (const [key, value] of entries) {
    try {
      parseConfigValue(configDef(key)!, value);
    } catch (err) {
      if (err instanceof ConfigError) throw new KafkaError(ErrorCode.INVALID_REQUEST, prefix + err.message);
      throw err;
    }
  }
}
