/**
 * PartitionShards.partitionStates on the partitions' owner: each hosted Partition read into a
 * plain PartitionState (partition-shards.ts), in slices so that a scrape of 10,000 partitions
 * does not hold the owner's event loop.
 */
import { mapInSlices, LoopSlicer } from '../../common/slices.js';
import type { Partition } from '../partition/partition.js';
import type { PartitionState, PartitionStatesOptions, TopicPartitionRef } from './partition-shards.js';

/** What partitionStates reads of the ReplicaManager. */
export interface HostedPartitions {
  getPartition(topic: string, partition: number): Partition | undefined;
  hostedPartitions(): IterableIterator<Partition>;
}

export function stateOf(p: Partition, opts: PartitionStatesOptions): PartitionState {
  const log = p.log;
  const state: PartitionState = {
    topic: p.topic,
    partition: p.partition,
    leader: p.isLeader,
    leaderEpoch: p.leaderEpoch,
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    highWatermark: p.highWatermark,
    lastStableOffset: p.lastStableOffset,
    sizeBytes: log.size,
    segmentCount: log.segments.length,
    replicas: [...p.replicas],
    isr: [...p.isr],
    reassigning: p.reassigning,
    fetchWaiters: p.waiters.size,
    logDir: log.dir,
    offline: log.offline,
  };
  // A copy: the caller may be on this thread (shard 0, N = 1) and must not hold the live config.
  if (opts.config) state.config = { ...log.config, cleanupPolicy: [...log.config.cleanupPolicy] };
  return state;
}

/** The states of `filter`'s hosted partitions in its order, or of every hosted partition. */
export async function partitionStatesOf(
  hosted: HostedPartitions,
  filter: readonly TopicPartitionRef[] | undefined,
  opts: PartitionStatesOptions = {},
): Promise<PartitionState[]> {
  const partitions = filter
    ? filter.map((ref) => hosted.getPartition(ref.topic, ref.partition)).filter((p): p is Partition => p !== undefined)
    : [...hosted.hostedPartitions()];
  return mapInSlices(partitions, (p) => stateOf(p, opts), new LoopSlicer());
}
