/**
 * The background half of the consumer-lag metrics: what a scrape cannot read from memory here.
 * Every `metrics.consumer.lag.refresh.ms` (the next refresh is timed from the end of the last, so
 * two never overlap) it collects the committed offsets of the groups coordinated here (and, on the
 * active controller, reads Kafka 0.8's ZooKeeper-stored groups: zk-groups.ts) and:
 *  - asks each other leader for the log end offsets of the partitions those groups committed on
 *    (partitions led here are read live at scrape time, not here);
 *  - finds the timestamp of the record at each committed offset behind its end: partitions led
 *    here by reading the log, others by a small Fetch to their leader.
 * Timestamps are kept per (partition, offset): a record's timestamp does not change, so a group
 * that has not moved costs nothing the next time; entries no group points at any more go. At most
 * MAX_LOOKUPS timestamps are looked up per refresh (the rest the next time), so the work of one
 * refresh is bounded whatever the number of groups. A leader that does not answer keeps its
 * partitions' previous end offsets for up to STALE_REFRESHES intervals, then they are dropped
 * (their lag series disappear rather than freeze). Nothing here runs in the scrape path but
 * `workerEnds`.
 * With shard workers (num.io.threads > 1) the partitions of user topics are led here but live on
 * other threads: their high watermarks are asked of their shards (`workerEnds`, one message per
 * shard; the scrape asks too, so lag stays live), and their record timestamps are read by a Fetch
 * through the seam, one partition's offsets per round as for a remote leader.
 */
import type { Logger } from 'pino';
import type { MetadataStore } from '../../../metadata/metadata-store.js';
import { messageOf } from '../../../common/errors.js';
import { ErrorCode } from '../../../protocol/errors.js';
import type { GroupCoordinator } from '../../../coordinator/group/group-coordinator.js';
import type { BrokerConnections } from '../../../client/broker-connections.js';
import type { ReplicaManager } from '../../../replication/replica-manager.js';
import type { PartitionShards } from '../../../replication/shards/partition-shards.js';
import { RemoteOffsets, type OffsetAt, type PartitionRef } from './remote-offsets.js';
import { timestampAtOffset } from './record-timestamp.js';
import { readZkGroups, type ZkGroup, type ZkGroupStore } from './zk-groups.js';
import { SCRAPE_SHARD_DEADLINE_MS } from '../scrape-states.js';

/** Timestamps looked up per refresh, here and at other leaders together. */
export const MAX_LOOKUPS = 2000;
/** Refreshes a remote end offset outlives when its leader stops answering. */
const STALE_REFRESHES = 3;
/** What a local read returns from the committed offset: a batch header and, usually, the batch. */
const LOCAL_READ_BYTES = 16 << 10;

export interface LagSources {
  brokerId: number;
  metadata: MetadataStore;
  replicaManager: ReplicaManager;
  /** The partitions' owners: with shard workers (count > 1), the end offsets and timestamps of their partitions are asked through them. */
  shards?: PartitionShards | undefined;
  groupCoordinator: GroupCoordinator;
  /** Cluster mode: connections to the other brokers' inter-broker listener. */
  connections?: BrokerConnections;
  requestTimeoutMs: number;
  logger: Logger;
  /** Cluster mode: Kafka 0.8's ZooKeeper-stored groups, exported by the active controller alone (zk-groups.ts). */
  zkGroups?: ZkGroupStore;
  /** Whether this broker is the active controller (cluster mode; undefined: never exports ZooKeeper groups). */
  isActiveController?: () => boolean;
}

const key = (topic: string, partition: number): string => `${topic}\0${partition}`;

/** No partition on a shard worker (num.io.threads = 1, or none of the groups' partitions). */
const NO_WORKER_ENDS: ReadonlyMap<string, number> = new Map();

/** The largest offset of `known` below `offset` (a partition has one entry per group at most). */
function nearestBelow(known: ReadonlyMap<number, number>, offset: number): number | undefined {
  let best: number | undefined;
  for (const o of known.keys()) if (o < offset && (best === undefined || o > best)) best = o;
  return best;
}

