/**
 * The handler table: every API Fjord serves, with its version range. ApiVersions is derived
 * from this list, so adding a handler here is what advertises it.
 */
import type { ApiHandler } from './types.js';
import { metadataHandler } from './03-metadata.js';
import { apiVersionsHandler } from './18-api-versions.js';
import { describeClusterHandler } from './60-describe-cluster.js';

export const ALL_HANDLERS: readonly ApiHandler[] = [
  metadataHandler,
  apiVersionsHandler,
  describeClusterHandler,
];

export function handlerTable(handlers: readonly ApiHandler[] = ALL_HANDLERS): Map<number, ApiHandler> {
  const table = new Map<number, ApiHandler>();
  for (const h of handlers) {
    if (table.has(h.apiKey)) throw new Error(`two handlers for API key ${h.apiKey}`);
    table.set(h.apiKey, h);
  }
  return table;
}
