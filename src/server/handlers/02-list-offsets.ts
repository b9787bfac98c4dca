/**
 * ListOffsets v0-v10: latest (-1: the high watermark, or the last stable offset for
 * read_committed; the log end for replicas), earliest (-2, and -4 earliest-local), max
 * timestamp (-3, v7+), and real timestamps through the time index. v0 answers with Kafka's
 * old list of offsets; v4+ carries the leader epoch of the offset found.
 */
import { ListOffsetsRequestCodec, ListOffsetsResponseCodec } from '../../protocol/messages/index.js';
import type { ListOffsetsPartitionResponse } from '../../protocol/messages/02-list-offsets.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { Input } from '../../protocol/primitives/index.js';
import { errorCodeOf } from '../../replication/errors.js';
import { leaderEpochError } from '../../replication/fetch/fetch-reader.js';
import type { Partition } from '../../replication/partition/partition.js';
import { defineHandler } from './types.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { LoopSlicer, allInSlices } from '../../common/slices.js';

/** Kafka's check: DESCRIBE on each topic. */
const may = resourceChecks({ describeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE } });

export const LATEST_TIMESTAMP = -1n;
export const EARLIEST_TIMESTAMP = -2n;
export const MAX_TIMESTAMP = -3n;
export const EARLIEST_LOCAL_TIMESTAMP = -4n;
export const LATEST_TIERED_TIMESTAMP = -5n;

interface Found {
  offset: number;
  timestamp: number;
}

/**
 * Kafka's Partition.fetchOffsetForTimestamp. A client (not a replica) asking a leader whose high
 * watermark has not reached the start of its epoch (a new leader whose followers have not
 * fetched yet) gets OFFSET_NOT_AVAILABLE (retriable) for the latest offset, and for a timestamp
 * lookup that finds nothing below what it may read; the earliest offset is always known.
 */
async function lookupOffset(p: Partition, timestamp: bigint, isolationCommitted: boolean, fromReplica: boolean): Promise<Found | null | 'NOT_AVAILABLE'> {
  const lastFetchable = fromReplica ? p.logEndOffset : isolationCommitted ? p.lastStableOffset : p.highWatermark;
  const notAvailable = !fromReplica && p.leaderEpochStartOffset > p.highWatermark;
  if (timestamp === LATEST_TIMESTAMP) return notAvailable ? 'NOT_AVAILABLE' : { offset: lastFetchable, timestamp: -1 };
  if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return { offset: p.logStartOffset, timestamp: -1 };
  // No tiered storage: nothing is tiered, Kafka answers "no offset" here.
  if (timestamp === LATEST_TIERED_TIMESTAMP) return null;
  const found = await p.offsetForTimestamp(timestamp === MAX_TIMESTAMP ? 'max' : Number(timestamp));
  // Consumers only see what is below the high watermark (the last stable offset for read_committed).
  if (found && found.offset < lastFetchable) return found;
  return notAvailable ? 'NOT_AVAILABLE' : null;
}

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
    const rm = ctx.services.replicaManager;
    const committed = version >= 2 && req.isolationLevel === 1;
    const fromReplica = req.replicaId >= 0;
    // Started in slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    const topics = await allInSlices(
      req.topics,
      async (t) => ({
        name: t.name,
        partitions: await allInSlices(
          t.partitions,
          async (rp): Promise<Input<ListOffsetsPartitionResponse>> => {
            const fail = (errorCode: number): Input<ListOffsetsPartitionResponse> => ({
              partitionIndex: rp.partitionIndex,
              errorCode,
              oldStyleOffsets: [],
              timestamp: -1n,
              offset: -1n,
              leaderEpoch: -1,
            });
            if (!may.describeTopic.allows(ctx, t.name)) return fail(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
            const { partition: p, errorCode } = rm.lookup(t.name, rp.partitionIndex);
            if (!p) return fail(errorCode);
            const epochErr = version >= 4 ? leaderEpochError(rp.currentLeaderEpoch, p.leaderEpoch) : ErrorCode.NONE;
            if (epochErr !== ErrorCode.NONE) return fail(epochErr);
            let found: Found | null | 'NOT_AVAILABLE';
            try {
              found = await lookupOffset(p, rp.timestamp, committed, fromReplica);
            } catch (err) {
              return fail(errorCodeOf(err));
            }
            if (found === 'NOT_AVAILABLE') return fail(ErrorCode.OFFSET_NOT_AVAILABLE);
            if (version === 0) {
              const offsets = found && rp.maxNumOffsets > 0 ? [BigInt(found.offset)] : [];
              return { partitionIndex: rp.partitionIndex, errorCode: ErrorCode.NONE, oldStyleOffsets: offsets };
            }
            if (!found) return { ...fail(ErrorCode.NONE) };
            const epoch = rp.timestamp === LATEST_TIMESTAMP ? p.leaderEpoch : p.epochAt(found.offset);
            return {
              partitionIndex: rp.partitionIndex,
              errorCode: ErrorCode.NONE,
              timestamp: BigInt(found.timestamp),
              offset: BigInt(found.offset),
              leaderEpoch: epoch,
            };
          },
          slicer,
        ),
      }),
      slicer,
    );
    return { throttleTimeMs: 0, topics };
  },
});
