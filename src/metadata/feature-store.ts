/**
 * Finalized feature levels (KIP-584): the cluster-wide agreement UpdateFeatures changes and
 * ApiVersions reports, with its epoch. Cluster mode keeps it in ZooKeeper's `/feature` (the epoch
 * is the znode's version, zk/zk-feature-store.ts); a single broker keeps it in
 * `fjord-features.json` in the first log dir, rewritten atomically, so a restart keeps the levels.
 * Embedded mode starts as a ZooKeeper-mode Kafka cluster starts: enabled, nothing finalized, epoch 0.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from '../storage/checkpoint/atomic-file.js';

export interface FinalizedFeatures {
  /** -1 while feature versioning is not enabled (no `/feature` znode yet). */
  readonly epoch: number;
  /** feature -> finalized max version level (levels >= 1; a deleted feature is absent). */
  readonly levels: ReadonlyMap<string, number>;
}

export interface FeatureStore {
  /** The agreement as last read or written (served to every ApiVersions: no I/O). */
  current(): FinalizedFeatures;
  /**
   * Replaces the finalized levels if the epoch is still `expectedEpoch`; resolves to the new
   * state. Throws FeatureEpochMovedError when someone else changed them first.
   */
  replace(levels: ReadonlyMap<string, number>, expectedEpoch: number): Promise<FinalizedFeatures>;
  close(): Promise<void>;
}

export class FeatureEpochMovedError extends Error {}

export const FEATURES_FILE = 'fjord-features.json';

interface PersistedFeatures {
  version: 1;
  epoch: number;
  features: Record<string, number>;
}

/** A single broker's finalized features, in a JSON file (memory only when dir is null). */
export class EmbeddedFeatureStore implements FeatureStore {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string | null,
    private state: FinalizedFeatures,
  ) {}

  static async open(dir: string | null): Promise<EmbeddedFeatureStore> {
    const file = dir === null ? null : join(dir, FEATURES_FILE);
    let state: FinalizedFeatures = { epoch: 0, levels: new Map() };
    if (file) {
      try {
        const p = JSON.parse(await readFile(file, 'utf8')) as PersistedFeatures;
        const levels = new Map<string, number>();
        for (const [k, v] of Object.entries(p.features ?? {})) if (Number.isInteger(v)) levels.set(k, v);
        state = { epoch: Number.isInteger(p.epoch) ? p.epoch : 0, levels };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read finalized features ${file}: ${(err as Error).message}`);
      }
    }
    return new EmbeddedFeatureStore(file, state);
  }

  current(): FinalizedFeatures {
    return this.state;
  }

  async replace(levels: ReadonlyMap<string, number>, expectedEpoch: number): Promise<FinalizedFeatures> {
    if (expectedEpoch !== this.state.epoch) throw new FeatureEpochMovedError(`finalized features moved to epoch ${this.state.epoch}`);
    const next: FinalizedFeatures = { epoch: this.state.epoch + 1, levels: new Map(levels) };
    const file = this.file;
    if (file) {
      const text = JSON.stringify({ version: 1, epoch: next.epoch, features: Object.fromEntries(next.levels) } satisfies PersistedFeatures, null, 1);
      // Serialised and atomic: a crash leaves the old or the new agreement, never half of one.
      this.writing = this.writing.then(() => writeFileAtomically(file, text));
      await this.writing;
    }
    this.state = next;
    return next;
  }

  async close(): Promise<void> {
    await this.writing;
  }
}
