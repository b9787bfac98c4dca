/**
 * The replica fetchers of this broker (Kafka's ReplicaFetcherManager / AbstractFetcherManager):
 * one fetcher per (leader broker, fetcher index), `num.replica.fetchers` indexes per leader, a
 * partition's index as Kafka's getFetcherId (abs(31 * topic.hashCode + partition) % n). A fetcher
 * with no partitions left is shut down. Cluster mode only: ReplicaManager loads this module
 * dynamically, so embedded mode never does.
 */
import type { Logger } from 'pino';
import { tpKey } from '../../common/partition-keys.js';
import type { Partition } from '../partition/partition.js';
import { RemoteLeaderEndpoint } from './remote-leader.js';
import { ReplicaFetcher } from './replica-fetcher.js';
import type { InterBrokerInterceptor } from '../../client/inter-broker-interceptor.js';
import type { FetcherConfig, FollowerReplica, InitialFetchState, LeaderEndpoint, ReplicationTraffic } from './types.js';
import type { ClientSecurity } from '../../security/client-security.js';

export interface ReplicaFetcherManagerOptions {
  config: FetcherConfig;
  logger: Logger;
  /** The inter-broker endpoint of a live broker, from the metadata image. */
  endpointOf: (brokerId: number) => { host: string; port: number } | undefined;
  /** Tests: a leader other than the wire one. */
  createLeader?: (leaderId: number, fetcherId: number) => LeaderEndpoint;
  /** Test seam on the wire leader's sends (see InterBrokerInterceptor). */
  interceptor?: InterBrokerInterceptor;
  /** TLS (and SASL) of the inter-broker listener, as a client. */
  security?: ClientSecurity;
}

/** Java's String.hashCode. */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's AbstractFetcherManager.getFetcherId. */
export function fetcherIdFor(topic: string, partition: number, numFetchers: number): number {
  const h = (Math.imul(31, javaHash(topic)) + partition) | 0;
  // Kafka's Utils.abs maps Integer.MIN_VALUE to 0.
  const abs = h === -2147483648 ? 0 : Math.abs(h);
  return abs % Math.max(1, numFetchers);
}

/** A Partition as the fetcher sees it. */
export function followerReplicaOf(p: Partition): FollowerReplica {
  return {
    get topic() {
      return p.topic;
    },
    get partition() {
      return p.partition;
    },
    get logStartOffset() {
      return p.logStartOffset;
    },
    get logEndOffset() {
      return p.logEndOffset;
    },
    get highWatermark() {
      return p.highWatermark;
    },
    get offline() {
      return p.log.offline;
    },
    latestEpoch: () => p.log.epochs.latestEpoch(),
    endOffsetForEpoch: (epoch) => {
      const r = p.log.epochs.endOffsetFor(epoch, p.log.logEndOffset);
      return r.epoch < 0 ? undefined : r;
    },
    appendAsFollower: (records) => p.appendAsFollower(records),
    truncateTo: (offset) => p.truncateTo(offset),
    truncateFullyAndStartAt: (offset) => p.truncateFullyAndStartAt(offset),
    setFollowerHighWatermark: (hw) => p.setFollowerHighWatermark(hw),
    followLeaderLogStartOffset: (offset) => p.followLeaderLogStartOffset(offset),
  };
}

export class ReplicaFetcherManager {
  private readonly fetchers = new Map<string, ReplicaFetcher>();
  /** partition key -> the fetcher it is on. */
  private readonly owners = new Map<string, ReplicaFetcher>();
  private stopped = false;
  /** Shared by every fetcher: it outlives the fetchers that come and go. */
  readonly traffic: ReplicationTraffic = { bytesIn: 0 };

  constructor(private readonly opts: ReplicaFetcherManagerOptions) {}

  fetcherId(topic: string, partition: number): number {
    return fetcherIdFor(topic, partition, this.opts.config.numFetchers);
  }

  /** Whether the partition is being fetched (false once it failed, until it is added again). */
  isFetching(topic: string, partition: number): boolean {
    const key = tpKey(topic, partition);
    return this.owners.get(key)?.has(key) ?? false;
  }

  /**
   * Partitions followed here whose local log refuses writes (a full disk): out of the ISR until
   * appends succeed again (a gauge for the metrics to come).
   */
  get blockedPartitionsCount(): number {
    let n = 0;
    for (const f of this.fetchers.values()) n += f.blockedPartitionsCount;
    return n;
  }

