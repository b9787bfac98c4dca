import { IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec } from '../../protocol/messages/index.js';
import { alterConfigsChecks, alterEachResource } from './config-resources.js';
import { defineHandler } from './types.js';

export const incrementalAlterConfigsHandler = defineHandler({
  apiKey: 44,
  request: IncrementalAlterConfigsRequestCodec,
  response: IncrementalAlterConfigsResponseCodec,
  minVersion: 0,
  maxVersion: 1,
  slicedField: 'responses',
  // Per resource, in alterEachResource (config-resources.ts).
  authorize: { resources: alterConfigsChecks },
  async handle(req, ctx) {
    const { admin } = ctx.services;
    const responses = await alterEachResource(
      req.resources,
      (r) => {
        const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
        return admin.configs.incrementalAlter(r.resourceType, r.resourceName, ops, req.validateOnly);
      },
      ctx,
    );
    return { throttleTimeMs: 0, responses };
  },
});
