import { DescribeConfigsRequestCodec, DescribeConfigsResponseCodec } from '../../protocol/messages/index.js';
import type { DescribeConfigsResourceResult } from '../../protocol/messages/32-describe-configs.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { Input } from '../../protocol/primitives/index.js';
import { errorOutcome, type ConfigEntry } from '../admin/index.js';
import { AclOperation } from './authz.js';
import { configResourceDenial } from './config-resources.js';
import { defineHandler } from './types.js';

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
  handle(req, ctx) {
    const { admin } = ctx.services;
    const results = req.resources.map((r) => {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      const denied = configResourceDenial(ctx, AclOperation.DESCRIBE_CONFIGS, r);
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
