/**
 * DescribeProducers v0 (KIP-664): the producers a partition's leader tracks, with their epoch,
 * last sequence and timestamp, the coordinator epoch of their last marker and where their open
 * transaction began (-1 for none). kafka-transactions.sh describe-producers and find-hanging use
 * it to find transactions left open. The partitions' owners list them (replication/shards).
 */
import { DescribeProducersRequestCodec, DescribeProducersResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import type { TopicPartitionRef } from '../../replication/shards/partition-shards.js';
import { shardsOf } from '../broker-services.js';
import { LoopSlicer, mapInSlices } from '../../common/slices.js';

/** Kafka's check: READ on each topic. */
const may = resourceChecks({
  readTopic: { resource: ResourceType.TOPIC, operation: AclOperation.READ },
});

export const describeProducersHandler = defineHandler({
  apiKey: 61,
  request: DescribeProducersRequestCodec,
  response: DescribeProducersResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  slicedField: 'topics',
  authorize: { resources: may },
  async handle(req, ctx) {
    const allowed = req.topics.map((t) => may.readTopic.allows(ctx, t.name));
    // One request to the partitions' owners for every partition the ACLs let through.
    const parts: TopicPartitionRef[] = [];
    for (let ti = 0; ti < req.topics.length; ti++) {
      if (!allowed[ti]) continue;
      const t = req.topics[ti]!;
      for (const partition of t.partitionIndexes) parts.push({ topic: t.name, partition });
    }
    const results = await shardsOf(ctx.services).describeProducers(parts);
    // Assembled in slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    let next = 0;
    const topics = [];
    for (let ti = 0; ti < req.topics.length; ti++) {
      const t = req.topics[ti]!;
      topics.push({
        name: t.name,
        partitions: await mapInSlices(
          t.partitionIndexes,
          (partitionIndex) => {
            if (!allowed[ti]) return { partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, activeProducers: [] };
            const r = results[next++]!;
            const activeProducers = r.activeProducers.map((e) => ({
              producerId: e.producerId,
              producerEpoch: e.producerEpoch,
              lastSequence: e.lastSequence,
              lastTimestamp: BigInt(e.lastTimestamp),
              coordinatorEpoch: e.coordinatorEpoch,
              currentTxnStartOffset: BigInt(e.currentTxnStartOffset),
            }));
            return { partitionIndex, errorCode: r.errorCode, errorMessage: null, activeProducers };
          },
          slicer,
        ),
      });
    }
    return { throttleTimeMs: 0, topics };
  },
});
