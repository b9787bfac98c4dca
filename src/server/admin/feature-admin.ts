/**
 * Feature flags (KIP-584): what this broker supports, what the cluster has finalized (the
 * FeatureStore), and UpdateFeatures' checks as Kafka 3.9's ZooKeeper-mode controller makes them
 * (KafkaController.validateFeatureUpdate): per feature, INVALID_REQUEST with Kafka's messages,
 * the valid ones written together in one conditional write of the finalized levels.
 *
 * What Fjord supports: no feature, as a Kafka 3.9 ZooKeeper-mode broker advertises none.
 * metadata.version and kraft.version are KRaft's; transaction.version 1-2 (KIP-890 part 2's
 * records and EndTxn epoch bump) is not implemented; and KIP-848's consumer protocol, which
 * Kafka 4 gates on group.version 1 (a KRaft feature), is served here whenever
 * `group.coordinator.rebalance.protocols` lists `consumer` (docs/consumer-groups.md), as
 * clients choose it by the ConsumerGroupHeartbeat API's presence in ApiVersions, not by the
 * feature. So ApiVersions lists no feature, the finalized set starts empty at epoch 0, and every
 * upgrade is refused "not supported". The table is a constructor argument so tests can run the
 * checks and the persistence against a feature, as Kafka's own tests do.
 */
import type { FeatureStore, FinalizedFeatures } from '../../metadata/feature-store.js';
import { FeatureEpochMovedError } from '../../metadata/feature-store.js';
import { ErrorCode } from '../../protocol/errors.js';

/** Kafka's FeatureUpdate.UpgradeType codes (UpdateFeatures v1+; v0's allowDowngrade maps to 1 or 2). */
export const UpgradeType = { UPGRADE: 1, SAFE_DOWNGRADE: 2, UNSAFE_DOWNGRADE: 3 } as const;

export interface SupportedRange {
  min: number;
  max: number;
}

/** What Fjord implements: no feature flag (see the header). */
export const FJORD_SUPPORTED_FEATURES: ReadonlyMap<string, SupportedRange> = new Map();

export interface FeatureUpdateItem {
  feature: string;
  maxVersionLevel: number;
  upgradeType: number;
}

export interface FeatureUpdateResult {
  feature: string;
  errorCode: number;
  errorMessage: string | null;
}

type Checked = { ok: true; level: number | null } | { ok: false; message: string };

const refuse = (message: string): Checked => ({ ok: false, message });

export class FeatureAdmin {
  constructor(
    private readonly store: FeatureStore,
    readonly supported: ReadonlyMap<string, SupportedRange> = FJORD_SUPPORTED_FEATURES,
  ) {}

  /** The finalized levels and their epoch, as ApiVersions reports them. */
  finalized(): FinalizedFeatures {
    return this.store.current();
  }

  /**
   * Checks every update against the finalized levels read once; unless `validateOnly`, writes
   * the valid ones in one conditional write (retried on a concurrent change, then checked again).
   */
  async update(items: readonly FeatureUpdateItem[], validateOnly: boolean): Promise<FeatureUpdateResult[]> {
    for (let attempt = 0; ; attempt++) {
      const current = this.store.current();
      const next = new Map(current.levels);
      const results: FeatureUpdateResult[] = [];
      for (const item of items) {
        const checked = this.check(item, current.levels.get(item.feature));
        if (!checked.ok) {
          results.push({ feature: item.feature, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: checked.message });
          continue;
        }
        if (checked.level === null) next.delete(item.feature);
        else next.set(item.feature, checked.level);
        results.push({ feature: item.feature, errorCode: ErrorCode.NONE, errorMessage: null });
      }
      const changed = results.some((r) => r.errorCode === ErrorCode.NONE);
      if (validateOnly || !changed) return results;
      try {
        await this.store.replace(next, current.epoch);
        return results;
      } catch (err) {
        if (!(err instanceof FeatureEpochMovedError) || attempt >= 2) {
          const message = `Failed to update the finalized features: ${(err as Error).message}`;
          return results.map((r) => (r.errorCode === ErrorCode.NONE ? { ...r, errorCode: ErrorCode.FEATURE_UPDATE_FAILED, errorMessage: message } : r));
        }
      }
    }
  }

  /** Kafka's ZooKeeper-mode checks of one update: the new level (null: delete) or the refusal. */
  private check(item: FeatureUpdateItem, existing: number | undefined): Checked {
    const { feature, maxVersionLevel: level, upgradeType } = item;
    if (feature === '') return refuse('Feature name can not be empty.');
    if (upgradeType !== UpgradeType.UPGRADE && upgradeType !== UpgradeType.SAFE_DOWNGRADE && upgradeType !== UpgradeType.UNSAFE_DOWNGRADE) {
      return refuse('Received unknown upgrade type.');
    }
    const downgrade = upgradeType !== UpgradeType.UPGRADE;
    if (level < 1 && downgrade) {
      if (existing === undefined) return refuse('Can not delete non-existing finalized feature.');
      return { ok: true, level: null };
    }
    if (level < 1) return refuse(`Can not provide versionLevel: ${level} less than 1 without setting the SAFE downgradeType in the request.`);
    if (existing !== undefined) {
      if (level === existing) {
        return refuse(`Can not ${downgrade ? 'downgrade' : 'upgrade'} a finalized feature from existing versionLevel:${existing} to the same value.`);
      }
      if (level < existing && !downgrade) {
        return refuse(
          `Can not downgrade finalized feature from existing versionLevel:${existing} to provided versionLevel:${level} without setting the downgradeType to SAFE in the request.`,
        );
      }
      if (level > existing && downgrade) {
        return refuse(
          `When the downgradeType is set to SAFE in the request, the provided versionLevel:${level} can not be greater than existing versionLevel:${existing}.`,
        );
      }
    }
    const range = this.supported.get(feature);
    if (range === undefined || level < range.min || level > range.max) {
      return refuse('Could not apply finalized feature update because the provided feature is not supported.');
    }
    return { ok: true, level };
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
