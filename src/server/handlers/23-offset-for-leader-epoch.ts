/**
 * OffsetForLeaderEpoch v0-v4: for each partition, the end offset of the requested leader epoch
 * (the start of the next known epoch, or the log end for the latest) from the leader-epoch
 * cache the storage keeps. Unknown epochs answer UNDEFINED (-1, -1) without an error, as Kafka.
 */
import { OffsetForLeaderEpochRequestCodec, OffsetForLeaderEpochResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { leaderEpochError } from '../../replication/fetch/fetch-reader.js';
import { AclOperation, CLUSTER_NAME, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { LoopSlicer, mapInSlices } from '../../common/slices.js';

/** Kafka's checks: followers (replica id >= 0, v3+) need CLUSTER_ACTION, consumers DESCRIBE on the topic. */
const may = resourceChecks({
  replicate: { resource: ResourceType.CLUSTER, operation: AclOperation.CLUSTER_ACTION },
  describeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE },
});

export const offsetForLeaderEpochHandler = defineHandler({
  apiKey: 23,
  request: OffsetForLeaderEpochRequestCodec,
  response: OffsetForLeaderEpochResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  slicedField: 'topics',
  // Per partition: the follower's refusal is CLUSTER_AUTHORIZATION_FAILED on each.
  authorize: { resources: may },
  async handle(req, ctx) {
    const rm = ctx.services.replicaManager;
    const version = ctx.header.apiVersion;
    // ACLs: followers (replica id >= 0, v3+) need CLUSTER_ACTION, consumers DESCRIBE on the topic.
    const clusterDenied = req.replicaId >= 0 && !may.replicate.allows(ctx, CLUSTER_NAME);
    const denied = (topic: string): boolean => clusterDenied || (req.replicaId < 0 && !may.describeTopic.allows(ctx, topic));
    // In slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    const topics = [];
    for (const t of req.topics) {
      topics.push({
        topic: t.topic,
        partitions: await mapInSlices(
          t.partitions,
          (rp) => {
            const fail = (errorCode: number) => ({ errorCode, partition: rp.partition, leaderEpoch: -1, endOffset: -1n });
            if (denied(t.topic)) return fail(clusterDenied ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : ErrorCode.TOPIC_AUTHORIZATION_FAILED);
            const { partition: p, errorCode } = rm.lookup(t.topic, rp.partition);
            if (!p) return fail(errorCode);
            const epochErr = version >= 2 ? leaderEpochError(rp.currentLeaderEpoch, p.leaderEpoch) : ErrorCode.NONE;
            if (epochErr !== ErrorCode.NONE) return fail(epochErr);
            const res = p.endOffsetForEpoch(rp.leaderEpoch);
            // Consumers (validating their position) never learn offsets beyond the high watermark.
            const endOffset = req.replicaId < 0 && res.endOffset > p.highWatermark ? p.highWatermark : res.endOffset;
            return { errorCode: ErrorCode.NONE, partition: rp.partition, leaderEpoch: res.epoch, endOffset: BigInt(endOffset) };
          },
          slicer,
        ),
      });
      await slicer.maybePause();
    }
    return { throttleTimeMs: 0, topics };
  },
});
