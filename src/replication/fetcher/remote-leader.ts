/**
 * The leader over the wire (Kafka's RemoteLeaderEndPoint): one connection to the leader's
 * inter-broker listener, looked up in the metadata image whenever it (re)connects, so a leader
 * that restarted on another port is found again. Fetch uses the highest version both sides speak
 * (v13+ address topics by id; a partition whose topic id is unknown makes the request v12), with
 * replica_id (v0-14) and replica_state (v15+) set to this broker, sessionless (epoch -1), as a
 * full fetch each time. A failed request closes the connection; the fetcher reconnects after
 * its backoff.
 */
import { Connection } from '../../client/connection.js';
import { Api, type ApiDef } from '../../client/apis.js';
import { KafkaError } from '../../client/errors.js';
import * as m from '../../protocol/messages/index.js';
import type { FetchRequest, FetchTopic } from '../../protocol/messages/01-fetch.js';
import type { OffsetForLeaderTopic } from '../../protocol/messages/23-offset-for-leader-epoch.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import { errorName } from '../../protocol/errors.js';
import { tpKey } from '../../storage/checkpoints.js';
import type { EpochEndOffsetResult, FetchParams, LeaderEndpoint, ReplicaFetchData, ReplicaFetchPartition } from './types.js';

export const REPLICA_FETCH: ApiDef<m.FetchRequest, m.FetchResponse> = {
  apiKey: 1, name: 'Fetch', request: m.FetchRequestCodec, response: m.FetchResponseCodec, clientMax: m.FetchRequestCodec.maxVersion,
};
export const OFFSET_FOR_LEADER_EPOCH: ApiDef<m.OffsetForLeaderEpochRequest, m.OffsetForLeaderEpochResponse> = {
  apiKey: 23, name: 'OffsetForLeaderEpoch', request: m.OffsetForLeaderEpochRequestCodec, response: m.OffsetForLeaderEpochResponseCodec, clientMax: m.OffsetForLeaderEpochRequestCodec.maxVersion,
};

/** First Fetch version with diverging_epoch / last_fetched_epoch (KIP-320 truncation on fetch). */
export const TRUNCATION_ON_FETCH_VERSION = 12;
const FIRST_TOPIC_ID_VERSION = 13;
const EMPTY = Buffer.alloc(0);

export interface RemoteLeaderOptions {
  /** This broker: the replica id of its fetches. */
  brokerId: number;
  leaderId: number;
  /** The leader's inter-broker endpoint, from the metadata image; undefined when it is not live. */
  endpointOf: (brokerId: number) => { host: string; port: number } | undefined;
  socketTimeoutMs: number;
  clientId: string;
  /** Caps the Fetch version (tests of the OffsetForLeaderEpoch path against a new leader). */
  maxFetchVersion?: number;
}

export class RemoteLeaderEndpoint implements LeaderEndpoint {
  private conn: Connection | undefined;
  private connecting: Promise<Connection> | undefined;
  private closed = false;

  constructor(private readonly opts: RemoteLeaderOptions) {}

  get leaderId(): number {
    return this.opts.leaderId;
  }

  async connect(): Promise<{ truncationOnFetch: boolean }> {
    const c = await this.connection();
    return { truncationOnFetch: this.fetchVersion(c) >= TRUNCATION_ON_FETCH_VERSION };
  }

  private connection(): Promise<Connection> {
    if (this.closed) return Promise.reject(new Error('the replica fetcher is shutting down'));
    if (this.conn && !this.conn.isClosed) return Promise.resolve(this.conn);
    if (!this.connecting) {
      const attempt = this.open();
      this.connecting = attempt;
      // Cleared once settled (also when open() fails before its first await: the failure is not
      // cached, the next round tries again).
      const clear = (): void => {
        if (this.connecting === attempt) this.connecting = undefined;
      };
      attempt.then(clear, clear);
    }
    return this.connecting;
  }

  private async open(): Promise<Connection> {
    const ep = this.opts.endpointOf(this.opts.leaderId);
    if (!ep) throw new Error(`leader ${this.opts.leaderId} is not live (no inter-broker endpoint known)`);
    const c = await Connection.connect(ep.host, ep.port, {
      clientId: this.opts.clientId,
      connectTimeoutMs: this.opts.socketTimeoutMs,
      requestTimeoutMs: this.opts.socketTimeoutMs,
    });
    if (this.closed) {
      c.close();
      throw new Error('the replica fetcher is shutting down');
    }
    this.conn = c;
    return c;
  }

  private fetchVersion(c: Connection): number {
    const v = c.versionFor(REPLICA_FETCH as ApiDef<unknown, unknown>);
    if (v === null) throw new Error(`leader ${this.opts.leaderId} serves no Fetch version this broker speaks`);
    return Math.min(v, this.opts.maxFetchVersion ?? v);
  }

  /** Sends on the current connection; any failure closes it (the next round reconnects). */
  private async call<T>(run: (c: Connection) => Promise<T>): Promise<T> {
    const c = await this.connection();
    try {
      return await run(c);
    } catch (err) {
      if (!(err instanceof KafkaError)) {
        c.close();
        if (this.conn === c) this.conn = undefined;
      }
      throw err;
    }
  }

