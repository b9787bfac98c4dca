/**
 * PartitionShards as Fjord runs today: one shard, the ReplicaManager in the same thread
 * (docs/threads.md step 0: the seam without threads). Each call walks its parts in the caller's
 * order and answers in that order; the produce and fetch paths add nothing per record (one
 * array per request). Long requests (100,000 partitions) are walked in slices, as the handlers
 * did before.
 */
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { ErrorCode } from '../../protocol/errors.js';
import { allInSlices, LoopSlicer, mapInSlices } from '../../common/slices.js';
import type { ReplicaManager } from '../replica-manager.js';
import type { AppendOutcome } from '../append/leader-appends.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../fetch/fetch-reader.js';
import type { LogDirState } from '../../storage/manager/log-manager.js';
import { partitionStatesOf } from './partition-states.js';
import { activeProducersOf, deleteRecordsOn, epochEndOf, listOffsetsOf, type LeaderLookup } from './partition-answers.js';
import {
  shardOf,
  type DeleteRecordsPart,
  type DeleteRecordsResult,
  type DescribeProducersResult,
  type EpochEndPart,
  type EpochEndResult,
  type ListOffsetsOptions,
  type ListOffsetsPart,
  type ListOffsetsResult,
  type LogManagerStats,
  type PartitionShards,
  type PartitionState,
  type PartitionStatesOptions,
  type ProduceOptions,
  type ProducePart,
  type TopicPartitionRef,
  type TxnGuardPart,
  type TxnGuardState,
  type TxnMarkerPart,
} from './partition-shards.js';

/** What the in-thread shard uses of the ReplicaManager. */
export type InThreadReplicas = Pick<
  ReplicaManager,
  'appendRecords' | 'appendTxnMarker' | 'fetch' | 'lookup' | 'getPartition' | 'hostedPartitions' | 'logManager' | 'txnGuards'
> &
  Partial<Pick<ReplicaManager, 'replicationBytesIn' | 'replicaFetchers'>>;

export class InThreadShards implements PartitionShards {
  readonly count = 1;
  private readonly leaderLookup: LeaderLookup;

  constructor(
    private readonly rm: InThreadReplicas,
    private readonly metadata: Pick<MetadataStore, 'topic' | 'brokers'>,
  ) {
    this.leaderLookup = (t, p) => rm.lookup(t, p);
  }

  shardOf(topic: string, partition: number): number {
    return shardOf(topic, partition, this.count);
  }

  /**
   * Calls ReplicaManager.appendRecords for every part before returning: each call takes its
   * partition's arrival turn synchronously (leader-appends.ts), which is the ordering contract of
   * PartitionShards.produce. No object per part unless it carries a KIP-890 verification.
   */
  produce(parts: readonly ProducePart[], req: ProduceOptions): Promise<AppendOutcome[]> {
    const appending = new Array<Promise<AppendOutcome>>(parts.length);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      appending[i] = this.rm.appendRecords(part.topic, part.partition, part.records, part.verifiedTxn ? { ...req, verifiedTxn: part.verifiedTxn } : req);
    }
    return Promise.all(appending);
  }

  fetch(targets: readonly FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]> {
    return this.rm.fetch(targets, params);
  }

  listOffsets(parts: readonly ListOffsetsPart[], opts: ListOffsetsOptions): Promise<ListOffsetsResult[]> {
    return allInSlices(parts, (part) => listOffsetsOf(this.leaderLookup, part, opts), new LoopSlicer());
  }

  offsetsForLeaderEpoch(parts: readonly EpochEndPart[], fromReplica: boolean): Promise<EpochEndResult[]> {
    return mapInSlices(parts, (part) => epochEndOf(this.leaderLookup, part, fromReplica), new LoopSlicer());
  }

  deleteRecords(parts: readonly DeleteRecordsPart[], timeoutMs: number): Promise<DeleteRecordsResult[]> {
    return deleteRecordsOn((t, p) => this.rm.getPartition(t, p), this.metadata, parts, timeoutMs, new LoopSlicer());
  }

  /** Each marker is appended in arrival order with produces (appendTxnMarker takes its turn synchronously). */
  writeTxnMarkers(parts: readonly TxnMarkerPart[]): Promise<number[]> {
    return allInSlices(parts, (part) => this.rm.appendTxnMarker(part.topic, part.partition, part.marker), new LoopSlicer());
  }

  describeProducers(parts: readonly TopicPartitionRef[]): Promise<DescribeProducersResult[]> {
    return mapInSlices(
      parts,
      (part) => {
        const { partition: p, errorCode } = this.rm.lookup(part.topic, part.partition);
        return p ? { errorCode: ErrorCode.NONE, activeProducers: activeProducersOf(p) } : { errorCode, activeProducers: [] };
      },
      new LoopSlicer(),
    );
  }

  txnGuardStates(parts: readonly TxnGuardPart[]): Promise<TxnGuardState[]> {
    const guards = this.rm.txnGuards;
    return Promise.resolve(
      parts.map(({ topic, partition, producer }) => {
        const p = this.rm.getPartition(topic, partition);
        if (!p?.isLeader) return { leader: false, held: false, leaderEpoch: -1 };
        if (guards.holds(p, producer)) return { leader: true, held: true, leaderEpoch: p.leaderEpoch };
        if (!guards.openInLog(p, producer)) return { leader: true, held: false, leaderEpoch: p.leaderEpoch };
        guards.grant(p, producer, p.leaderEpoch);
        return { leader: true, held: true, leaderEpoch: p.leaderEpoch };
      }),
    );
  }

  grantTxnGuards(parts: readonly (TxnGuardPart & { leaderEpoch: number })[]): Promise<number[]> {
    return Promise.resolve(
      parts.map(({ topic, partition, producer, leaderEpoch }) => {
        const p = this.rm.getPartition(topic, partition);
        if (!p) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
        this.rm.txnGuards.grant(p, producer, leaderEpoch);
        return ErrorCode.NONE;
      }),
    );
  }

  async logDirs(): Promise<LogDirState[]> {
    return this.rm.logManager.logDirsState();
  }

  partitionStates(filter?: readonly TopicPartitionRef[], opts?: PartitionStatesOptions): Promise<PartitionState[]> {
    return partitionStatesOf(this.rm, filter, opts);
  }

  /** A copy of the buckets: on shard 0 the answer stays on this thread, and a scrape must not hold the live histogram. */
  logManagerStats(): Promise<LogManagerStats[]> {
    const lm = this.rm.logManager;
    const f = lm.flushStats;
    const fetchers = this.rm.replicaFetchers;
    // Cluster mode's followers (a shard without fetchers says nothing: embedded mode never follows).
    const replication = fetchers
      ? { bytesIn: this.rm.replicationBytesIn ?? 0, maxLag: fetchers.maxLag, failedPartitions: fetchers.failedPartitionsCount }
      : undefined;
    return Promise.resolve([
      { flush: { count: f.count, sumMs: f.sumMs, buckets: f.buckets.slice() }, dirs: lm.logDirsOnline(), ...(replication ? { replication } : {}) },
    ]);
  }
}

const made = new WeakMap<InThreadReplicas, InThreadShards>();

/**
 * The in-thread shards over `rm`, made once per ReplicaManager: for callers that hold a
 * ReplicaManager but were given no PartitionShards (partial services built by tests).
 */
export function inThreadShardsOf(rm: InThreadReplicas, metadata: Pick<MetadataStore, 'topic' | 'brokers'>): InThreadShards {
  let shards = made.get(rm);
  if (!shards) made.set(rm, (shards = new InThreadShards(rm, metadata)));
  return shards;
}
