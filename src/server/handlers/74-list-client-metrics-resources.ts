/** ListClientMetricsResources v0 (KIP-714): the names of the client-metrics subscriptions. */
import { ListClientMetricsResourcesRequestCodec, ListClientMetricsResourcesResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';

export const listClientMetricsResourcesHandler = defineHandler({
  apiKey: 74,
  request: ListClientMetricsResourcesRequestCodec,
  response: ListClientMetricsResourcesResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  // As Kafka: DESCRIBE on the cluster.
  authorize: {
    cluster: AclOperation.DESCRIBE,
    denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, clientMetricsResources: [] }),
  },
  handle(_req, ctx) {
    const names = ctx.services.telemetry?.resourceNames() ?? [];
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, clientMetricsResources: names.map((name) => ({ name })) };
  },
});
