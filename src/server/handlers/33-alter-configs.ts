import { AlterConfigsRequestCodec, AlterConfigsResponseCodec } from '../../protocol/messages/index.js';
import { alterConfigsChecks, alterEachResource } from './config-resources.js';
import { defineHandler } from './types.js';

export const alterConfigsHandler = defineHandler({
  apiKey: 33,
  request: AlterConfigsRequestCodec,
  response: AlterConfigsResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  slicedField: 'responses',
  // Per resource, in alterEachResource (config-resources.ts).
  authorize: { resources: alterConfigsChecks },
  async handle(req, ctx) {
    const { admin } = ctx.services;
    const responses = await alterEachResource(req.resources, (r) => admin.configs.alter(r.resourceType, r.resourceName, r.configs, req.validateOnly), ctx);
    return { throttleTimeMs: 0, responses };
  },
});
