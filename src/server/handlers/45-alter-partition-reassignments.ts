/**
 * AlterPartitionReassignments (key 45, Kafka 2.4+, kafka-reassign-partitions.sh --execute/--cancel):
 * start, change or (replicas null) cancel partition reassignments. Only the controller serves it;
 * any other broker answers NOT_CONTROLLER at the top level so the admin client finds the
 * controller and retries, as a ZooKeeper-mode Kafka broker does. Per-partition errors as Kafka's
 * controller: INVALID_REPLICA_ASSIGNMENT (empty, duplicate, negative ids, or an added replica on a
 * broker that is not live), UNKNOWN_TOPIC_OR_PARTITION, NO_REASSIGNMENT_IN_PROGRESS for a cancel
 * with nothing to cancel. The answer comes once each reassignment has started (not completed).
 * Registered in cluster mode only (it is advertised in ApiVersions only there).
 */
import { AlterPartitionReassignmentsRequestCodec, AlterPartitionReassignmentsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';

const NOT_CONTROLLER_MESSAGE = 'This is not the correct controller for this cluster.';

export const alterPartitionReassignmentsHandler = defineHandler({
  apiKey: 45,
  request: AlterPartitionReassignmentsRequestCodec,
  response: AlterPartitionReassignmentsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  authorize: {
    cluster: AclOperation.ALTER,
    denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', responses: [] }),
  },
  async handle(req, ctx) {
    const controller = ctx.services.controller;
    const topLevel = (errorCode: number, errorMessage: string | null) => ({ throttleTimeMs: 0, errorCode, errorMessage, responses: [] });
    if (!controller?.isActive) return topLevel(ErrorCode.NOT_CONTROLLER, NOT_CONTROLLER_MESSAGE);
    const requested = req.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, replicas: p.replicas })));
    let results;
    try {
      results = await controller.alterPartitionReassignments(requested);
    } catch (err) {
      if (err instanceof KafkaError && err.code === ErrorCode.NOT_CONTROLLER) return topLevel(ErrorCode.NOT_CONTROLLER, NOT_CONTROLLER_MESSAGE);
      throw err;
    }
    const byTopic = new Map<string, { partitionIndex: number; errorCode: number; errorMessage: string | null }[]>();
    for (const t of req.topics) {
      const list = byTopic.get(t.name) ?? byTopic.set(t.name, []).get(t.name)!;
      for (const p of t.partitions) {
        if (list.some((x) => x.partitionIndex === p.partitionIndex)) continue;
        const r = results.get(`${t.name}-${p.partitionIndex}`) ?? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, message: null };
        list.push({ partitionIndex: p.partitionIndex, errorCode: r.errorCode, errorMessage: r.message });
      }
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses: [...byTopic].map(([name, partitions]) => ({ name, partitions })) };
  },
});
