import { ApiVersionsRequestCodec, ApiVersionsResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';
import type { BrokerServices } from '../broker-services.js';

/** The versions we serve, straight from the handler table: we advertise only what is built. */
export function apiVersionsList(services: BrokerServices): { apiKey: number; minVersion: number; maxVersion: number }[] {
  return [...services.handlers.values()]
    .sort((a, b) => a.apiKey - b.apiKey)
    .map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }));
}

export const apiVersionsHandler = defineHandler({
  apiKey: 18,
  request: ApiVersionsRequestCodec,
  response: ApiVersionsResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  // Every client asks it first, before it may know what it is allowed (as Kafka).
  authorize: { none: 'the versions served are no secret: every client asks them first' },
  handle(req, ctx) {
    // Kept for KIP-714's match selectors (server/telemetry); v3+ only, older versions send ''.
    if (req.clientSoftwareName !== '') {
      ctx.connection.clientSoftwareName = req.clientSoftwareName;
      ctx.connection.clientSoftwareVersion = req.clientSoftwareVersion;
    }
    const features = ctx.services.admin.features;
    const finalized = features.finalized();
    return {
      errorCode: 0,
      apiKeys: apiVersionsList(ctx.services),
      throttleTimeMs: 0,
      // KIP-584's tagged fields (v3+): what this broker supports (Fjord: nothing, as a Kafka 3.9
      // ZooKeeper-mode broker; server/admin/feature-admin.ts) and what the cluster finalized.
      supportedFeatures: [...features.supported].map(([name, r]) => ({ name, minVersion: r.min, maxVersion: r.max })),
      finalizedFeaturesEpoch: BigInt(finalized.epoch),
      finalizedFeatures: [...finalized.levels].map(([name, level]) => ({ name, minVersionLevel: level, maxVersionLevel: level })),
    };
  },
});