export class LagRefresh {
  /** Log end offsets of partitions led elsewhere, with when they were learnt. */
  private readonly remoteEnds = new Map<string, { end: number; at: number }>();
  /** Timestamps of the records at committed offsets: partition key -> offset -> ms. */
  private timestampsByPartition = new Map<string, Map<number, number>>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly remote: RemoteOffsets | undefined;
  /** The ZooKeeper-stored groups as the last refresh read them (none unless this broker is the active controller). */
  private zkGroups: ZkGroup[] = [];

  constructor(
    private readonly src: LagSources,
    private readonly intervalMs: number,
  ) {
    if (src.connections) this.remote = new RemoteOffsets(src.connections, Math.min(src.requestTimeoutMs, Math.max(1000, intervalMs)));
  }

  start(): void {
    this.schedule(0);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.refresh().finally(() => this.schedule(this.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  /** Runs one refresh (or joins the one running); never rejects. */
  refresh(): Promise<void> {
    this.running ??= this.refreshOnce()
      .catch((err: unknown) => this.src.logger.warn({ err: messageOf(err) }, 'consumer lag refresh failed'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * The log end offset of a partition: live when led here (on this thread, or on a shard worker
   * as `workerEnds` just read it), else as the last refresh learnt it.
   */
  endOffset(topic: string, partition: number, workerEnds: ReadonlyMap<string, number> = NO_WORKER_ENDS): number | undefined {
    const local = this.src.replicaManager.getPartition(topic, partition);
    if (local?.isLeader) return local.highWatermark;
    return workerEnds.get(key(topic, partition)) ?? this.remoteEnds.get(key(topic, partition))?.end;
  }

  /**
   * The high watermarks of the partitions the exported groups committed on that shard workers
   * lead (num.io.threads > 1), asked of them now: one message per shard. Nothing to ask, and no
   * walk of the groups, with one thread.
   */
  async workerEnds(): Promise<ReadonlyMap<string, number>> {
    const shards = this.src.shards;
    if (!shards || shards.count <= 1) return NO_WORKER_ENDS;
    const asked: PartitionRef[] = [];
    const seen = new Set<string>();
    this.forEachGroup((_group, _members, offsets) => {
      for (const [topic, parts] of offsets)
        for (const partition of parts.keys()) {
          const k = key(topic, partition);
          if (shards.shardOf(topic, partition) === 0 || seen.has(k)) continue;
          seen.add(k);
          asked.push({ topic, partition });
        }
    });
    if (asked.length === 0) return NO_WORKER_ENDS;
    const ends = new Map<string, number>();
    for (const s of await shards.partitionStates(asked, { deadlineMs: SCRAPE_SHARD_DEADLINE_MS }))
      if (s.leader) ends.set(key(s.topic, s.partition), s.highWatermark);
    return ends;
  }

  /**
   * The timestamp of the record at `offset`, or, while the refresh has not looked it up yet, of
   * the nearest earlier offset known (an older record: the age is overstated until then, never
   * understated, which is the safe side for an alert).
   */
  timestampAt(topic: string, partition: number, offset: number): number | undefined {
    const known = this.timestampsByPartition.get(key(topic, partition));
    if (!known) return undefined;
    const exact = known.get(offset);
    if (exact !== undefined) return exact;
    const earlier = nearestBelow(known, offset);
    return earlier === undefined ? undefined : known.get(earlier);
  }

  /**
   * Every group exported here with its members and committed offsets: the groups coordinated
   * here, then ZooKeeper's (a ZooKeeper group whose id a coordinated group has too is left out:
   * one series per group id).
   */
  forEachGroup(fn: (groupId: string, members: number, offsets: ReadonlyMap<string, ReadonlyMap<number, { offset: bigint }>>) => void): void {
    if (this.zkGroups.length === 0) {
      this.src.groupCoordinator.forEachGroup(fn);
      return;
    }
    const coordinated = new Set<string>();
    this.src.groupCoordinator.forEachGroup((group, members, offsets) => {
      coordinated.add(group);
      fn(group, members, offsets);
    });
    for (const g of this.zkGroups) if (!coordinated.has(g.group)) fn(g.group, g.members, g.offsets);
  }

  /** Reads ZooKeeper's groups on the active controller; elsewhere (or when the read fails) drops them. */
  private async refreshZkGroups(): Promise<void> {
    const { zkGroups, isActiveController } = this.src;
    if (!zkGroups || !isActiveController?.()) {
      this.zkGroups = [];
      return;
    }
    try {
      this.zkGroups = await readZkGroups(zkGroups);
    } catch (err) {
      this.zkGroups = [];
      this.src.logger.debug({ err: messageOf(err) }, 'consumer lag: cannot read the ZooKeeper consumer groups');
    }
  }

  private leaderOf(topic: string, partition: number): number {
    return this.src.metadata.topic(topic)?.partitions[partition]?.leader ?? -1;
  }

  private async refreshOnce(): Promise<void> {
    const { brokerId, replicaManager } = this.src;
    await this.refreshZkGroups();
    // What the groups exported here point at: partition -> committed offsets.
    const wanted = new Map<string, { ref: PartitionRef; offsets: Set<number> }>();
    this.forEachGroup((_group, _members, offsets) => {
      for (const [topic, parts] of offsets) {
        for (const [partition, committed] of parts) {
          const k = key(topic, partition);
          let w = wanted.get(k);
          if (!w) wanted.set(k, (w = { ref: { topic, partition }, offsets: new Set() }));
          w.offsets.add(Number(committed.offset));
        }
      }
    });
    const remoteByLeader = new Map<number, PartitionRef[]>();
    for (const { ref } of wanted.values()) {
      if (replicaManager.getPartition(ref.topic, ref.partition)?.isLeader) continue;
      const leader = this.leaderOf(ref.topic, ref.partition);
      if (leader < 0 || leader === brokerId || !this.remote) continue;
      const list = remoteByLeader.get(leader);
      if (list) list.push(ref);
      else remoteByLeader.set(leader, [ref]);
    }
    await this.refreshRemoteEnds(remoteByLeader);
    const workerEnds = await this.workerEnds();

    // Keep the timestamps still pointed at; list the ones to look up, within the budget.
    const next = new Map<string, Map<number, number>>();
    const localLookups: OffsetAt[] = [];
    const remoteLookups = new Map<number, OffsetAt[][]>();
    // Lookups on shard workers, by round: a Fetch names a partition once (as for a remote leader).
    const workerLookups: OffsetAt[][] = [];
    let budget = MAX_LOOKUPS;
    for (const [k, { ref, offsets }] of wanted) {
      const before = this.timestampsByPartition.get(k);
      const kept = new Map<number, number>();
      const end = this.endOffset(ref.topic, ref.partition, workerEnds);
      const leader = this.leaderOf(ref.topic, ref.partition);
      let round = 0;
      const onWorker = workerEnds.has(k);
      for (const offset of offsets) {
        const ts = before?.get(offset);
        if (ts !== undefined) {
          kept.set(offset, ts);
          continue;
        }
        // Until it is looked up, the nearest earlier timestamp known stands in (timestampAt).
        const earlier = before ? nearestBelow(before, offset) : undefined;
        if (earlier !== undefined) kept.set(earlier, before!.get(earlier)!);
        if (end !== undefined && offset < end && budget > 0) {
          budget--;
          const at = { ...ref, offset };
          if (replicaManager.getPartition(ref.topic, ref.partition)?.isLeader) localLookups.push(at);
          else if (onWorker) {
            while (workerLookups.length <= round) workerLookups.push([]);
            workerLookups[round++]!.push(at);
          } else if (leader >= 0 && this.remote) this.addRemoteLookup(remoteLookups, leader, round++, at);
        }
      }
      if (kept.size > 0) next.set(k, kept);
    }
    this.timestampsByPartition = next;
    const record = (at: OffsetAt, ts: number): void => {
      const k = key(at.topic, at.partition);
      let m = this.timestampsByPartition.get(k);
      if (!m) this.timestampsByPartition.set(k, (m = new Map()));
      m.set(at.offset, ts);
    };
    await Promise.all([this.lookUpLocal(localLookups, record), this.lookUpOnWorkers(workerLookups, record), this.lookUpRemote(remoteLookups, record)]);
  }

  /** A Fetch names a partition once: a partition's second offset goes into a second round. */
  private addRemoteLookup(byLeader: Map<number, OffsetAt[][]>, leader: number, round: number, at: OffsetAt): void {
    let rounds = byLeader.get(leader);
    if (!rounds) byLeader.set(leader, (rounds = []));
    while (rounds.length <= round) rounds.push([]);
    rounds[round]!.push(at);
  }

  private async refreshRemoteEnds(byLeader: Map<number, PartitionRef[]>): Promise<void> {
    const remote = this.remote;
    const now = Date.now();
    if (remote) {
      await Promise.all(
        [...byLeader].map(([leader, refs]) =>
          remote
            .endOffsets(leader, refs, (ref, end) => this.remoteEnds.set(key(ref.topic, ref.partition), { end, at: now }))
            .catch((err: unknown) => this.src.logger.debug({ brokerId: leader, err: messageOf(err) }, 'consumer lag: cannot list end offsets')),
        ),
      );
    }
    const led = new Set<string>();
    for (const refs of byLeader.values()) for (const r of refs) led.add(key(r.topic, r.partition));
    const staleBefore = now - STALE_REFRESHES * this.intervalMs;
    for (const [k, e] of this.remoteEnds) if (!led.has(k) || e.at < staleBefore) this.remoteEnds.delete(k);
  }

  private async lookUpLocal(lookups: readonly OffsetAt[], record: (at: OffsetAt, ts: number) => void): Promise<void> {
    for (const at of lookups) {
      if (this.closed) return;
      const p = this.src.replicaManager.getPartition(at.topic, at.partition);
      if (!p?.isLeader || at.offset < p.logStartOffset) continue;
      try {
        const { records } = await p.read(at.offset, LOCAL_READ_BYTES, true);
        const ts = await timestampAtOffset(records, at.offset);
        if (ts !== undefined) record(at, ts);
      } catch (err) {
        this.src.logger.debug({ topic: at.topic, partition: at.partition, err: messageOf(err) }, 'consumer lag: cannot read a record timestamp');
      }
    }
  }

  /**
   * Reads the records at the offsets on shard workers, a round at a time, through the seam's
   * Fetch (16 KiB per partition; one message per shard per round). Only a fetch's first batch may
   * exceed its limit, so a partition left empty behind a larger batch is read again on its own.
   */
  private async lookUpOnWorkers(rounds: readonly OffsetAt[][], record: (at: OffsetAt, ts: number) => void): Promise<void> {
    const shards = this.src.shards;
    if (!shards) return;
    const read = (ats: readonly OffsetAt[]) =>
      shards.fetch(
        ats.map((at) => ({ topic: at.topic, partition: at.partition, fetchOffset: at.offset, partitionMaxBytes: LOCAL_READ_BYTES, currentLeaderEpoch: -1 })),
        { maxWaitMs: 0, minBytes: 0, maxBytes: LOCAL_READ_BYTES * ats.length, readCommitted: false, hardMaxBytes: false },
      );
    for (const round of rounds) {
      if (this.closed) return;
      try {
        const results = await read(round);
        for (let i = 0; i < round.length; i++) {
          const at = round[i]!;
          let records = results[i]!.records;
          if (results[i]!.errorCode !== ErrorCode.NONE) continue;
          if (!records || records.length === 0) records = at.offset < results[i]!.highWatermark ? ((await read([at]))[0]!.records ?? null) : null;
          const ts = records ? await timestampAtOffset(records, at.offset) : undefined;
          if (ts !== undefined) record(at, ts);
        }
      } catch (err) {
        this.src.logger.debug({ err: messageOf(err) }, 'consumer lag: cannot read record timestamps on the shard workers');
      }
    }
  }

  private async lookUpRemote(byLeader: Map<number, OffsetAt[][]>, record: (at: OffsetAt, ts: number) => void): Promise<void> {
    const remote = this.remote;
    if (!remote) return;
    await Promise.all(
      [...byLeader].map(async ([leader, rounds]) => {
        try {
          for (const round of rounds) if (!this.closed) await remote.timestamps(leader, round, record);
        } catch (err) {
          this.src.logger.debug({ brokerId: leader, err: messageOf(err) }, 'consumer lag: cannot fetch record timestamps');
        }
      }),
    );
  }
}