  fetch(partitions: readonly ReplicaFetchPartition[], params: FetchParams): Promise<Map<string, ReplicaFetchData>> {
    return this.call(async (c) => {
      let version = this.fetchVersion(c);
      if (version >= FIRST_TOPIC_ID_VERSION && partitions.some((p) => !p.topicId || p.topicId === ZERO_UUID)) version = FIRST_TOPIC_ID_VERSION - 1;
      const useIds = version >= FIRST_TOPIC_ID_VERSION;
      const topics = new Map<string, Input<FetchTopic> & { partitions: Input<m.FetchRequest['topics'][number]['partitions'][number]>[] }>();
      const nameOfId = new Map<string, string>();
      for (const p of partitions) {
        let t = topics.get(p.topic);
        if (!t) topics.set(p.topic, (t = { topic: p.topic, topicId: useIds ? p.topicId : ZERO_UUID, partitions: [] }));
        if (useIds) nameOfId.set(p.topicId, p.topic);
        t.partitions.push({
          partition: p.partition,
          currentLeaderEpoch: p.currentLeaderEpoch,
          fetchOffset: BigInt(p.fetchOffset),
          lastFetchedEpoch: p.lastFetchedEpoch,
          logStartOffset: BigInt(p.logStartOffset),
          partitionMaxBytes: p.maxBytes,
        });
      }
      const request: Input<FetchRequest> = {
        replicaId: this.opts.brokerId,
        replicaState: { replicaId: this.opts.brokerId, replicaEpoch: -1n },
        maxWaitMs: params.maxWaitMs,
        minBytes: params.minBytes,
        maxBytes: params.maxBytes,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [...topics.values()],
        forgottenTopicsData: [],
        rackId: '',
      };
      const resp = await c.send(REPLICA_FETCH, request, { version, timeoutMs: this.opts.socketTimeoutMs + params.maxWaitMs });
      if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, `replica fetch refused by leader ${this.opts.leaderId}: ${errorName(resp.errorCode)}`);
      const out = new Map<string, ReplicaFetchData>();
      for (const t of resp.responses) {
        const topic = useIds ? nameOfId.get(t.topicId) : t.topic;
        if (topic === undefined) continue;
        for (const p of t.partitions) {
          const div = p.divergingEpoch;
          out.set(tpKey(topic, p.partitionIndex), {
            errorCode: p.errorCode,
            highWatermark: Number(p.highWatermark),
            logStartOffset: Number(p.logStartOffset),
            divergingEpoch: version >= TRUNCATION_ON_FETCH_VERSION && (div.epoch >= 0 || div.endOffset >= 0n) ? { epoch: div.epoch, endOffset: Number(div.endOffset) } : undefined,
            records: p.records ?? EMPTY,
          });
        }
      }
      return out;
    });
  }

  fetchEpochEndOffsets(partitions: readonly { topic: string; partition: number; currentLeaderEpoch: number; leaderEpoch: number }[]): Promise<Map<string, EpochEndOffsetResult>> {
    return this.call(async (c) => {
      const topics = new Map<string, Input<OffsetForLeaderTopic> & { partitions: { partition: number; currentLeaderEpoch: number; leaderEpoch: number }[] }>();
      for (const p of partitions) {
        let t = topics.get(p.topic);
        if (!t) topics.set(p.topic, (t = { topic: p.topic, partitions: [] }));
        t.partitions.push({ partition: p.partition, currentLeaderEpoch: p.currentLeaderEpoch, leaderEpoch: p.leaderEpoch });
      }
      const resp = await c.send(OFFSET_FOR_LEADER_EPOCH, { replicaId: this.opts.brokerId, topics: [...topics.values()] });
      const out = new Map<string, EpochEndOffsetResult>();
      for (const t of resp.topics) {
        for (const p of t.partitions) out.set(tpKey(t.topic, p.partition), { errorCode: p.errorCode, leaderEpoch: p.leaderEpoch, endOffset: Number(p.endOffset) });
      }
      return out;
    });
  }

  fetchOffset(topic: string, partition: number, currentLeaderEpoch: number, which: 'earliest' | 'latest'): Promise<number> {
    return this.call(async (c) => {
      const resp = await c.send(Api.ListOffsets, {
        replicaId: this.opts.brokerId,
        isolationLevel: 0,
        timeoutMs: this.opts.socketTimeoutMs,
        topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch, timestamp: which === 'latest' ? -1n : -2n, maxNumOffsets: 1 }] }],
      });
      const p = resp.topics.find((t) => t.name === topic)?.partitions.find((x) => x.partitionIndex === partition);
      if (!p) throw new Error(`leader ${this.opts.leaderId} did not answer ListOffsets for ${topic}-${partition}`);
      if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `ListOffsets ${which} of ${topic}-${partition}: ${errorName(p.errorCode)}`);
      // v0 answers a list of offsets; later versions one.
      const offset = p.oldStyleOffsets.length > 0 ? p.oldStyleOffsets[0]! : p.offset;
      return Number(offset);
    });
  }

  close(): void {
    this.closed = true;
    this.conn?.close();
    this.conn = undefined;
  }
}
