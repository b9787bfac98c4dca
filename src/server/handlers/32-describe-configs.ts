import { DescribeConfigsRequestCodec, DescribeConfigsResponseCodec } from '../../protocol/messages/index.js';
import type { DescribeConfigsResource, DescribeConfigsResourceResult } from '../../protocol/messages/32-describe-configs.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { Input } from '../../protocol/primitives/index.js';
import { errorOutcome, type ConfigEntry } from '../admin/index.js';
import { configResourceDenial, describeConfigsChecks } from './config-resources.js';
import { defineHandler } from './types.js';
import { mapInSlices } from '../../common/slices.js';

function toWire(e: ConfigEntry, synonyms: boolean, documentation: boolean): Input<DescribeConfigsResourceResult> {
  return {
    name: e.name,
    value: e.value,
    readOnly: e.readOnly,
    isDefault: e.isDefault,
    configSource: e.source,
    isSensitive: e.sensitive,
    synonyms: synonyms ? e.synonyms : [],
    configType: e.configType,
    documentation: documentation ? e.documentation : null,
  };
}

export const describeConfigsHandler = defineHandler({
  apiKey: 32,
  request: DescribeConfigsRequestCodec,
  response: DescribeConfigsResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  slicedField: 'results',
  // Per resource (config-resources.ts).
  authorize: { resources: describeConfigsChecks },
  async handle(req, ctx) {
    const { admin } = ctx.services;
    // A resource named twice is described once (issue 21: broker "0" named 10,000 times was a
    // 240 MB answer), as Kafka 2.x did by reading the resources into a map: the last entry's
    // keys count, at the place the resource was first named.
    const unique = new Map<string, DescribeConfigsResource>();
    for (const r of req.resources) {
      unique.set(`${r.resourceType}:${r.resourceName}`, r); // a later entry keeps the first one's place
    }
    const results = await mapInSlices([...unique.values()], (r) => {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      const denied = configResourceDenial(ctx, describeConfigsChecks, r);
      if (denied !== ErrorCode.NONE) return { ...base, errorCode: denied, errorMessage: null, configs: [] };
      try {
        const entries = admin.configs.describe(r.resourceType, r.resourceName, r.configurationKeys);
        return {
          ...base,
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          configs: entries.map((e) => toWire(e, req.includeSynonyms, req.includeDocumentation)),
        };
      } catch (err) {
        return { ...base, ...errorOutcome(err), configs: [] };
      }
    });
    return { throttleTimeMs: 0, results };
  },
});
