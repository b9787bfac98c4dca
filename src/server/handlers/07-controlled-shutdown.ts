/**
 * ControlledShutdown (key 7): a broker about to stop asks the controller to move leadership off
 * it; the answer lists the partitions it still leads (it retries until none). Served by the
 * controller (services.controller); any other broker in cluster mode answers NOT_CONTROLLER, as
 * Kafka. In embedded mode the one broker is the whole cluster: nothing can move, and Kafka's
 * answer for single-replica partitions is "none remaining", so that is what it gets.
 * Versions: v0 has no brokerEpoch (-1: not checked), v2 adds it, v3 is flexible.
 */
import { ControlledShutdownRequestCodec, ControlledShutdownResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';

export const controlledShutdownHandler = defineHandler({
  apiKey: 7,
  request: ControlledShutdownRequestCodec,
  response: ControlledShutdownResponseCodec,
  // v0 uses a non-standard request header (no client id) in Kafka; it is not served.
  minVersion: 1,
  maxVersion: 3,
  // Sent by brokers.
  authorize: { cluster: AclOperation.CLUSTER_ACTION, denied: () => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, remainingPartitions: [] }) },
  async handle(req, ctx) {
    const { services } = ctx;
    const brokerEpoch = ctx.header.apiVersion >= 2 ? req.brokerEpoch : -1n;
    if (services.config.zookeeperConnect === null) {
      const known = req.brokerId === services.config.brokerId;
      return { errorCode: known ? ErrorCode.NONE : ErrorCode.BROKER_NOT_AVAILABLE, remainingPartitions: [] };
    }
    const controller = services.controller;
    if (!controller?.isActive) return { errorCode: ErrorCode.NOT_CONTROLLER, remainingPartitions: [] };
    try {
      const remaining = await controller.controlledShutdown(req.brokerId, brokerEpoch);
      return { errorCode: ErrorCode.NONE, remainingPartitions: remaining.map((tp) => ({ topicName: tp.topic, partitionIndex: tp.partition })) };
    } catch (err) {
      return { errorCode: err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR, remainingPartitions: [] };
    }
  },
});
