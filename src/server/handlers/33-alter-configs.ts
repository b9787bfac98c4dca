import { AlterConfigsRequestCodec, AlterConfigsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { errorOutcome } from '../admin/index.js';
import { defineHandler } from './types.js';

export const alterConfigsHandler = defineHandler({
  apiKey: 33,
  request: AlterConfigsRequestCodec,
  response: AlterConfigsResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  async handle(req, ctx) {
    const { admin } = ctx.services;
    const seen = countResources(req.resources);
    const responses = [];
    for (const r of req.resources) {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      if (seen.get(`${r.resourceType}:${r.resourceName}`)! > 1) {
        responses.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate resource in request.' });
        continue;
      }
      try {
        await admin.configs.alter(r.resourceType, r.resourceName, r.configs, req.validateOnly);
        responses.push({ ...base, errorCode: ErrorCode.NONE, errorMessage: null });
      } catch (err) {
        responses.push({ ...base, ...errorOutcome(err) });
      }
    }
    return { throttleTimeMs: 0, responses };
  },
});

/** How often each (type, name) resource appears: Kafka refuses duplicates. */
export function countResources(resources: readonly { resourceType: number; resourceName: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of resources) {
    const key = `${r.resourceType}:${r.resourceName}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
