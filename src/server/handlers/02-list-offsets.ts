/**
 * ListOffsets v0-v10: latest (-1: the high watermark, or the last stable offset for
 * read_committed; the log end for replicas), earliest (-2, and -4 earliest-local), max
 * timestamp (-3, v7+), and real timestamps through the time index. v0 answers with Kafka's
 * old list of offsets; v4+ carries the leader epoch of the offset found. The partitions' owners
 * answer (replication/shards/partition-answers.ts: Kafka's Partition.fetchOffsetForTimestamp).
 */
import { ListOffsetsRequestCodec, ListOffsetsResponseCodec } from '../../protocol/messages/index.js';
import type { ListOffsetsPartitionResponse } from '../../protocol/messages/02-list-offsets.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { Input } from '../../protocol/primitives/index.js';
import type { ListOffsetsPart } from '../../replication/shards/partition-shards.js';
import { shardsOf } from '../broker-services.js';
import { defineHandler } from './types.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { LoopSlicer, mapInSlices } from '../../common/slices.js';

/** Kafka's check: DESCRIBE on each topic. */
const may = resourceChecks({ describeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE } });

export const LATEST_TIMESTAMP = -1n;
export const EARLIEST_TIMESTAMP = -2n;
export const MAX_TIMESTAMP = -3n;
export const EARLIEST_LOCAL_TIMESTAMP = -4n;
export const LATEST_TIERED_TIMESTAMP = -5n;

export const listOffsetsHandler = defineHandler({
  apiKey: 2,
  request: ListOffsetsRequestCodec,
  response: ListOffsetsResponseCodec,
  minVersion: 0,
  maxVersion: 10,
  slicedField: 'topics',
  authorize: { resources: may },
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    const fail = (partitionIndex: number, errorCode: number): Input<ListOffsetsPartitionResponse> => ({
      partitionIndex,
      errorCode,
      oldStyleOffsets: [],
      timestamp: -1n,
      offset: -1n,
      leaderEpoch: -1,
    });
    // One request to the partitions' owners for every partition the ACLs let through.
    const parts: ListOffsetsPart[] = [];
    const allowed = req.topics.map((t) => may.describeTopic.allows(ctx, t.name));
    for (let ti = 0; ti < req.topics.length; ti++) {
      if (!allowed[ti]) continue;
      const t = req.topics[ti]!;
      for (const rp of t.partitions)
        parts.push({ topic: t.name, partition: rp.partitionIndex, timestamp: rp.timestamp, currentLeaderEpoch: version >= 4 ? rp.currentLeaderEpoch : -1 });
    }
    const results = await shardsOf(ctx.services).listOffsets(parts, {
      isolationCommitted: version >= 2 && req.isolationLevel === 1,
      fromReplica: req.replicaId >= 0,
    });
    // Assembled in slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    let next = 0;
    const topics = [];
    for (let ti = 0; ti < req.topics.length; ti++) {
      const t = req.topics[ti]!;
      const partitions = await mapInSlices(
        t.partitions,
        (rp): Input<ListOffsetsPartitionResponse> => {
          if (!allowed[ti]) return fail(rp.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          const r = results[next++]!;
          if (r.errorCode !== ErrorCode.NONE) return fail(rp.partitionIndex, r.errorCode);
          if (version === 0) {
            const offsets = r.found && rp.maxNumOffsets > 0 ? [BigInt(r.offset)] : [];
            return { partitionIndex: rp.partitionIndex, errorCode: ErrorCode.NONE, oldStyleOffsets: offsets };
          }
          if (!r.found) return fail(rp.partitionIndex, ErrorCode.NONE);
          return {
            partitionIndex: rp.partitionIndex,
            errorCode: ErrorCode.NONE,
            timestamp: BigInt(r.timestamp),
            offset: BigInt(r.offset),
            leaderEpoch: r.leaderEpoch,
          };
        },
        slicer,
      );
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
});
