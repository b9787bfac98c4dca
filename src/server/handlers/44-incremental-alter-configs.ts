import { IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { errorOutcome } from '../admin/index.js';
import { countResources } from './33-alter-configs.js';
import { defineHandler } from './types.js';

export const incrementalAlterConfigsHandler = defineHandler({
  apiKey: 44,
  request: IncrementalAlterConfigsRequestCodec,
  response: IncrementalAlterConfigsResponseCodec,
  minVersion: 0,
  maxVersion: 1,
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
        const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
        await admin.configs.incrementalAlter(r.resourceType, r.resourceName, ops, req.validateOnly);
        responses.push({ ...base, errorCode: ErrorCode.NONE, errorMessage: null });
      } catch (err) {
        responses.push({ ...base, ...errorOutcome(err) });
      }
    }
    return { throttleTimeMs: 0, responses };
  },
});
