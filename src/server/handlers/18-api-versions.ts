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
  handle(_req, ctx) {
    return {
      errorCode: 0,
      apiKeys: apiVersionsList(ctx.services),
      throttleTimeMs: 0,
      finalizedFeaturesEpoch: -1n,
    };
  },
});
