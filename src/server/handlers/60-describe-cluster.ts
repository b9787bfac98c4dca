import { DescribeClusterRequestCodec, DescribeClusterResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from './types.js';
import { ResourceType, authorizedOperations } from './authz.js';
import { CLUSTER_NAME } from '../../security/authorizer/acl-model.js';

const ENDPOINT_TYPE_BROKER = 1;

export const describeClusterHandler = defineHandler({
  apiKey: 60,
  request: DescribeClusterRequestCodec,
  response: DescribeClusterResponseCodec,
  minVersion: 0,
  maxVersion: 1,
  authorize: { ownWay: 'answered to anyone, as Kafka; it reports the operations the principal may make on the cluster' },
  handle(req, ctx) {
    const { metadata } = ctx.services;
    if (req.endpointType !== ENDPOINT_TYPE_BROKER) {
      return {
        errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: 'Fjord serves broker endpoints only',
        endpointType: req.endpointType,
        clusterId: metadata.clusterId,
      };
    }
    const listener = ctx.connection.listenerName;
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      endpointType: ENDPOINT_TYPE_BROKER,
      clusterId: metadata.clusterId,
      controllerId: metadata.controllerId(),
      brokers: metadata.brokers().flatMap((b) => {
        const ep = ctx.services.endpointFor(b.id, listener);
        return ep ? [{ brokerId: b.id, host: ep.host, port: ep.port, rack: b.rack }] : [];
      }),
      clusterAuthorizedOperations: authorizedOperations(ctx, ResourceType.CLUSTER, CLUSTER_NAME, req.includeClusterAuthorizedOperations),
    };
  },
});
