/**
 * DescribeProducers v0 (KIP-664): the producers a partition's leader tracks, with their epoch,
 * last sequence and timestamp, the coordinator epoch of their last marker and where their open
 * transaction began (-1 for none). kafka-transactions.sh describe-producers and find-hanging use
 * it to find transactions left open.
 */
import { DescribeProducersRequestCodec, DescribeProducersResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
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
    const rm = ctx.services.replicaManager;
    // In slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    const topics = [];
    for (const t of req.topics) {
      topics.push({
        name: t.name,
        partitions: await mapInSlices(
          t.partitionIndexes,
          (partitionIndex) => {
            if (!may.readTopic.allows(ctx, t.name))
              return { partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, activeProducers: [] };
            const found = rm.lookup(t.name, partitionIndex);
            if (!found.partition) return { partitionIndex, errorCode: found.errorCode, errorMessage: null, activeProducers: [] };
            const activeProducers = [...found.partition.producers.producers.values()].map((e) => ({
              producerId: e.producerId,
              producerEpoch: e.epoch,
              lastSequence: e.batches.at(-1)?.lastSeq ?? -1,
              lastTimestamp: BigInt(e.lastTimestamp),
              coordinatorEpoch: e.coordinatorEpoch,
              currentTxnStartOffset: BigInt(e.currentTxnFirstOffset),
            }));
            return { partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers };
          },
          slicer,
        ),
      });
      await slicer.maybePause();
    }
    return { throttleTimeMs: 0, topics };
  },
});
