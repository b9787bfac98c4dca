/**
 * AlterClientQuotas v0-v1 (KIP-546): set or remove quota configs of user / client-id entities,
 * each entry on its own; validate_only checks without storing. Changes reach every broker (the
 * store announces them) and running connections at their next request.
 */
import { AlterClientQuotasRequestCodec, AlterClientQuotasResponseCodec } from '../../protocol/messages/index.js';
import { alterClientQuotas } from '../quotas/client-quota-admin.js';
import { defineHandler } from './types.js';
import { AclOperation } from './authz.js';
import { ErrorCode } from '../../protocol/errors.js';

export const alterClientQuotasHandler = defineHandler({
  apiKey: 49,
  request: AlterClientQuotasRequestCodec,
  response: AlterClientQuotasResponseCodec,
  minVersion: 0,
  maxVersion: 1,
  // As Kafka: ALTER_CONFIGS on the cluster, refused per entry.
  authorize: {
    cluster: AclOperation.ALTER_CONFIGS,
    denied: (req) => ({
      throttleTimeMs: 0,
      entries: req.entries.map((e) => ({
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: null,
        entity: e.entity.map((c) => ({ entityType: c.entityType, entityName: c.entityName })),
      })),
    }),
  },
  async handle(req, ctx) {
    const entries = await alterClientQuotas(ctx.services.clientEntities, req.entries, req.validateOnly);
    return { throttleTimeMs: 0, entries };
  },
});
