/**
 * UpdateFeatures (key 57, KIP-584, kafka-features.sh upgrade/downgrade/disable): changes the
 * cluster's finalized feature levels, as Kafka 3.9's ZooKeeper-mode broker serves it: ALTER on
 * the CLUSTER (CLUSTER_AUTHORIZATION_FAILED), answered by the active controller only (others:
 * NOT_CONTROLLER; a single broker is its own controller), each update checked as Kafka's
 * controller checks it (server/admin/feature-admin.ts). Versions 0-1 answer per feature, valid
 * ones applied; version 2 (results no longer carried) applies all or nothing and answers the
 * first refusal as the top-level error. validateOnly (v1+, kafka-features.sh --dry-run) checks
 * without writing.
 */
import { UpdateFeaturesRequestCodec, UpdateFeaturesResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { UpgradeType } from '../admin/index.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';

export const updateFeaturesHandler = defineHandler({
  apiKey: 57,
  request: UpdateFeaturesRequestCodec,
  response: UpdateFeaturesResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  authorize: {
    cluster: AclOperation.ALTER,
    denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', results: [] }),
  },
  async handle(req, ctx) {
    const top = (errorCode: number, errorMessage: string | null) => ({ throttleTimeMs: 0, errorCode, errorMessage, results: [] });
    if (ctx.services.isActiveController && !ctx.services.isActiveController()) {
      return top(ErrorCode.NOT_CONTROLLER, 'This is not the correct controller for this cluster.');
    }
    const items = req.featureUpdates.map((u) => ({
      feature: u.feature,
      maxVersionLevel: u.maxVersionLevel,
      upgradeType: ctx.header.apiVersion === 0 ? (u.allowDowngrade ? UpgradeType.SAFE_DOWNGRADE : UpgradeType.UPGRADE) : u.upgradeType,
    }));
    const features = ctx.services.admin.features;
    if (ctx.header.apiVersion >= 2) {
      const checked = await features.update(items, true);
      const refused = checked.find((r) => r.errorCode !== ErrorCode.NONE);
      if (refused) return top(refused.errorCode, refused.errorMessage);
      if (req.validateOnly) return top(ErrorCode.NONE, null);
      const applied = (await features.update(items, false)).find((r) => r.errorCode !== ErrorCode.NONE);
      return applied ? top(applied.errorCode, applied.errorMessage) : top(ErrorCode.NONE, null);
    }
    const results = await features.update(items, ctx.header.apiVersion >= 1 && req.validateOnly);
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
  },
});
