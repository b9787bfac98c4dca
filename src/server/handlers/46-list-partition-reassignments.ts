/**
 * ListPartitionReassignments (key 46, Kafka 2.4+, kafka-reassign-partitions.sh --list/--verify):
 * the reassignments in progress (replicas = RS, adding, removing), for the listed partitions or
 * all (topics null). Partitions not being reassigned, or unknown, are left out, as Kafka's
 * controller does. Only the controller serves it; other brokers answer NOT_CONTROLLER.
 * Registered in cluster mode only.
 */
import { ListPartitionReassignmentsRequestCodec, ListPartitionReassignmentsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';

export const listPartitionReassignmentsHandler = defineHandler({
  apiKey: 46,
  request: ListPartitionReassignmentsRequestCodec,
  response: ListPartitionReassignmentsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  authorize: {
    cluster: AclOperation.DESCRIBE,
    denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', topics: [] }),
  },
  async handle(req, ctx) {
    const controller = ctx.services.controller;
    const notController = {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NOT_CONTROLLER,
      errorMessage: 'This is not the correct controller for this cluster.',
      topics: [],
    };
    if (!controller?.isActive) return notController;
    const wanted = req.topics === null ? null : req.topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition })));
    let listed;
    try {
      listed = await controller.listPartitionReassignments(wanted);
    } catch (err) {
      if (err instanceof KafkaError && err.code === ErrorCode.NOT_CONTROLLER) return notController;
      throw err;
    }
    const byTopic = new Map<string, { partitionIndex: number; replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }[]>();
    for (const r of listed) {
      (byTopic.get(r.topic) ?? byTopic.set(r.topic, []).get(r.topic)!).push({
        partitionIndex: r.partition,
        replicas: r.replicas,
        addingReplicas: r.adding,
        removingReplicas: r.removing,
      });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) };
  },
});
