/**
 * DescribeClientQuotas v0-v1 (KIP-546): the quota configs of the user / client-id entities a
 * filter matches (src/server/quotas/client-quota-admin.ts has Kafka's matching and validation).
 */
import { DescribeClientQuotasRequestCodec, DescribeClientQuotasResponseCodec } from '../../protocol/messages/index.js';
import { describeClientQuotas } from '../quotas/client-quota-admin.js';
import { defineHandler } from './types.js';
import { AclOperation } from './authz.js';
import { ErrorCode } from '../../protocol/errors.js';

export const describeClientQuotasHandler = defineHandler({
  apiKey: 48,
  request: DescribeClientQuotasRequestCodec,
  response: DescribeClientQuotasResponseCodec,
  minVersion: 0,
  maxVersion: 1,
  // As Kafka: DESCRIBE_CONFIGS on the cluster.
  authorize: {
    cluster: AclOperation.DESCRIBE_CONFIGS,
    denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, entries: null }),
  },
  handle(req, ctx) {
    const r = describeClientQuotas(ctx.services.clientEntities, req.components, req.strict);
    return { throttleTimeMs: 0, errorCode: r.errorCode, errorMessage: r.errorMessage, entries: r.entries };
  },
});
