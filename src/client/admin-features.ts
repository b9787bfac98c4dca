/**
 * Feature flags as Kafka's Admin.describeFeatures / updateFeatures (KIP-584): the supported and
 * finalized features from ApiVersions v3+ of any broker, and UpdateFeatures sent to the
 * controller (again after a metadata refresh when the broker answers NOT_CONTROLLER). Each
 * update's outcome is null (done) or the broker's error; an answer without per-feature results
 * (UpdateFeatures v2, or a top-level error) gives every feature the top-level outcome, as
 * Kafka's client does.
 */
import { Api } from './apis.js';
import type { Cluster } from './cluster.js';
import { KafkaError } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';

export interface FeatureMetadata {
  supported: Map<string, { min: number; max: number }>;
  finalized: Map<string, number>;
  /** null when the broker reports none (-1: feature versioning not enabled). */
  epoch: bigint | null;
}

export interface FeatureUpdate {
  level: number;
  /** 1 upgrade, 2 safe downgrade, 3 unsafe downgrade (Kafka's FeatureUpdate.UpgradeType). */
  upgradeType: 1 | 2 | 3;
}

export async function describeFeatures(cluster: Cluster): Promise<FeatureMetadata> {
  const conn = await cluster.anyConnection();
  const r = await conn.send(Api.ApiVersions, { clientSoftwareName: 'fjord-admin', clientSoftwareVersion: '1' });
  if (r.errorCode !== ErrorCode.NONE) throw new KafkaError(r.errorCode);
  return {
    supported: new Map(r.supportedFeatures.map((f) => [f.name, { min: f.minVersion, max: f.maxVersion }])),
    finalized: new Map(r.finalizedFeatures.map((f) => [f.name, f.maxVersionLevel])),
    epoch: r.finalizedFeaturesEpoch >= 0n ? r.finalizedFeaturesEpoch : null,
  };
}

export async function updateFeatures(
  cluster: Cluster,
  updates: ReadonlyMap<string, FeatureUpdate>,
  opts: { validateOnly?: boolean; timeoutMs?: number } = {},
): Promise<Map<string, KafkaError | null>> {
  const request = {
    timeoutMs: opts.timeoutMs ?? cluster.requestTimeoutMs,
    featureUpdates: [...updates].map(([feature, u]) => ({
      feature,
      maxVersionLevel: u.level,
      upgradeType: u.upgradeType,
      allowDowngrade: u.upgradeType !== 1,
    })),
    validateOnly: opts.validateOnly ?? false,
  };
  let r = await (await cluster.controllerConnection()).send(Api.UpdateFeatures, request);
  if (r.errorCode === ErrorCode.NOT_CONTROLLER) {
    cluster.invalidate();
    await cluster.refreshMetadata();
    r = await (await cluster.controllerConnection()).send(Api.UpdateFeatures, request);
  }
  const top = r.errorCode === ErrorCode.NONE ? null : new KafkaError(r.errorCode, r.errorMessage ?? undefined);
  const out = new Map<string, KafkaError | null>();
  const byFeature = new Map(r.results.map((x) => [x.feature, x]));
  for (const feature of updates.keys()) {
    const x = byFeature.get(feature);
    if (top !== null || x === undefined) out.set(feature, top);
    else out.set(feature, x.errorCode === ErrorCode.NONE ? null : new KafkaError(x.errorCode, x.errorMessage ?? undefined));
  }
  return out;
}
