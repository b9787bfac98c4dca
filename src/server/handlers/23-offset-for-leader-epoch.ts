/**
 * OffsetForLeaderEpoch v0-v4: for each partition, the end offset of the requested leader epoch
 * (the start of the next known epoch, or the log end for the latest) from the leader-epoch
 * cache the storage keeps. Unknown epochs answer UNDEFINED (-1, -1) without an error, as Kafka.
 * The partitions' owners answer (replication/shards/partition-answers.ts).
 */
import { OffsetForLeaderEpochRequestCodec, OffsetForLeaderEpochResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { EpochEndPart } from '../../replication/shards/partition-shards.js';
import { shardsOf } from '../broker-services.js';
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
    const version = ctx.header.apiVersion;
    // ACLs: followers (replica id >= 0, v3+) need CLUSTER_ACTION, consumers DESCRIBE on the topic.
    const clusterDenied = req.replicaId >= 0 && !may.replicate.allows(ctx, CLUSTER_NAME);
    const denied = req.topics.map((t) => clusterDenied || (req.replicaId < 0 && !may.describeTopic.allows(ctx, t.topic)));
    const deniedCode = clusterDenied ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    // One request to the partitions' owners for every partition the ACLs let through.
    const parts: EpochEndPart[] = [];
    for (let ti = 0; ti < req.topics.length; ti++) {
      if (denied[ti]) continue;
      const t = req.topics[ti]!;
      for (const rp of t.partitions)
        parts.push({ topic: t.topic, partition: rp.partition, currentLeaderEpoch: version >= 2 ? rp.currentLeaderEpoch : -1, leaderEpoch: rp.leaderEpoch });
    }
    const results = await shardsOf(ctx.services).offsetsForLeaderEpoch(parts, req.replicaId >= 0);
    // Assembled in slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    let next = 0;
    const topics = [];
    for (let ti = 0; ti < req.topics.length; ti++) {
      const t = req.topics[ti]!;
      topics.push({
        topic: t.topic,
        partitions: await mapInSlices(
          t.partitions,
          (rp) => {
            const r = denied[ti] ? { errorCode: deniedCode, leaderEpoch: -1, endOffset: -1 } : results[next++]!;
            return { errorCode: r.errorCode, partition: rp.partition, leaderEpoch: r.leaderEpoch, endOffset: BigInt(r.endOffset) };
          },
          slicer,
        ),
      });
    }
    return { throttleTimeMs: 0, topics };
  },
});