  /** The largest lag in records of a partition followed here (Kafka's MaxLag). */
  get maxLag(): number {
    let max = 0;
    for (const f of this.fetchers.values()) max = Math.max(max, f.maxLag);
    return max;
  }

  /** Partitions given up until their next LeaderAndIsr (Kafka's FailedPartitionsCount). */
  get failedPartitionsCount(): number {
    let n = 0;
    for (const f of this.fetchers.values()) n += f.failed.size;
    return n;
  }

  /** The fetchers by "leaderId:fetcherId" (tests, diagnostics). */
  allFetchers(): ReadonlyMap<string, ReplicaFetcher> {
    return this.fetchers;
  }

  fetcherOf(topic: string, partition: number): ReplicaFetcher | undefined {
    return this.owners.get(tpKey(topic, partition));
  }

  /** Starts fetching each partition from its leader (moving it off another leader's fetcher first). */
  async addFetcherForPartitions(states: readonly InitialFetchState[]): Promise<void> {
    if (this.stopped) return;
    const moving = states.filter((s) => {
      const owner = this.owners.get(tpKey(s.replica.topic, s.replica.partition));
      return owner && owner.leader.leaderId !== s.leaderId;
    });
    if (moving.length > 0) await this.removeFetcherForPartitions(moving.map((s) => tpKey(s.replica.topic, s.replica.partition)));
    const byFetcher = new Map<ReplicaFetcher, InitialFetchState[]>();
    for (const s of states) {
      const f = this.fetcherFor(s.leaderId, this.fetcherId(s.replica.topic, s.replica.partition));
      let list = byFetcher.get(f);
      if (!list) byFetcher.set(f, (list = []));
      list.push(s);
      this.owners.set(tpKey(s.replica.topic, s.replica.partition), f);
    }
    for (const [f, list] of byFetcher) f.addPartitions(list);
  }

  /** Stops fetching; resolves once no append or truncation of those partitions is in progress. */
  async removeFetcherForPartitions(keys: Iterable<string>): Promise<void> {
    const byFetcher = new Map<ReplicaFetcher, string[]>();
    for (const key of keys) {
      const f = this.owners.get(key);
      if (!f) continue;
      this.owners.delete(key);
      let list = byFetcher.get(f);
      if (!list) byFetcher.set(f, (list = []));
      list.push(key);
    }
    await Promise.all([...byFetcher].map(([f, list]) => f.removePartitions(list)));
    await this.shutdownIdleFetchers();
  }

  /** Fetchers with no partition left (failed ones included) are stopped, as Kafka's shutdownIdleFetcherThreads. */
  async shutdownIdleFetchers(): Promise<void> {
    const idle: ReplicaFetcher[] = [];
    for (const [id, f] of this.fetchers) {
      if (f.partitionCount > 0 || [...this.owners.values()].includes(f)) continue;
      this.fetchers.delete(id);
      idle.push(f);
    }
    await Promise.all(idle.map((f) => f.shutdown()));
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    const all = [...this.fetchers.values()];
    this.fetchers.clear();
    this.owners.clear();
    await Promise.all(all.map((f) => f.shutdown()));
  }

  private fetcherFor(leaderId: number, fetcherId: number): ReplicaFetcher {
    const id = `${leaderId}:${fetcherId}`;
    let f = this.fetchers.get(id);
    if (!f) {
      const cfg = this.opts.config;
      const leader =
        this.opts.createLeader?.(leaderId, fetcherId) ??
        new RemoteLeaderEndpoint({
          brokerId: cfg.brokerId,
          leaderId,
          endpointOf: this.opts.endpointOf,
          socketTimeoutMs: cfg.socketTimeoutMs,
          clientId: `broker-${cfg.brokerId}-fetcher-${fetcherId}`,
          ...(this.opts.security ? { security: this.opts.security } : {}),
          ...(this.opts.interceptor ? { interceptor: this.opts.interceptor } : {}),
        });
      f = new ReplicaFetcher(leader, fetcherId, cfg, this.opts.logger.child({ fetcher: `ReplicaFetcher-${fetcherId}-${leaderId}` }), Date.now, this.traffic);
      this.fetchers.set(id, f);
      f.start();
    }
    return f;
  }
}
